"""The viewer over a directory of damaged and hostile recordings (support.damaged_recordings):
a killed run's cut last line, a non-UTF-8 file, an empty and a header-only file, a file from
another snapshot, a huge single line, a number past Python's int() digit limit, and good
recordings with values of the wrong type; a corrupt or missing single file. Every page that lists or reads
recordings answers with the reason (never a 500), the good file still shows, recorded text stays text."""

from __future__ import annotations

import html
import json
import re

import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from support.damaged_recordings import DAMAGED, HOSTILE_VALUES, OTHER_FINGERPRINT, SCRIPT, damaged_directory
from support.viewer_data import record_reference_episode, viewer_snapshot

UNREADABLE = ("binary.jsonl", "empty.jsonl", "header-only.jsonl", "huge-line.jsonl")  # no episode before the damage
CUT_SHORT = ("killed.jsonl", "digits.jsonl")  # damaged after a good episode


@pytest.fixture(scope="module")
def damaged_runs(small_snapshot, tmp_path_factory):
    """(the snapshot, the directory of damaged recordings, the good episode's task id)."""
    folder = tmp_path_factory.mktemp("damaged")
    snapshot = viewer_snapshot(small_snapshot, folder)
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    good = record_reference_episode(snapshot, "viewer", task, folder / "reference.jsonl")
    return snapshot, damaged_directory(good, folder / "runs"), task["task_id"]


@pytest.fixture(scope="module")
def damaged(damaged_runs):
    """(client, the directory name, the good episode's task id)."""
    snapshot, directory, task_id = damaged_runs
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(directory,))), raise_server_exceptions=False)
    assert Snapshot.open(snapshot).fingerprint != OTHER_FINGERPRINT
    return client, directory.name, task_id


def problem_of(page: str) -> str:
    """The text of an error page's message."""
    found = re.search(r'<p class="problem" role="alert">(.*?)</p>', page, flags=re.S)
    assert found, page[:2000]
    return html.unescape(found.group(1))


def get(client, url, **params):
    response = client.get(url, params=params)
    assert response.status_code < 500, f"{url} {params}: {response.status_code} {response.text[:300]}"
    assert response.headers["content-type"].startswith("text/html"), (url, params, response.headers["content-type"])
    assert SCRIPT not in response.text, (url, params)
    return response


def test_the_runs_table_lists_every_file_with_its_reason_and_the_good_episode(damaged):
    client, folder, task_id = damaged
    page = get(client, "/view/episodes")
    assert page.status_code == 200
    files = page.text.split('<table class="list files">')[1].split("</table>")[0]
    rows = {html.unescape(name): html.unescape(rest) for name, rest in re.findall(r"<tr>\s*<td>.*?<code>([^<]+)</code>(.*?)</tr>", files, flags=re.S)}
    for name, reason in DAMAGED.items():
        assert reason in rows[f"{folder}/{name}"], (name, rows[f"{folder}/{name}"])
    for name in ("good", *HOSTILE_VALUES):
        assert f"{folder}/{name}.jsonl" in rows, name
    listed = page.text.split('<table class="list runs">')[1]
    assert f"/view/episodes/{folder}/good.jsonl?episode=0" in listed and task_id in listed


def test_the_health_page_names_the_damaged_files_and_plots_the_rest(damaged):
    client, folder, _ = damaged
    page = get(client, "/view/health")
    assert page.status_code == 200 and "<svg" in page.text
    text = html.unescape(page.text)
    for name in ("killed.jsonl", "binary.jsonl", "huge-line.jsonl", "digits.jsonl"):
        assert f"{folder}/{name}" in text and DAMAGED[name] in text, name
    for name in (*DAMAGED, "good.jsonl", *(f"{name}.jsonl" for name in HOSTILE_VALUES)):
        assert get(client, "/view/health", file=f"{folder}/{name}").status_code == 200, name


@pytest.mark.parametrize("name", UNREADABLE)
def test_a_file_without_a_readable_episode_gets_its_reason_on_every_page_that_reads_it(damaged, name):
    client, folder, _ = damaged
    reason = {"empty.jsonl": "empty", "header-only.jsonl": "no episodes", "huge-line.jsonl": "not a recording header"}.get(name, DAMAGED[name])
    for params in ({}, {"view": "all"}, {"step": 3}, {"episode": 1}):
        page = get(client, f"/view/episodes/{folder}/{name}", **params)
        assert page.status_code == 422 and reason in problem_of(page.text), (params, problem_of(page.text))
    for sides in ({"a": f"{folder}/{name}", "b": f"{folder}/good.jsonl"}, {"a": f"{folder}/good.jsonl", "b": f"{folder}/{name}"}):
        page = get(client, "/view/compare", **sides)
        assert page.status_code == 422 and reason in problem_of(page.text)


