"""The viewer's pages (FastAPI TestClient): search like the agent, documents, tasks,
replay, hand play saved byte-identical to RecordEpisodes, escaping (bad files: test_viewer_damaged.py)."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from urllib.parse import quote_plus

import gymnasium as gym
import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from stillweb.cli.main import main as cli_main
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs import RecordEpisodes
from stillweb.envs.agents.scripted import write_call
from stillweb.sandboxes import ToolCall, ToolRegistry
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from stillweb.server.viewer.formal_svg import formalization_svg, term_columns
from support.viewer_data import HOSTILE_DOC, HOSTILE_QUESTION, HOSTILE_TASK_ID, hostile_snapshot, record_reference_episode, viewer_snapshot


@pytest.fixture(scope="module")
def viewed(small_snapshot, tmp_path_factory):
    """(client, snapshot path, a task, the episodes directory) of a viewer over the small snapshot."""
    snapshot = viewer_snapshot(small_snapshot, tmp_path_factory.mktemp("viewer"))
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    episodes = tmp_path_factory.mktemp("episodes")
    record_reference_episode(snapshot, "viewer", task, episodes / "reference.jsonl")
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(episodes,))))
    return client, snapshot, task, episodes


def escaped(text: str) -> str:
    """``text`` as the templates escape it."""
    return str(escape(text))


def text_of(page: str) -> str:
    """The visible text of an HTML page, tags removed and entities decoded."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_search_page_shows_the_agent_tools_ranking_and_snippets(viewed):
    client, snapshot, task, _ = viewed
    query = task["evidence"][0]["doc_title"]
    page = client.get("/view/search", params={"q": query, "k": 4})
    assert page.status_code == 200
    expected = ToolRegistry(Snapshot.open(snapshot)).call(ToolCall("search", {"query": query, "k": 4}))
    hits = expected.data["queries"][0]["results"]
    assert len(hits) >= 2
    listed = page.text.split('<ol class="hits">')[1].split("</ol>")[0]
    carried = re.escape(f"?q={quote_plus(query)}&amp;k=4")
    assert re.findall(rf'<a href="/view/doc/(\d+){carried}">', listed) == [str(hit["doc_id"]) for hit in hits]
    unmarked = listed.replace("<mark>", "").replace("</mark>", "")  # query terms are marked (test_viewer_evidence.py)
    for hit in hits:
        assert escaped(hit["snippet"]) in unmarked
    assert escaped(expected.text) in page.text  # "what the agent sees", verbatim
    empty = client.get("/view/search", params={"q": "   "})
    assert empty.status_code == 200 and "hits" not in empty.text.split("<main>")[1].split("</form>")[1]


def test_document_page_has_facts_links_and_follows_redirects(viewed):
    client, snapshot, task, _ = viewed
    opened = Snapshot.open(snapshot)
    evidence = task["evidence"][0]
    page = client.get(f"/view/doc/{evidence['doc_id']}")
    assert page.status_code == 200
    shown = text_of(page.text)
    facts = opened.facts(subject=evidence["doc_id"])
    assert facts and all(fact.relation in shown for fact in facts)
    assert f"Facts ({len(facts)} about it" in shown
    by_title = client.get(f"/view/doc/{evidence['doc_title']}")
    assert by_title.status_code == 200 and f"<h1>{escaped(evidence['doc_title'])}</h1>" in by_title.text
    alias, target = next(iter(sorted(opened.redirects.items())))
    redirected = client.get(f"/view/doc/{alias}")
    assert redirected.status_code == 200 and "Redirected from" in redirected.text
    assert f"<h1>{escaped(opened.title_of(target))}</h1>" in redirected.text
    missing = client.get("/view/doc/No Such Title Anywhere")
    assert missing.status_code == 404 and "has no document" in missing.text


