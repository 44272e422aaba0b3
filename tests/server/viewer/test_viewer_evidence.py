"""Evidence at a glance in the viewer (FastAPI TestClient): query terms marked in snippets
and documents (stemmed as the index matches, escaped before marking), the query carried to
document pages, search k up to the engine's maximum, a replay's evidence documents and gold
answer, the play page's order and gold answer, and synthetic documents' made-up URLs."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape

from stillweb.corpora.search.index import MAX_K
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.sandboxes.tools.search import TOOL_MAX_K, SearchTool
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from stillweb.server.viewer.pages import highlight
from support.viewer_data import HOSTILE_DOC, HOSTILE_TASK_ID, hostile_snapshot, record_reference_episode, viewer_snapshot

MARKED = re.compile(r"<mark(?: id=\"[^\"]*\")?>([^<]*)</mark>")
WORD = r"(?<![^\W_]){}(?![^\W_])"  # a whole word, as tantivy's simple tokenizer splits (alphanumeric runs)
STOP_WORDS = {"the", "of", "and", "a", "an", "in", "on", "at", "to", "for", "by", "with", "from", "is", "was"}


@pytest.fixture(scope="module")
def viewed(small_snapshot, tmp_path_factory):
    """(client, snapshot path, a task, the reference recording) of a viewer over the small snapshot."""
    snapshot = viewer_snapshot(small_snapshot, tmp_path_factory.mktemp("evidence-viewer"))
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    episodes = tmp_path_factory.mktemp("evidence-episodes")
    recording = record_reference_episode(snapshot, "viewer", task, episodes / "reference.jsonl")
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(episodes,))))
    return client, snapshot, task, recording


def unmark(page: str) -> str:
    """``page`` without its ``<mark>`` tags."""
    return re.sub(r"</?mark(?: id=\"[^\"]*\")?>", "", page)


def evidence_of(task: dict) -> set[int]:
    """The task's evidence doc ids, read straight from the task row."""
    return set(task["evidence_docs"]) | {fact["doc_id"] for fact in task["evidence"]}


# -- the highlight function ------------------------------------------------------------------------


def test_highlight_marks_stemmed_matches_and_nothing_else():
    text = "Rivers & <b>river</b>: the riverside river's RIVER, a running run; ran."
    assert MARKED.findall(str(highlight(text, "rivers"))) == ["Rivers", "river", "river", "RIVER"]
    assert MARKED.findall(str(highlight(text, "runs"))) == ["running", "run"]
    assert MARKED.findall(str(highlight(text, "the of"))) == []  # stop words match nothing, as in the index
    assert str(highlight(text, "")) == str(escape(text))
    anchored = str(highlight(text, "river", anchor="first-match"))
    assert anchored.count('<mark id="first-match">') == 1 and anchored.index('<mark id="first-match">Rivers</mark>') == 0


HTMLISH = st.text(alphabet="<>&\"'/= abiRrvesctpuénx;\n", max_size=200)


@settings(max_examples=300, deadline=None)
@given(st.one_of(HTMLISH, st.text(max_size=200)),
       st.one_of(st.sampled_from(["river", "rivers", "script", "<b>", "a & b", "amp", "lt quot"]), st.text(max_size=30)),
       st.sampled_from([None, "first-match"]))
def test_highlight_only_adds_marks_around_escaped_words(text, query, anchor):
    marked = str(highlight(text, query, anchor=anchor))
    assert unmark(marked) == str(escape(text))
    for inner in re.findall(r"<mark[^>]*>(.*?)</mark>", marked):
        assert inner and not set(inner) & set("<>&\"'")  # whole words: never a tag or part of an entity
    assert marked.count("<mark") == marked.count("</mark>") == len(MARKED.findall(marked))
    assert marked.count('id="first-match"') == (1 if anchor and "<mark" in marked else 0)


# -- search and documents --------------------------------------------------------------------------