@pytest.mark.parametrize("name", CUT_SHORT)
def test_a_file_damaged_after_an_episode_shows_it_with_the_reason(damaged, name):
    client, folder, _ = damaged
    for params in ({}, {"view": "all"}, {"step": 3}):
        page = get(client, f"/view/episodes/{folder}/{name}", **params)
        assert page.status_code == 200 and DAMAGED[name] in html.unescape(page.text.split('class="problem file-problem"')[1]), params
    past = get(client, f"/view/episodes/{folder}/{name}", episode=5)
    assert past.status_code == 422 and DAMAGED[name] in problem_of(past.text)
    page = get(client, "/view/compare", a=f"{folder}/{name}", b=f"{folder}/good.jsonl")
    assert page.status_code == 200 and "Identical" in page.text and DAMAGED[name] in html.unescape(page.text)


def test_every_episode_link_of_the_runs_table_answers(damaged):
    client, _, _ = damaged
    links = set()
    for page in (1, 2):
        table = get(client, "/view/episodes", page=page)
        if table.status_code == 422:
            break
        links |= {html.unescape(link) for link in re.findall(r'<a href="(/view/episodes/[^"?]+\?episode=\d+)">', table.text)}
    assert len(links) >= 1 + len(HOSTILE_VALUES) + len(CUT_SHORT)
    for link in sorted(links):
        assert get(client, link).status_code == 200, link


@pytest.mark.parametrize("name", ["good", "other-snapshot", *HOSTILE_VALUES])
def test_a_readable_file_shows_on_every_page_whatever_its_values(damaged, name):
    client, folder, _ = damaged
    file = f"{folder}/{name}.jsonl"
    for params in ({}, {"view": "all"}, {"step": 2}, {"step": 10 ** 6}):
        page = get(client, f"/view/episodes/{file}", **params)
        assert page.status_code == 200, (params, page.text[:500])
    assert get(client, "/view/compare", a=file, b=f"{folder}/good.jsonl").status_code == 200
    assert get(client, "/view/episodes", file=file).status_code == 200


def test_the_damage_note_says_once_where_reading_stopped_why_and_how_many_episodes_are_shown(damaged, damaged_runs):
    client, folder, _ = damaged
    lines = (damaged_runs[1] / "killed.jsonl").read_bytes().split(b"\n")
    with pytest.raises(ValueError) as cut:
        json.loads(lines[-1])
    assert not lines[-1].endswith(b"}") and len(lines) > 2  # the last line is the cut one, two episodes before it
    page = get(client, f"/view/episodes/{folder}/killed.jsonl", episode=1)
    notes = re.findall(r'<p class="problem file-problem" role="note">(.*?)</p>', page.text, flags=re.S)
    assert [html.unescape(note) for note in notes] == [
        f"Reading stopped at the damage: line {len(lines)} of '{folder}/killed.jsonl' is not JSON (the file ends in the "
        f"middle of it: a run still writing, or one that was killed): {cut.value}. The 2 episodes read before it are shown."]
    compare = get(client, "/view/compare", a=f"{folder}/killed.jsonl", b=f"{folder}/good.jsonl").text
    assert html.unescape(re.findall(r'<p class="problem file-problem" role="note">(.*?)</p>', compare, flags=re.S)[0]) == (
        f"A (<code>{folder}/killed.jsonl</code>): " + html.unescape(notes[0]))
    assert 'class="problem file-problem"' not in get(client, f"/view/episodes/{folder}/good.jsonl").text


@pytest.mark.parametrize("content, status, message", [
    ("{not json\n", 422, "line 1 of"),
    ('{"type": "step"}\n', 422, "is not a recording header"),
    ('{"type": "header", "env_id": "stillweb/WikiQA-v0", "kwargs": {}}\n{"type": "step", "action": "x"}\n', 422, "without observation"),
    ('{"type": "header", "env_id": "stillweb/WikiQA-v0", "kwargs": {}}\n', 422, "no episodes"),
    ("", 422, "is empty"),
    # a number past int()'s 4300-digit limit: json.loads raises a ValueError that is not a JSONDecodeError
    pytest.param('{"type": "header", "env_id": "stillweb/WikiQA-v0", "kwargs": {}}\n{"type": "reset", "n": ' + "7" * 5000 + "}\n",
                 422, "line 2 of", id="5000-digit-number"),
])
def test_a_corrupt_trajectory_gets_a_clear_page(tmp_path, small_snapshot, content, status, message):
    (tmp_path / "bad.jsonl").write_text(content, encoding="utf-8")
    client = TestClient(make_viewer_app(ViewerConfig(small_snapshot, episodes=(tmp_path / "bad.jsonl",))))
    page = client.get("/view/episodes/bad.jsonl")
    assert page.status_code == status and message in html.unescape(page.text) and 'role="alert"' in page.text
    assert client.get("/view/episodes").status_code == 200
    assert client.get("/view/compare", params={"a": "bad.jsonl", "b": "bad.jsonl"}).status_code == status


def test_a_missing_trajectory_gets_a_clear_page(tmp_path, small_snapshot):
    client = TestClient(make_viewer_app(ViewerConfig(small_snapshot, episodes=(tmp_path / "gone.jsonl", tmp_path))))
    page = client.get("/view/episodes/gone.jsonl")
    assert page.status_code == 404 and "does not exist" in page.text
    listing = client.get("/view/episodes")
    assert listing.status_code == 200 and "does not exist" in listing.text
    outside = client.get("/view/episodes/../../etc/passwd")
    assert outside.status_code == 404 and "root:" not in outside.text