def test_task_list_filters_and_task_page(viewed):
    client, snapshot, task, _ = viewed
    every = [t.to_row() for split in ("train", "dev", "test") for t in read_tasks(snapshot, "viewer", split)]
    listing = client.get("/view/tasks")
    assert listing.status_code == 200 and f"{len(every)} of {len(every)} tasks" in listing.text
    hops = str(task["hops"])
    filtered = client.get("/view/tasks", params={"hops": hops, "split": "train"})
    expected = [t for t in every if str(t["hops"]) == hops and t["split"] == "train"]
    assert f"{len(expected)} of {len(every)} tasks" in filtered.text
    assert sorted(re.findall(r'href="/view/tasks/(sw-[0-9a-f]+)"', filtered.text)) == sorted(t["task_id"] for t in expected)
    page = client.get(f"/view/tasks/{task['task_id']}")
    assert page.status_code == 200
    shown = text_of(page.text)
    assert task["question"] in shown and task["answer"] in shown
    assert all(alias in shown for alias in task["aliases"])
    svg = page.text.split('<div class="graph">')[1].split("</svg>")[0]
    assert all(escaped(relation) in svg for _, relation, _ in task["formalization"])
    for fact in task["evidence"]:
        assert f'<a href="/view/doc/{fact["doc_id"]}">{escaped(fact["doc_title"])}</a>' in page.text
    calls = page.text.split('<ol class="calls">')[1].split("</ol>")[0]
    assert "<b>search</b>" in calls and "<b>find</b>" in calls and "<b>answer</b>" in calls
    assert client.get("/view/tasks/sw-nope").status_code == 404


def test_doc_references_link_to_their_pages_and_the_rest_is_escaped():
    from stillweb.server.viewer.pages import link_docs

    assert str(link_docs("<i>[doc 7]</i> [doc x]")) == '&lt;i&gt;<a href="/view/doc/7">[doc 7]</a>&lt;/i&gt; [doc x]'


def test_formalization_svg_lays_out_the_variable_chain_and_escapes():
    triples = [["?", "directed_by", "V@A"], ["V@A", "born_in", "C@Paris"], ["V@A", "<b>", "C@<script>x</script>"]]
    assert term_columns(triples) == {"?": 0, "V@A": 1, "C@Paris": 2, "C@<script>x</script>": 2}
    svg = str(formalization_svg(triples))
    assert svg.count('class="node ') == 4 and svg.count('class="edge"') == 3
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "&lt;b&gt;" in svg
    # each node's centre (its label's x, y): the chain reads left to right, one column per hop from the target
    centres = {html.unescape(term): (float(x), float(y)) for term, x, y in
               re.findall(r'<g class="node \w+"><title>([^<]*)</title>.*?<text x="([\d.]+)" y="([\d.]+)"', svg)}
    assert centres.keys() == term_columns(triples).keys()
    (target_x, target_y), (variable_x, variable_y) = centres["?"], centres["V@A"]
    (paris_x, paris_y), (script_x, script_y) = centres["C@Paris"], centres["C@<script>x</script>"]
    assert target_x < variable_x < paris_x == script_x and target_y == variable_y == paris_y < script_y
    # each edge's arrow runs from its subject's column towards its object's
    lines = [tuple(map(float, line)) for line in re.findall(r'<line x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)"', svg)]
    assert len(lines) == 3 and all(target_x < x1 < x2 <= paris_x for x1, x2 in lines)


def test_replay_steps_through_a_recording_with_the_managed_context(viewed):
    client, _, task, _ = viewed
    listing = client.get("/view/episodes")
    assert listing.status_code == 200 and task["task_id"] in listing.text
    name = next(n for n in re.findall(r'href="/view/episodes/([^"?]+)', listing.text) if n.endswith("reference.jsonl"))
    first = client.get(f"/view/episodes/{name}", params={"step": 1})
    assert first.status_code == 200
    assert "Re-run: identical to the recording." in first.text
    assert "<b>search</b>" in first.text  # the parsed tool call
    assert 'class="message assistant"' in first.text  # the context after the step
    assert re.search(r'<pre class="observation">[^<]*(&[a-z#0-9]+;[^<]*)*<a href="/view/doc/(\d+)"(?: class="evidence")?>\[doc \2\]</a>', first.text)
    last = client.get(f"/view/episodes/{name}", params={"step": 99})
    assert "terminated" in last.text and "reward parts" in last.text and "termination_reason" in last.text


def test_compare_puts_two_episodes_side_by_side(viewed, tmp_path):
    client, snapshot, task, episodes = viewed
    record_reference_episode(snapshot, "viewer", task, episodes / "reference-openai.jsonl", tool_format="openai")
    page = client.get("/view/compare", params={"a": f"{episodes.name}/reference.jsonl", "b": f"{episodes.name}/reference-openai.jsonl"})
    assert page.status_code == 200 and "different tasks" not in page.text
    row = page.text.split('<table class="compare">')[1].split("</tr>")[2]
    assert row.count("<td>") == 2 and "&lt;tool_call&gt;" in row and "&#34;name&#34;: &#34;search&#34;" in row