def test_search_marks_the_query_words_in_snippets_and_carries_the_query(viewed):
    client, _, _, _ = viewed
    page = client.get("/view/search", params={"q": "river rivers"})
    listed = page.text.split('<ol class="hits">')[1].split("</ol>")[0]
    snippets = re.findall(r'<div class="snippet">(.*?)</div>', listed)
    # most snippets show the word (the snippet window looks for the literal query words, the ranking stems)
    assert sum("<mark>" in snippet for snippet in snippets) > len(snippets) // 2
    for snippet in snippets:
        assert {word.lower() for word in MARKED.findall(snippet)} <= {"river", "rivers"}
        # every whole-word river/rivers of the snippet is marked, riverside and the like are not
        assert len(MARKED.findall(snippet)) == len(re.findall(WORD.format("rivers?"), unmark(snippet), re.IGNORECASE))
    assert re.findall(r'<a href="/view/doc/\d+\?q=river\+rivers">', listed) and "k=" not in listed


def test_document_page_highlights_the_carried_query(viewed):
    client, snapshot, task, _ = viewed
    document = Snapshot.open(snapshot).lookup(task["evidence"][0]["doc_id"])
    word = next(w for w in re.findall(r"[A-Za-z]{6,}", document.text) if w.lower() not in document.title.lower())
    query = f"{document.title} {word}"
    words = [w for w in [*re.findall(r"[^\W_]+", document.title), word] if w.lower() not in STOP_WORDS]
    page = client.get(f"/view/doc/{document.doc_id}", params={"q": query, "k": 7})
    assert page.status_code == 200
    text = page.text.split('<pre class="doctext">')[1].split("</pre>")[0]
    assert unmark(text) == str(escape(document.text))
    expected = len(re.findall("|".join(WORD.format(re.escape(w)) for w in words), document.text, re.IGNORECASE))
    marks = MARKED.findall(text)
    assert 0 < expected <= len(marks)  # stemming may add inflected forms, never lose an exact word
    assert {w.lower() for w in words} <= {m.lower() for m in marks}
    assert text.count('<mark id="first-match">') == 1 and text.index('<mark id="first-match">') == text.index("<mark")
    assert f"{len(marks)} matches of" in page.text
    assert '<a id="jump" href="#first-match">' in page.text
    assert f'<a id="back" href="{escape("/view/search?" + urlencode({"q": query, "k": 7}))}">' in page.text
    assert "<mark>" in page.text.split("<h1>")[1].split("</h1>")[0]  # the title too
    plain = client.get(f"/view/doc/{document.doc_id}")
    assert "<mark" not in plain.text and 'id="jump"' not in plain.text
    nothing = client.get(f"/view/doc/{document.doc_id}", params={"q": "zzqx"})
    assert "0 matches of" in nothing.text and 'id="jump"' not in nothing.text and 'id="back"' in nothing.text


def test_hostile_text_is_escaped_before_marking(tmp_path):
    client = TestClient(make_viewer_app(ViewerConfig(hostile_snapshot(tmp_path), tasks="hostile")))
    for url in ("/view/search?q=script+bold+ampersands", "/view/doc/0?q=script+bold+ampersands"):
        page = client.get(url)
        body = page.text.split("<main>")[1].split('<script src="/view/static/viewer.js">')[0]
        assert page.status_code == 200 and "<mark>" in body, url
        assert "<script" not in body and "<b>bold" not in body, url
    started = client.post("/view/play", data={"task_id": HOSTILE_TASK_ID, "tool_format": "tongyi"}, follow_redirects=False)
    ended = client.post(f"{started.headers['location']}/step", data={"action": "<answer><i>Script</i> Page</answer>"}).text
    result = ended.split('id="result"')[1].split("</section>")[0]
    assert "<img" not in result and "<i>" not in result  # the hostile alias and answer, shown as text
    assert str(escape('<img src=x onerror="window.__pwned = 3">')) in result and "&lt;i&gt;Script&lt;/i&gt; Page" in result
    doc = client.get("/view/doc/0", params={"q": "script bold ampersands"}).text
    text = doc.split('<pre class="doctext">')[1].split("</pre>")[0]
    assert unmark(text) == str(escape(HOSTILE_DOC))
    assert MARKED.findall(text) == ["script", "script", "Script", "bold", "ampersands"]


