"""The runs table at /view/episodes (FastAPI TestClient): every episode of every file, sorted
(checked against an independent sort of summarize_recording's output), filtered, aggregated
(checked against a direct computation), paged; bad parameters get an HTML page naming the
bad value and the valid choices; damaged, cut and other-snapshot files are listed with the
reason and their episodes marked; a growing file is followed; two processes, same bytes."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from urllib.parse import unquote

import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.runs.run_summary import ENDINGS, summarize_recording
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from stillweb.server.viewer.runs import PAGE_ROWS
from support.runs_data import SYNTHETIC_EPISODES, bench_viewer, runs_directories
from support.viewer_data import record_reference_episode, viewer_snapshot


@pytest.fixture(scope="module")
def runs(small_snapshot, tmp_path_factory):
    """(client, snapshot, the two episode directories, every EpisodeSummary, name -> RecordingSummary)."""
    folder = tmp_path_factory.mktemp("runs")
    snapshot = viewer_snapshot(small_snapshot, folder)
    tasks = [task.to_row() for task in read_tasks(snapshot, "viewer", "train")[:2]]
    directories = runs_directories(snapshot, tasks, folder / "episodes", Snapshot.open(snapshot).fingerprint)
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=directories)))
    summaries = {f"{directory.name}/{path.name}": summarize_recording(path, f"{directory.name}/{path.name}")
                 for directory in directories for path in sorted(directory.glob("*.jsonl"))}
    episodes = [episode for summary in summaries.values() for episode in summary.episodes]
    return client, snapshot, directories, episodes, summaries


def table_rows(page: str) -> list[tuple[str, int, bool]]:
    """(file, episode index, marked) of each row of the runs table on ``page``."""
    body = page.split('<table class="list runs">')[1].split("</tbody>")[0].split("<tbody>")[1]
    rows = re.findall(r'<tr( class="marked")?>\s*<td>.*?<a href="/view/episodes/([^"?]+)\?episode=(\d+)">', body, flags=re.S)
    assert body.count("<tr") == len(rows) or (not rows and 'class="empty"' in body)
    return [(unquote(name), int(index), bool(marked)) for marked, name, index in rows]


def every_row(client, **params) -> list[tuple[str, int, bool]]:
    """The rows of every page of the table for ``params``, in order."""
    rows, page = [], 1
    while True:
        response = client.get("/view/episodes", params={**params, "page": page})
        assert response.status_code == 200, html.unescape(response.text)
        rows += table_rows(response.text)
        pages = int(re.search(r"page \d+ of (\d+),", response.text).group(1))
        if page >= pages:
            return rows
        page += 1


def figure(page: str, name: str) -> str:
    return html.unescape(re.search(rf'<dd data-figure="{name}">(.*?)</dd>', page, flags=re.S).group(1))


def keyed(episodes, key):
    return [(episode.file, episode.index) for episode in episodes if key(episode)]


def test_every_episode_of_every_file_is_a_row(runs):
    client, _, _, episodes, summaries = runs
    assert len(episodes) > SYNTHETIC_EPISODES + 4
    rows = every_row(client)
    assert [(name, index) for name, index, _ in rows] == [(e.file, e.index) for e in sorted(episodes, key=lambda e: (e.file, e.index))]
    page = client.get("/view/episodes").text
    assert len(table_rows(page)) == PAGE_ROWS and f"{len(episodes)} of {len(episodes)} episodes, page 1 of {-(-len(episodes) // PAGE_ROWS)}" in page
    files = page.split('<table class="list files">')[1].split("</table>")[0]
    for name, summary in summaries.items():
        assert re.search(rf'<code>{re.escape(name)}</code></a></td>\s*<td>[^<]*</td><td class="num">{len(summary.episodes)}</td>', files), name
    assert "Compare two episodes" in page and 'action="/view/compare"' in page


def test_cut_damaged_and_other_snapshot_files_are_listed_with_the_reason_and_marked(runs):
    client, _, _, episodes, summaries = runs
    page = client.get("/view/episodes").text
    files = html.unescape(page.split('<table class="list files">')[1].split("</table>")[0])
    status = {name: row for name, row in re.findall(r"<code>([^<]+)</code></a></td>(.*?)</tr>", files, flags=re.S)}
    assert "ends in the middle" in status["recorded/killed.jsonl"] and "line " in status["recorded/killed.jsonl"]
    assert "is not JSON" in status["recorded/damaged.jsonl"]
    assert "another snapshot" in status["recorded/other-snapshot.jsonl"] and "000000000000" in status["recorded/other-snapshot.jsonl"]
    assert '<span class="ok">ok</span>' in status["recorded/reference.jsonl"]
    marked_files = {"recorded/killed.jsonl", "recorded/damaged.jsonl", "recorded/other-snapshot.jsonl"}
    rows = every_row(client, file="recorded/killed.jsonl") + every_row(client, file="recorded/other-snapshot.jsonl") \
        + every_row(client, file="recorded/reference.jsonl")
    assert len(rows) == sum(len(summaries[name].episodes) for name in ("recorded/killed.jsonl", "recorded/other-snapshot.jsonl",
                                                                        "recorded/reference.jsonl"))
    assert len(summaries["recorded/killed.jsonl"].episodes) == 2 and len(summaries["recorded/damaged.jsonl"].episodes) == 1
    assert all(marked == (name in marked_files) for name, _, marked in rows)
    other = html.unescape(client.get("/view/episodes", params={"file": "recorded/other-snapshot.jsonl"}).text)
    assert 'class="flag" title="recorded on another snapshot (fingerprint 000000000000' in other


SORT_VALUES = {
    "file": lambda e: e.file,
    "episode": lambda e: e.index,
    "task": lambda e: (e.task_id is not None, e.task_id or ""),
    "env": lambda e: e.env_id,
    "ending": lambda e: ENDINGS.index(e.ending),
    "outcome": lambda e: (e.outcome is not None, e.outcome or 0.0),
    "reward": lambda e: e.reward,
    "turns": lambda e: e.turns,
    "truncation": lambda e: (e.truncation_reason is not None, e.truncation_reason or ""),
    "flags": lambda e: sum(count for _, count in e.flags),
    "policy": lambda e: (e.policy_version is not None, e.policy_version or 0),
}


@pytest.mark.parametrize("sort", sorted(SORT_VALUES))
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_sorting_is_by_the_column_then_file_then_episode(runs, sort, order):
    client, _, _, episodes, _ = runs
    expected = sorted(episodes, key=lambda e: (e.file, e.index))
    expected.sort(key=SORT_VALUES[sort], reverse=order == "desc")  # stable: ties keep file, episode order
    wanted = [(e.file, e.index) for e in expected]
    first = client.get("/view/episodes", params={"sort": sort, "order": order}).text
    last = client.get("/view/episodes", params={"sort": sort, "order": order, "page": 2}).text
    assert [(name, index) for name, index, _ in table_rows(first) + table_rows(last)] == wanted[:2 * PAGE_ROWS]
    assert "class=\"sorted " + order in first


@pytest.mark.parametrize("params, caption", [
    ({}, "sorted by file (asc), then episode."),
    ({"sort": "file", "order": "desc"}, "sorted by file (desc), then episode."),
    ({"sort": "episode"}, "sorted by episode (asc), then file."),
    ({"sort": "reward", "order": "desc"}, "sorted by reward (desc), then file and episode."),
    ({"sort": "task"}, "sorted by task (asc), then file and episode."),
])
def test_the_caption_names_the_tie_break_without_repeating_the_sort_key(runs, params, caption):
    client = runs[0]
    assert caption in client.get("/view/episodes", params=params).text


@pytest.mark.parametrize("params, keep", [
    ({"ending": "truncated"}, lambda e: e.ending == "truncated"),
    ({"ending": "unfinished"}, lambda e: e.ending == "unfinished"),
    ({"flag": "near_miss_call"}, lambda e: dict(e.flags).get("near_miss_call", 0) > 0),
    ({"flag": "none"}, lambda e: not e.flags),
    ({"file": "synthetic/run-001.jsonl"}, lambda e: e.file == "synthetic/run-001.jsonl"),
    ({"env": "stillweb/Lookup-v0"}, lambda e: e.env_id == "stillweb/Lookup-v0"),
    ({"outcome": "1"}, lambda e: e.outcome == 1.0),
    ({"outcome": "none"}, lambda e: e.outcome is None),
    ({"truncation": "max_turns"}, lambda e: e.truncation_reason == "max_turns"),
    ({"truncation": "none"}, lambda e: e.truncation_reason is None),
    ({"policy": "1"}, lambda e: e.policy_version == 1),
    ({"policy": "none"}, lambda e: e.policy_version is None),
    ({"reward_min": "1"}, lambda e: e.reward >= 1),
    ({"reward_max": "0.05", "turns_min": "3"}, lambda e: e.reward <= 0.05 and e.turns >= 3),
    ({"turns_max": "2", "ending": "terminated", "sort": "reward", "order": "desc"}, lambda e: e.turns <= 2 and e.ending == "terminated"),
])
def test_each_filter_keeps_exactly_its_episodes(runs, params, keep):
    client, _, _, episodes, _ = runs
    rows = every_row(client, **params)
    expected = keyed(episodes, keep)
    assert expected and sorted((name, index) for name, index, _ in rows) == sorted(expected)


def test_the_task_filter_and_its_text_box(runs):
    client, _, _, episodes, _ = runs
    task = sorted(e.task_id for e in episodes if e.file == "recorded/reference.jsonl")[0]
    rows = every_row(client, task=task)
    assert sorted((name, index) for name, index, _ in rows) == sorted(keyed(episodes, lambda e: e.task_id == task))
    assert {name for name, _, _ in rows} >= {"recorded/reference.jsonl", "recorded/killed.jsonl"}
    page = client.get("/view/episodes", params={"file": "recorded/reference.jsonl", "sort": "turns"}).text
    assert f'href="/view/episodes?sort=turns&amp;file=recorded%2Freference.jsonl&amp;task={task}" title="only this task"' in page


def test_aggregates_are_over_the_filtered_rows(runs):
    client, _, _, episodes, _ = runs
    for params, keep in (({}, lambda e: True), ({"env": "stillweb/WikiQA-v0", "turns_min": "2"}, lambda e: e.env_id == "stillweb/WikiQA-v0" and e.turns >= 2)):
        chosen = [e for e in episodes if keep(e)]
        page = client.get("/view/episodes", params=params).text
        assert figure(page, "episodes") == str(len(chosen))
        assert figure(page, "success_rate") == f"{100 * sum(e.success for e in chosen) / len(chosen):.1f}%"
        assert figure(page, "mean_reward") == f"{sum(e.reward for e in chosen) / len(chosen):.4f}"
        assert figure(page, "mean_turns") == f"{sum(e.turns for e in chosen) / len(chosen):.2f}"
        endings = " · ".join(f"{ending} {sum(e.ending == ending for e in chosen)}" for ending in ENDINGS)
        assert figure(page, "endings") == endings
        reasons = sorted({e.truncation_reason for e in chosen if e.truncation_reason})
        assert reasons
        for reason in reasons:
            count = sum(e.truncation_reason == reason for e in chosen)
            assert f'<span data-reason="{reason}">{reason} {count} ({100 * count / len(chosen):.1f}%)</span>' in page
        names = sorted({name for e in chosen for name, _ in e.flags})
        assert len(names) >= 3
        for name in names:
            raising = sum(1 for e in chosen if dict(e.flags).get(name))
            raised = sum(dict(e.flags).get(name, 0) for e in chosen)
            assert f'<span data-flag="{name}">{name} {raising} / {raised}</span>' in page
    empty = client.get("/view/episodes", params={"reward_min": "1000"}).text
    assert figure(empty, "episodes") == "0" and figure(empty, "mean_reward") == "–" and 'class="empty"' in empty


def test_paging_slices_the_sorted_rows_and_links_the_pages(runs):
    client, _, _, episodes, _ = runs
    pages = -(-len(episodes) // PAGE_ROWS)
    last = client.get("/view/episodes", params={"page": pages, "sort": "turns"}).text
    assert len(table_rows(last)) == len(episodes) - (pages - 1) * PAGE_ROWS
    assert 'rel="next"' not in last and f'href="/view/episodes?sort=turns&amp;page={pages - 1}"' in last
    middle = client.get("/view/episodes", params={"page": 2, "ending": "terminated"}).text
    assert 'rel="prev" href="/view/episodes?ending=terminated"' in middle and 'rel="next"' in middle


@pytest.mark.parametrize("params, named, choices", [
    ({"sort": "bogus"}, "sort 'bogus'", ["reward", "truncation", "policy"]),
    ({"order": "sideways"}, "order 'sideways'", ["asc", "desc"]),
    ({"ending": "exploded"}, "ending 'exploded'", ["'terminated'", "'truncated'", "'unfinished'"]),
    ({"flag": "<script>"}, "flag '<script>'", ["'near_miss_call'", "'none'"]),
    ({"file": "../etc/passwd"}, "file '../etc/passwd'", ["'recorded/reference.jsonl'"]),
    ({"task": "sw-nope"}, "task 'sw-nope'", ["more"]),
    ({"page": "0"}, "page 0 is out of range", ["pages 1 to"]),
    ({"page": "999"}, "page 999 is out of range", ["pages 1 to"]),
    ({"page": "two"}, "page 'two'", ["numbered from 1"]),
    ({"reward_min": "lots"}, "reward_min 'lots'", ["number"]),
    ({"turns_max": "nan"}, "turns_max 'nan'", ["whole number"]),
    ({"turns_min": "1" + "0" * 400}, "turns_min '1000", ["whole number"]),  # an int too large for a float
])
def test_bad_parameters_get_a_page_naming_the_value_and_the_choices(runs, params, named, choices):
    client = runs[0]
    response = client.get("/view/episodes", params=params)
    assert response.status_code == 422 and "text/html" in response.headers["content-type"]
    message = html.unescape(response.text.split('role="alert">')[1].split("</p>")[0])
    assert named in message and all(choice in message for choice in choices), message
    assert "<script>" not in response.text.split("<main>")[1].split('<script src="/view/static/viewer.js">')[0]


def test_each_row_links_to_its_episode_page(runs):
    client, _, _, _, _ = runs
    page = client.get("/view/episodes", params={"file": "recorded/reference.jsonl"}).text
    (row,) = table_rows(page)
    episode = client.get(f"/view/episodes/{row[0]}", params={"episode": row[1]})
    assert episode.status_code == 200 and "Re-run: identical to the recording." in client.get(
        f"/view/episodes/{row[0]}", params={"episode": row[1], "step": 1}).text
    synthetic = table_rows(client.get("/view/episodes", params={"file": "synthetic/run-002.jsonl", "page": 2}).text)[0]
    assert client.get(f"/view/episodes/{synthetic[0]}", params={"episode": synthetic[1]}).status_code == 200


def test_a_growing_file_is_followed(small_snapshot, tmp_path):
    bench = bench_viewer()
    fingerprint = Snapshot.open(small_snapshot).fingerprint
    (path,) = bench.write_synthetic_run(tmp_path / "live", 30, 1, fingerprint, seed=3)
    content = path.read_bytes()
    lines = content.splitlines(keepends=True)
    resets = [number for number, line in enumerate(lines) if b'"type":"reset"' in line]
    path.write_bytes(b"".join(lines[:resets[20]]) + lines[resets[20]][:10])  # 20 episodes and a cut line
    client = TestClient(make_viewer_app(ViewerConfig(small_snapshot, episodes=(tmp_path / "live",))))
    first = client.get("/view/episodes").text
    assert figure(first, "episodes") == "20" and "ends in the middle" in html.unescape(first)
    path.write_bytes(content)
    second = client.get("/view/episodes").text
    assert figure(second, "episodes") == "30" and "ends in the middle" not in html.unescape(second)
    expected = summarize_recording(path, "live/run-000.jsonl").episodes
    assert figure(second, "mean_reward") == f"{sum(e.reward for e in expected) / len(expected):.4f}"


def test_no_episodes_configured_still_shows_the_page(small_snapshot):
    page = TestClient(make_viewer_app(ViewerConfig(small_snapshot))).get("/view/episodes")
    assert page.status_code == 200 and "--episodes FILE_OR_DIR" in page.text and 'class="empty"' in page.text


DETERMINISM_SCRIPT = """
import hashlib, sys
from fastapi.testclient import TestClient
from stillweb.server.viewer import ViewerConfig, make_viewer_app
client = TestClient(make_viewer_app(ViewerConfig(sys.argv[1], tasks="viewer", episodes=tuple(sys.argv[2:]))))
for url in ["/view/episodes", "/view/episodes?sort=reward&order=desc&page=2", "/view/episodes?flag=near_miss_call&sort=task",
            "/view/episodes?ending=truncated&sort=policy&order=desc", "/view/episodes?sort=bogus"]:
    page = client.get(url)
    print(url, page.status_code, hashlib.sha256(page.content).hexdigest())