def start_play(client, task, **form) -> str:
    response = client.post("/view/play", data={"task_id": task["task_id"], "tool_format": "tongyi", **form}, follow_redirects=False)
    assert response.status_code == 303, response.text
    return response.headers["location"]


def test_hand_played_episode_is_saved_as_recordepisodes_writes_it(viewed, tmp_path):
    client, snapshot, task, episodes = viewed
    location = start_play(client, task, max_turns="6")
    evidence = task["evidence"][0]
    actions = [write_call("tongyi", "search", {"query": evidence["doc_title"], "k": 3}),
               write_call("tongyi", "find", {"doc": evidence["doc_id"], "pattern": evidence["value"]}),
               f"<answer>{task['answer']}</answer>\n<citations>{evidence['doc_id']}</citations>"]
    assert client.post(f"{location}/step", data={"tool": "search", "arg.query": evidence["doc_title"], "arg.k": "3"}).status_code == 200
    assert client.post(f"{location}/step", data={"tool": "find", "arg.doc": str(evidence["doc_id"]), "arg.pattern": evidence["value"]}).status_code == 200
    final = client.post(f"{location}/step", data={"action": actions[2]})
    assert final.status_code == 200 and "Episode over: reward" in final.text
    saved = client.get(f"{location}/recording.jsonl")
    assert saved.status_code == 200 and "attachment" in saved.headers["content-disposition"]
    kwargs = {"tasks": "viewer", "split": task["split"], "tool_format": "tongyi", "max_turns": 6, "snapshot": str(snapshot.resolve())}
    env = RecordEpisodes(gym.make("stillweb/WikiQA-v0", **kwargs), tmp_path / "in-process.jsonl")
    env.reset(seed=0, options={"task_id": task["task_id"]})
    for action in actions:
        env.step(action)
    env.close()
    assert saved.content == (tmp_path / "in-process.jsonl").read_bytes()
    (tmp_path / "played.jsonl").write_bytes(saved.content)
    assert cli_main(["replay", str(tmp_path / "played.jsonl")]) == 0
    stored = client.post(f"{location}/save", follow_redirects=False)
    assert stored.status_code == 303
    path = episodes / stored.headers["location"].rsplit("/", 1)[1]
    assert path.read_bytes() == saved.content
    assert client.get(stored.headers["location"]).status_code == 200
    late = client.post(f"{location}/step", data={"action": actions[2]})
    assert "the session API answered 409" in html.unescape(late.text)


def test_a_bad_hand_made_call_is_an_error_observation(viewed):
    client, _, task, _ = viewed
    location = start_play(client, task)
    page = client.post(f"{location}/step", data={"tool": "search", "arg.query": "river", "arg.k": "many"})
    assert page.status_code == 200 and "bad_arguments" in page.text
    unknown_format = client.post("/view/play", data={"task_id": task["task_id"], "tool_format": "xml"})
    assert unknown_format.status_code == 422 and "tool_format must be one of" in html.unescape(unknown_format.text)
    assert client.get("/view/play/not-a-session").status_code == 404
    assert client.post("/view/play", data={"task_id": "sw-nope"}).status_code == 422


def test_document_and_task_text_are_escaped(tmp_path):
    client = TestClient(make_viewer_app(ViewerConfig(hostile_snapshot(tmp_path), tasks="hostile")))
    for url in ("/view/doc/0", f"/view/tasks/{HOSTILE_TASK_ID}", "/view/tasks", "/view/search?q=script+page", "/view/play"):
        page = client.get(url)
        assert page.status_code == 200, url
        body = page.text.split("<main>")[1].split('<script src="/view/static/viewer.js">')[0]
        assert "<script" not in body and "<b>bold" not in body and "<img" not in body, url
    assert escaped(HOSTILE_DOC) in client.get("/view/doc/0").text
    assert escaped(HOSTILE_QUESTION) in client.get(f"/view/tasks/{HOSTILE_TASK_ID}").text


def test_static_assets_are_served_by_the_package(viewed):
    client = viewed[0]
    assert client.get("/view/static/viewer.css").status_code == 200
    assert "ArrowLeft" in client.get("/view/static/viewer.js").text
    assert client.get("/", follow_redirects=False).headers["location"] == "/view/"
    page = client.get("/view/").text
    assert "http://" not in page and "https://" not in page  # nothing loaded from elsewhere