def test_search_takes_k_up_to_the_engines_maximum(viewed):
    client, snapshot, _, _ = viewed
    opened = Snapshot.open(snapshot)
    page = client.get("/view/search", params={"q": "city", "k": 50})
    assert page.status_code == 200
    listed = page.text.split('<ol class="hits">')[1].split("</ol>")[0]
    expected = opened.search("city", 50)
    assert len(expected) == 50 > TOOL_MAX_K
    assert re.findall(r'<a href="/view/doc/(\d+)\?q=city&amp;k=50">', listed) == [str(hit.doc_id) for hit in expected]
    assert str(escape(SearchTool(opened).run({"query": "city", "k": 50}).text)) in page.text  # the tool's own text
    assert 'id="beyond-tool-k"' in page.text and f"at most {TOOL_MAX_K}" in page.text
    assert f'max="{MAX_K}"' in page.text
    assert 'id="beyond-tool-k"' not in client.get("/view/search", params={"q": "city", "k": TOOL_MAX_K}).text
    for k in (0, MAX_K + 1):
        bad = client.get("/view/search", params={"q": "city", "k": k})
        assert bad.status_code == 422 and "text/html" in bad.headers["content-type"]
        assert f"k must be between 1 and {MAX_K}" in html.unescape(bad.text) and 'role="alert"' in bad.text
    assert client.get("/view/search", params={"q": "city", "k": MAX_K}).status_code == 200
    long_query = " ".join(["city"] * 200)  # longer than an agent's query may be: refused at any k, as the tool refuses it
    for k in (5, 50):
        refused = client.get("/view/search", params={"q": long_query, "k": k})
        assert refused.status_code == 200 and "The search tool answered <code>bad_arguments</code>" in refused.text, k


# -- replay --------------------------------------------------------------------------------------


def test_replay_marks_the_evidence_shown_and_opened_at_each_step(viewed):
    client, _, task, recording = viewed
    evidence = evidence_of(task)
    records = [json.loads(line) for line in recording.read_text(encoding="utf-8").splitlines()][1:]
    name = f"{recording.parent.name}/{recording.name}"
    seen_opened = seen_shown = 0
    for step, record in enumerate(records[1:], start=1):
        page = client.get(f"/view/episodes/{name}", params={"step": step}).text
        shown = [item["doc_id"] for item in record["info"]["shown_docs"] if item["doc_id"] in evidence]
        call = re.search(r"<tool_call>(.*?)</tool_call>", record["action"], re.S)
        called = json.loads(call.group(1)) if call else {}
        opened = ([called["arguments"]["doc"]] if called.get("name") == "open" and record["info"]["tool_flags"] == [None]
                  and called["arguments"]["doc"] in evidence else [])
        lines = dict(re.findall(r'<p class="evidence-line (shown|opened)">(.*?)</p>', page))
        assert [int(d) for d in re.findall(r'href="/view/doc/(\d+)"', lines.get("shown", ""))] == shown, step
        assert [int(d) for d in re.findall(r'href="/view/doc/(\d+)"', lines.get("opened", ""))] == opened, step
        for doc_id in opened:
            title = next(fact["doc_title"] for fact in task["evidence"] if fact["doc_id"] == doc_id)
            assert lines["opened"].startswith("opened evidence: ") and f"doc {doc_id} {escape(title)}" in lines["opened"]
        observation = page.split("<h4>observation</h4>")[1].split("</pre>")[0]
        badged = {int(d) for d in re.findall(r'<a href="/view/doc/(\d+)" class="evidence">', observation)}
        assert badged == {int(d) for d in re.findall(r"\[doc (\d+)\]", record["observation"])} & evidence, step
        seen_opened += bool(opened)
        seen_shown += bool(shown)
        outline = page.split('<span class="outline">')[1].split("</span>")[0]
        steps_with_evidence = [int(number) for number in re.findall(r'class="[^"]*evidence-step"[^>]*>(\d+)</a>', outline)]
        expected_steps = [number for number, other in enumerate(records[1:], start=1)
                          if {item["doc_id"] for item in other["info"]["shown_docs"]} & evidence]
        assert steps_with_evidence == expected_steps  # the stepper marks every step that met evidence
    assert seen_opened and seen_shown  # the reference agent opens evidence: the test can fail


def test_the_last_step_shows_the_gold_answer_beside_the_given_one(viewed):
    client, _, task, recording = viewed
    last = json.loads(recording.read_text(encoding="utf-8").splitlines()[-1])
    page = client.get(f"/view/episodes/{recording.parent.name}/{recording.name}", params={"step": 999}).text
    gold = page.split('<table class="facts gold">')[1].split("</table>")[0]
    assert f'<td class="gold-answer"><b>{escape(task["answer"])}</b>' in gold
    assert f'<td class="given"><b>{escape(last["info"]["answer"])}</b>' in gold
    assert all(str(escape(alias)) in gold for alias in task["aliases"])
    assert "outcome" in gold and last["info"]["outcome"] is not None
    first = client.get(f"/view/episodes/{recording.parent.name}/{recording.name}", params={"step": 1}).text
    assert 'class="facts gold"' not in first