"""


@pytest.mark.slow
def test_the_table_is_identical_across_processes(runs):
    _, snapshot, directories, _, _ = runs
    outputs = [subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT, str(snapshot), *map(str, directories)],
                              capture_output=True, text=True, check=True).stdout for _ in range(2)]
    assert outputs[0] == outputs[1] and outputs[0].count(" 200 ") == 4 and outputs[0].count(" 422 ") == 1


def test_the_benchmark_recordings_are_deterministic(tmp_path):
    bench = bench_viewer()
    first = bench.write_synthetic_run(tmp_path / "a", 50, 2, "f" * 64, seed=5)
    second = bench.write_synthetic_run(tmp_path / "b", 50, 2, "f" * 64, seed=5)
    assert [path.read_bytes() for path in first] == [path.read_bytes() for path in second]
    assert sum(len(summarize_recording(path).episodes) for path in first) == 50


def test_the_index_reads_again_only_what_changed(small_snapshot, tmp_path):
    from stillweb.server.viewer.runs import RunIndex
    from stillweb.server.viewer.trajectories import TrajectoryFiles

    bench = bench_viewer()
    paths = bench.write_synthetic_run(tmp_path / "live", 60, 3, "f" * 64, seed=4)
    index = RunIndex(TrajectoryFiles([tmp_path / "live"]), "f" * 64)
    first = index.table()
    assert index.table() is first  # nothing changed: the same table, its sort orders kept
    columns = dict(index._columns)
    extra = bench.write_synthetic_run(tmp_path / "extra", 1, 1, "f" * 64, seed=9)[0].read_text(encoding="utf-8").splitlines(keepends=True)[1:]
    with paths[1].open("a", encoding="utf-8") as file:
        file.write("".join(extra))
    second = index.table()
    assert second is not first and len(second.episodes) == 61
    assert [index._columns[name] is columns[name] for name in sorted(columns)] == [True, False, True]
    assert second.episodes == tuple(e for path in paths for e in summarize_recording(path, f"live/{path.name}").episodes)


def test_a_filter_with_many_choices_is_a_text_box(runs, monkeypatch):
    from stillweb.server.viewer import runs as runs_module

    client = runs[0]
    assert '<select name="task">' in client.get("/view/episodes").text
    monkeypatch.setattr(runs_module, "MAX_OPTIONS", 5)
    page = client.get("/view/episodes").text
    assert '<input type="text" name="task" value=""' in page and '<select name="task">' not in page
    assert '<select name="ending">' in page  # three endings: still a drop-down


def test_number_choices_sort_the_same_whatever_the_set_order():
    from stillweb.server.viewer.runs import _number_order

    texts = ["nan", "1", "0.5", "-2", "inf"]
    orders = {tuple(sorted(texts[shift:] + texts[:shift], key=_number_order)) for shift in range(len(texts))}
    assert orders == {("-2", "0.5", "1", "inf", "nan")}


def test_files_of_the_same_name_are_all_listed(small_snapshot, tmp_path):
    from stillweb.server.viewer.trajectories import TrajectoryFiles

    snapshot = viewer_snapshot(small_snapshot, tmp_path)
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    folders = [tmp_path / side / "run" for side in ("a", "b")]
    for folder in folders:
        folder.mkdir(parents=True)
        record_reference_episode(snapshot, "viewer", task, folder / "episodes.jsonl")
    files = TrajectoryFiles([*folders, folders[0] / "episodes.jsonl"])
    assert [name for name, _ in files.listing()] == ["run/episodes.jsonl", "run/episodes.jsonl (2)", "episodes.jsonl"]
    assert [summary.path for summary in files.summaries()] == [folder / "episodes.jsonl" for folder in folders] + [folders[0] / "episodes.jsonl"]
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=tuple(folders))))
    page = client.get("/view/episodes").text
    assert len(table_rows(page)) == 2
    assert client.get("/view/episodes/run/episodes.jsonl (2)", params={"episode": 0}).status_code == 200


def test_pass_at_k_and_pass_hat_k_are_over_the_filtered_tasks(runs):
    from math import comb

    client, _, _, episodes, _ = runs
    shown = []
    for params, keep in (({}, lambda e: True), ({"turns_min": "2"}, lambda e: e.turns >= 2)):
        tries: dict[str, list[bool]] = {}
        for episode in episodes:
            if keep(episode) and episode.task_id is not None:
                tries.setdefault(episode.task_id, []).append(bool(episode.success))
        tries = {task: outcomes for task, outcomes in tries.items() if len(outcomes) >= 2}  # one try: no k of 2
        k = min(len(outcomes) for outcomes in tries.values())
        assert k >= 2 and len(tries) >= 3
        at_k = sum(1 - comb(len(o) - sum(o), k) / comb(len(o), k) for o in tries.values()) / len(tries)
        hat_k = sum(comb(sum(o), k) / comb(len(o), k) for o in tries.values()) / len(tries)
        page = client.get("/view/episodes", params=params).text
        assert figure(page, "pass_rates") == f"{at_k:.3f} / {hat_k:.3f}"
        assert f"(k={k}, {len(tries)} tasks)" in page
        assert hat_k < at_k  # the reliability of a run that is not always right is below its best of k
        shown.append(tries)
    assert shown[0] != shown[1]  # the filter leaves out episodes: the figures are over the filtered tasks