def test_bad_parameters_and_unknown_pages_get_a_page_the_api_keeps_json(viewed):
    client = viewed[0]
    bad = client.get("/view/search", params={"q": "river", "k": "many"})
    assert bad.status_code == 422 and "text/html" in bad.headers["content-type"] and "k: Input should be a valid integer" in bad.text
    unknown = client.get("/view/no-such-page")
    assert unknown.status_code == 404 and "text/html" in unknown.headers["content-type"]
    api = client.post("/tools/call", json={"name": 3})
    assert api.status_code == 422 and api.json()["error"] == "validation_error"
    assert client.get("/no-such-route").json()["error"] == "not_found"


def test_document_page_shows_the_source_id_when_the_snapshot_has_one(viewed, monkeypatch):
    client, snapshot, _, _ = viewed
    from stillweb.corpora.snapshot.shared import shared_snapshot

    opened = shared_snapshot(snapshot)
    plain = opened.lookup(3)
    assert "source id" not in client.get("/view/doc/3").text or getattr(plain, "source_id", None) is not None

    class WithSourceId:
        def __init__(self, document):
            self.__dict__.update(vars(document) if hasattr(document, "__dict__") else
                                 {name: getattr(document, name) for name in document.__dataclass_fields__})
            self.source_id = "Q<42>"

    monkeypatch.setattr(opened, "lookup", lambda ref: WithSourceId(plain))
    page = client.get("/view/doc/3")
    assert "<th>source id</th><td><code>Q&lt;42&gt;</code></td>" in page.text


def test_view_command_binds_loopback_by_default():
    from stillweb.cli.main import make_parser

    args = make_parser().parse_args(["view", "snap"])
    assert (args.host, args.port, args.episodes, args.tasks) == ("127.0.0.1", 8000, [], None)


DETERMINISM_SCRIPT = """
import hashlib, sys
from fastapi.testclient import TestClient
from stillweb.server.viewer import ViewerConfig, make_viewer_app
snapshot, episodes, task_id = sys.argv[1:4]
client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(episodes,))))
name = episodes.rstrip("/").rsplit("/", 1)[1] + "/reference.jsonl"
for url in ["/view/", "/view/search?q=river+city", "/view/doc/7", "/view/tasks", "/view/tasks/" + task_id,
            "/view/episodes/" + name + "?step=1", "/view/compare?a=" + name + "&b=" + name]:
    page = client.get(url)
    print(url, page.status_code, hashlib.sha256(page.content).hexdigest())
"""


@pytest.mark.slow
def test_pages_are_identical_across_processes(viewed):
    _, snapshot, task, episodes = viewed
    outputs = [subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT, str(snapshot), str(episodes), task["task_id"]],
                              capture_output=True, text=True, check=True).stdout for _ in range(2)]
    assert outputs[0] == outputs[1] and outputs[0].count(" 200 ") == 7


@pytest.mark.parametrize("ref", ["²", "1²", "٣"])
def test_a_document_reference_of_non_ascii_digits_is_a_title(viewed, ref):
    """str.isdigit() is true for '²', which int() refuses: /view/doc/² was a 500."""
    client, *_ = viewed
    page = client.get(f"/view/doc/{ref}")
    assert page.status_code == 404 and f"no document {escaped(repr(ref))}" in page.text