def test_a_recording_whose_task_is_not_in_the_task_set_says_so(viewed, tmp_path):
    client, snapshot, task, recording = viewed
    (tmp_path / "other.jsonl").write_text(recording.read_text(encoding="utf-8").replace(task["task_id"], "sw-elsewhere"), encoding="utf-8")
    other = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(tmp_path / "other.jsonl",))))
    for step in (0, 2, 999):
        page = other.get("/view/episodes/other.jsonl", params={"step": step})
        assert page.status_code == 200
        assert "task &#39;sw-elsewhere&#39; is not in the viewer&#39;s task set &#39;viewer&#39;" in page.text
        assert 'class="evidence"' not in page.text and 'class="facts gold"' not in page.text


# -- play ----------------------------------------------------------------------------------------


def test_play_page_keeps_the_input_next_to_the_latest_step_and_shows_the_gold_answer(viewed):
    client, _, task, _ = viewed
    started = client.post("/view/play", data={"task_id": task["task_id"], "tool_format": "tongyi"}, follow_redirects=False)
    location = started.headers["location"]
    evidence = task["evidence"][0]
    for query in (evidence["doc_title"], evidence["value"]):
        moved = client.post(f"{location}/step", data={"tool": "search", "arg.query": query}, follow_redirects=False)
        assert moved.headers["location"] == f"{location}#latest"
    page = client.get(location).text
    assert page.count('<details class="step earlier">') == 1 and page.count('<div class="step') == 1
    earlier, latest, act = (page.index('<details class="step earlier">'), page.index('id="latest"'), page.index('<section class="act">'))
    assert earlier < latest < act
    assert str(escape(evidence["value"])) in page[latest:act]  # the latest step is the one shown open
    assert "gold answer" not in page
    final = client.post(f"{location}/step", data={"action": "<answer>Not The Answer</answer>"}).text
    result = final.split('id="result"')[1].split("</section>")[0]
    assert "Episode over: reward" in result
    assert f'<td class="gold-answer"><b>{escape(task["answer"])}</b>' in result
    assert '<td class="given"><b>Not The Answer</b>' in result
    assert all(str(escape(alias)) in result for alias in task["aliases"])


# -- synthetic URLs ------------------------------------------------------------------------------


def test_synthetic_documents_do_not_present_a_made_up_url_as_real(viewed, monkeypatch, tmp_path):
    client, snapshot, _, _ = viewed
    from dataclasses import replace

    from stillweb.corpora.snapshot.shared import shared_snapshot

    opened = shared_snapshot(snapshot)
    assert opened.manifest["source"]["kind"] == "synthetic"
    made_up = replace(opened.lookup(3), url="https://en.wikipedia.org/wiki/Made_Up")
    monkeypatch.setattr(opened, "lookup", lambda ref: made_up)
    row = client.get("/view/doc/3").text.split("<th>url</th>")[1].split("</tr>")[0]
    assert "not a real page" in row and "<s>https://en.wikipedia.org/wiki/Made_Up</s>" in row and "href" not in row
    monkeypatch.undo()
    assert "not a real page" in client.get("/view/doc/3").text  # an empty URL is said to be synthetic too
    rows = TestClient(make_viewer_app(ViewerConfig(hostile_snapshot(tmp_path), tasks="hostile")))
    assert "not a real page" not in rows.get("/view/doc/1").text


@pytest.mark.parametrize("shown", [7, True, "12", {"doc_id": 3}, None])
def test_recorded_shown_docs_that_are_not_a_list_mark_nothing(shown):
    """info["shown_docs"] is file input: a number made the replay page a 500."""
    from stillweb.server.viewer.evidence import TaskEvidence, step_evidence

    evidence = TaskEvidence(snapshot=None, task_id="t", task={}, documents={3: "Three", 12: "Twelve"})
    assert step_evidence(evidence, {"info": {"shown_docs": shown}, "observation": ""}, None) == {"shown": [], "opened": []}
    assert step_evidence(evidence, {"info": {"shown_docs": [{"doc_id": 3}, 12]}, "observation": ""}, None)["shown"] == [(3, "Three"), (12, "Twelve")]