def test_recorded_text_with_a_lone_surrogate_is_shown_escaped(viewed, tmp_path, small_snapshot):
    """JSON may escape a lone surrogate ("\\ud800"), which UTF-8 cannot encode: a recorded action
    holding one made the replay and compare pages a 500. It shows as the escape it was recorded as."""
    from stillweb.server.viewer.pages import render

    assert render("error.html", title="t", message="a \ud800 b").body.decode("utf-8").count("a \\ud800 b") == 1
    _, snapshot, _, episodes = viewed
    records = [json.loads(line) for line in (episodes / "reference.jsonl").read_text(encoding="utf-8").splitlines()]
    records[2]["action"] = "<b>odd</b> \ud800 text"
    (tmp_path / "surrogate.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(tmp_path,))), raise_server_exceptions=False)
    name = f"{tmp_path.name}/surrogate.jsonl"
    for url, params in ((f"/view/episodes/{name}", {"step": 1}), (f"/view/episodes/{name}", {"view": "all"}),
                        ("/view/compare", {"a": name, "b": name})):
        page = client.get(url, params=params)
        assert page.status_code == 200 and "&lt;b&gt;odd&lt;/b&gt; \\ud800 text" in page.text, (url, params, page.status_code)


def test_a_killed_runs_episodes_before_the_cut_are_shown_with_the_reason(viewed, tmp_path):
    """The runs table lists a killed run's episodes read before its cut last line (and the health page plots
    them): their replay links show them, saying the file is cut, instead of refusing the whole file."""
    _, snapshot, _, episodes = viewed
    text = (episodes / "reference.jsonl").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    (tmp_path / "killed.jsonl").write_text(text + lines[1] + lines[2][: len(lines[2]) // 2], encoding="utf-8")
    (tmp_path / "damaged.jsonl").write_text(text + "{not json\n" + "".join(lines[1:]), encoding="utf-8")
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(tmp_path,))), raise_server_exceptions=False)
    table = client.get("/view/episodes").text.split('<table class="list runs">')[1].split("</table>")[0]
    links = [html.unescape(link) for link in re.findall(r'<a href="(/view/episodes/[^"]+\?episode=\d+)">', table)]
    assert len(links) == 3  # the killed run's answered episode and its cut one, the damaged file's episode before the bad line
    for link in links:
        for extra in ("", "&view=all", "&step=1"):
            page = client.get(link + extra)
            assert page.status_code == 200, (link + extra, page.text[:300])
            note = html.unescape(page.text.split('class="problem file-problem"')[1].split("</p>")[0])
            assert ("ends in the middle" in note) if "/killed.jsonl" in link else (f"line {len(lines) + 1} of" in note and "is not JSON" in note)
    killed = f"{tmp_path.name}/killed.jsonl"
    past = client.get(f"/view/episodes/{killed}", params={"episode": 2})
    assert past.status_code == 422 and "episodes 0..1, not 2" in html.unescape(past.text) and "ends in the middle" in html.unescape(past.text)
    compare = client.get("/view/compare", params={"a": killed, "b": killed, "be": 1})
    assert compare.status_code == 200 and "ends in the middle" in html.unescape(compare.text)


def test_an_episode_recorded_on_another_snapshot_says_so_on_its_pages(viewed, tmp_path):
    """The runs table marks a file from another snapshot; its replay, all-steps and compare pages say so too
    (its [doc N] links and evidence marks point into the viewer's snapshot, not the one it was recorded on)."""
    _, snapshot, _, episodes = viewed
    lines = (episodes / "reference.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    (tmp_path / "other.jsonl").write_text(json.dumps({**header, "snapshot_fingerprint": "ab" * 32}) + "\n" + "".join(lines[1:]), encoding="utf-8")
    (tmp_path / "same.jsonl").write_text("".join(lines), encoding="utf-8")
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(tmp_path,))))
    other, same = f"{tmp_path.name}/other.jsonl", f"{tmp_path.name}/same.jsonl"
    for url, params in ((f"/view/episodes/{other}", {"step": 2}), (f"/view/episodes/{other}", {"view": "all"}),
                        ("/view/compare", {"a": same, "b": other})):
        page = html.unescape(client.get(url, params=params).text)
        assert "recorded on another snapshot (fingerprint abababababab" in page, (url, params)
    assert "another snapshot" not in client.get(f"/view/episodes/{same}", params={"view": "all"}).text


def test_a_recording_is_parsed_once_per_version(viewed):
    from stillweb.server.viewer.trajectories import TrajectoryFiles

    _, _, _, episodes = viewed
    files = TrajectoryFiles([episodes])
    name = f"{episodes.name}/reference.jsonl"
    first = files.open(name)
    assert files.open(name) is first  # a step click does not parse the file again
    copy = episodes.parent / "copy-of-reference"
    copy.mkdir(exist_ok=True)
    grown = copy / "reference.jsonl"
    grown.write_text((episodes / "reference.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    growing = TrajectoryFiles([copy])
    before = growing.open(f"{copy.name}/reference.jsonl")
    lines = grown.read_text(encoding="utf-8").splitlines(keepends=True)
    with grown.open("a", encoding="utf-8") as out:
        out.write("".join(lines[1:]))
    after = growing.open(f"{copy.name}/reference.jsonl")
    assert after is not before and len(after.episodes) == 2 * len(before.episodes)
