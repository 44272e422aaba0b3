"""The viewer's whole-run views (FastAPI TestClient): all steps of an episode on one page
with its reward and flag strip, the compare page's first difference, numbers rounded for
reading, and formalization graphs whose relation labels never overlap."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from stillweb.server.viewer.formal_svg import LABEL_BASELINE, LABEL_HEIGHT, formalization_svg, label_width
from stillweb.server.viewer.pages import num, short_number
from support.viewer_data import record_actions, record_reference_episode, recorded_actions, viewer_snapshot


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


HOSTILE_ACTION = "<script>window.__pwned = 4</script>I will just think out loud here, <b>no tool call</b>."


@pytest.fixture(scope="module")
def runs(small_snapshot, tmp_path_factory):
    """(client, snapshot, task, episodes dir, file names): the reference episode, the same actions
    with the one at step 2 changed, an exact re-recording of the reference, and the reference's first 3 steps."""
    snapshot = viewer_snapshot(small_snapshot, tmp_path_factory.mktemp("trajectories"))
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    episodes = tmp_path_factory.mktemp("runs")
    reference = record_reference_episode(snapshot, "viewer", task, episodes / "reference.jsonl")
    actions = recorded_actions(reference)
    changed = [*actions[:1], HOSTILE_ACTION, *actions[2:]]
    record_actions(snapshot, "viewer", task, episodes / "changed.jsonl", changed)
    record_actions(snapshot, "viewer", task, episodes / "again.jsonl", actions)
    (episodes / "prefix.jsonl").write_text("".join(reference.read_text(encoding="utf-8").splitlines(keepends=True)[:5]), encoding="utf-8")
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(episodes,))))
    return client, snapshot, task, episodes


def test_numbers_are_rounded_for_reading_with_the_full_value_on_hover():
    assert str(num(0.9509900498999999)) == '<span class="num" title="0.9509900498999999">0.951</span>'
    assert [short_number(value) for value in (1.0, 3, -0.0, 12345.678, 1e-7, True, None)] == ["1", "3", "0", "12346", "1e-07", "true", "null"]
    assert short_number({"gamma_credits": [0.323533544973709, 1.0]}) == '{"gamma_credits": [0.324, 1]}'
    assert str(num("<b>")) == "&lt;b&gt;"


def test_reward_parts_show_rounded_and_the_raw_info_keeps_them_whole(runs):
    client, _, _, episodes = runs
    last = lines_of(episodes / "reference.jsonl")[-1]
    credits = last["info"]["reward_parts"]["gamma_credits"]
    assert any(len(repr(credit)) > 10 for credit in credits)  # long floats to round
    page = client.get(f"/view/episodes/{episodes.name}/reference.jsonl", params={"step": 999}).text
    parts = page.split('<table class="list parts">')[1].split("</table>")[0]
    shown = re.search(r"<th>gamma_credits</th><td><span class=\"num\" title=\"([^\"]*)\">([^<]*)</span>", parts)
    assert json.loads(html.unescape(shown.group(1))) == credits
    assert shown.group(2) == "[" + ", ".join(f"{credit:.3g}" if not float(credit).is_integer() else str(int(credit)) for credit in credits) + "]"
    visible = re.sub(r'title="[^"]*"', "", parts)
    assert repr(credits[0]) in parts and repr(credits[0]) not in visible  # the long digits only on hover
    raw = page.split("<summary>all info</summary>")[1].split("</pre>")[0]
    assert json.loads(html.unescape(raw.split("<pre>")[1]))["reward_parts"]["gamma_credits"] == credits


def records_of(path) -> list[dict]:
    """The reset and step records of a one-episode recording (the header left out)."""
    return lines_of(path)[1:]


def raised_a_flag(before: dict, info: dict) -> bool:
    """Whether a step's info raises a flag: action or tool flags, a grown hallucination count, masking."""
    counts, earlier = info.get("hallucination_counts") or {}, before.get("hallucination_counts") or {}
    return (bool(info.get("action_flags")) or any(info.get("tool_flags") or []) or info.get("mask_from_loss") is True
            or any(count > earlier.get(name, 0) for name, count in counts.items()))


def test_all_steps_on_one_page_under_a_strip_of_rewards_and_flags(runs):
    client, _, _, episodes = runs
    records = records_of(episodes / "changed.jsonl")
    page = client.get(f"/view/episodes/{episodes.name}/changed.jsonl", params={"episode": 0, "view": "all"})
    assert page.status_code == 200
    sections = re.findall(r'<section class="whole-step" id="step-(\d+)">(.*?)</section>', page.text, re.S)
    assert [int(index) for index, _ in sections] == list(range(len(records))) and len(records) > 5
    assert all(body.count('<div class="step') == 1 for _, body in sections)
    for (_, body), record in zip(sections[1:], records[1:]):
        assert f'<pre class="action">{escape(record["action"])}</pre>' in body
    strip = page.text.split('<nav class="strip"')[1].split("</nav>")[0]
    cells = re.findall(r'<a class="cell([^"]*)" href="#step-(\d+)" data-step="\d+" title="[^"]*">(.*?)</a>', strip, re.S)
    assert [int(index) for _, index, _ in cells] == list(range(len(records)))
    for (classes, _, body), record in zip(cells[1:], records[1:]):
        reward = re.search(r'<span class="reward"><span class="num" title="([^"]*)">([^<]*)</span>', body)
        assert float(reward.group(1)) == record["reward"] and reward.group(2) == short_number(record["reward"])
        assert ("terminal" in classes.split()) == (record["terminated"] or record["truncated"])
    flagged = [int(index) for classes, index, _ in cells if "flagged" in classes.split()]
    assert flagged == [index for index in range(1, len(records)) if raised_a_flag(records[index - 1]["info"], records[index]["info"])]
    assert flagged == [2]  # the changed step 2 is a format error; the running count stays 1 after it
    assert "terminal" in cells[-1][0] and sum("terminal" in classes for classes, _, _ in cells) == 1
    assert f'href="?episode=0&amp;step={len(records) - 1}">open it step by step' in page.text
    body = page.text.split("<main>")[1].split('<script src="/view/static/viewer.js">')[0]
    assert "<script" not in body and "<b>no" not in body and str(escape(HOSTILE_ACTION)) in body
    step_page = client.get(f"/view/episodes/{episodes.name}/changed.jsonl", params={"step": 3}).text
    assert 'id="all-steps" href="?episode=0&amp;view=all#step-3"' in step_page
    outline = step_page.split('<span class="outline">')[1].split("</span>")[0]
    assert [number for number, link in enumerate(outline.split("<a ")[1:]) if "flagged" in link] == flagged  # the same marks


@pytest.mark.parametrize("params, status, message", [
    ({"episode": 4, "view": "all"}, 422, "has episodes 0..0, not 4"),
    ({"view": "everything"}, 422, "view: Input should be"),
    ({"step": -1, "view": "all"}, 422, "step: Input should be greater than or equal to 0"),
])
def test_unknown_episodes_and_steps_get_an_error_page(runs, params, status, message):
    client, _, _, episodes = runs
    page = client.get(f"/view/episodes/{episodes.name}/changed.jsonl", params=params)
    assert page.status_code == status and "text/html" in page.headers["content-type"]
    assert 'role="alert"' in page.text and message in html.unescape(page.text)
    missing = client.get(f"/view/episodes/{episodes.name}/nope.jsonl", params={"view": "all"})
    assert missing.status_code == 404 and 'role="alert"' in missing.text


def independent_first_difference(a: list[dict], b: list[dict]) -> tuple[int | None, set[str]]:
    """The first record index where the recorded JSON of action, observation, reward, ending or
    reward parts differs (the flags left to the page), and those fields."""
    def plain(record, field):
        value = record["info"].get("reward_parts") if field == "reward_parts" else record.get(field)
        return json.dumps(value, sort_keys=True)
    fields = ("action", "observation", "reward", "terminated", "truncated", "reward_parts")
    for index, (left, right) in enumerate(zip(a, b)):
        differing = {field for field in fields if plain(left, field) != plain(right, field)}
        if differing:
            return index, differing
    return (None, set()) if len(a) == len(b) else (min(len(a), len(b)), set())


def compare_page(client, episodes, a, b):
    page = client.get("/view/compare", params={"a": f"{episodes.name}/{a}", "b": f"{episodes.name}/{b}"})
    assert page.status_code == 200
    return page.text


def test_compare_marks_and_links_the_first_difference(runs):
    client, _, _, episodes = runs
    index, fields = independent_first_difference(records_of(episodes / "reference.jsonl"), records_of(episodes / "changed.jsonl"))
    assert index == 2 and {"action", "observation"} <= fields
    page = compare_page(client, episodes, "reference.jsonl", "changed.jsonl")
    banner = re.search(r'<p class="divergence" id="divergence">First difference at step (\d+): ([a-z_, ]+) differs?\. '
                       r'<a id="jump" href="#first-difference">jump to the first difference</a></p>', page)
    assert banner and int(banner.group(1)) == index
    shown = set(banner.group(2).split(", "))
    assert shown - {"flags"} == fields and "flags" in shown  # the format error flags step 2 of one side only
    rows = page.split('<table class="compare">')[1].split("</table>")[0].split("<tr")[1:]
    marked = [number for number, row in enumerate(rows) if 'id="first-difference"' in row]
    assert marked == [index + 1] and 'class="first-difference"' in rows[index + 1]  # row 0 is the header
    assert rows[index + 1].count('<p class="divergence-note">first difference: ') == 2
    assert page.count("first-difference") == 3  # the row's id and class, and the link
    for name in ("reference.jsonl", "changed.jsonl"):  # each side's all-steps page, at that step
        assert f'href="/view/episodes/{episodes.name}/{name}?episode=0&amp;view=all#step-{index}">all steps</a>' in page
    body = page.split("<main>")[1].split('<script src="/view/static/viewer.js">')[0]
    assert "<script" not in body and "<b>no" not in body and str(escape(HOSTILE_ACTION)) in body


def test_compare_says_identical_and_counts_a_missing_step_as_the_difference(runs):
    client, _, _, episodes = runs
    assert independent_first_difference(records_of(episodes / "reference.jsonl"), records_of(episodes / "again.jsonl")) == (None, set())
    for a, b in (("reference.jsonl", "again.jsonl"), ("changed.jsonl", "changed.jsonl")):
        page = compare_page(client, episodes, a, b)
        assert '<p class="ok" id="divergence">Identical' in page and "first-difference" not in page
    prefix = records_of(episodes / "prefix.jsonl")
    assert independent_first_difference(records_of(episodes / "reference.jsonl"), prefix) == (len(prefix), set())
    longer_first = compare_page(client, episodes, "reference.jsonl", "prefix.jsonl")
    assert f"First difference at step {len(prefix)}: only A has it." in longer_first
    shorter_first = compare_page(client, episodes, "prefix.jsonl", "reference.jsonl")
    assert f"First difference at step {len(prefix)}: only B has it." in shorter_first
    rows = shorter_first.split('<table class="compare">')[1].split("<tr")[1:]
    assert 'id="first-difference"' in rows[len(prefix) + 1]


def label_and_node_boxes(svg: str) -> tuple[list[tuple[str, tuple]], list[tuple]]:
    """From an SVG of formalization_svg: (label text, box) of every relation label, using the
    module's width estimate (the browser test checks it against the drawn text), and every node's box."""
    labels = []
    for x, y, text in re.findall(r'<text x="([-\d.]+)" y="([-\d.]+)" text-anchor="middle" class="relation"><title>[^<]*</title>([^<]*)</text>', svg):
        half = label_width(html.unescape(text)) / 2
        labels.append((html.unescape(text), (float(x) - half, float(y) - LABEL_HEIGHT + LABEL_BASELINE, float(x) + half, float(y) + LABEL_BASELINE)))
    nodes = [(float(x), float(y), float(x) + float(w), float(y) + float(h))
             for x, y, w, h in re.findall(r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"', svg)]
    nodes += [(float(x) - float(rx), float(y) - float(ry), float(x) + float(rx), float(y) + float(ry))
              for x, y, rx, ry in re.findall(r'<ellipse cx="([-\d.]+)" cy="([-\d.]+)" rx="([\d.]+)" ry="([\d.]+)"', svg)]
    nodes += [(float(x) - float(r), float(y) - float(r), float(x) + float(r), float(y) + float(r))
              for x, y, r in re.findall(r'<circle cx="([-\d.]+)" cy="([-\d.]+)" r="([\d.]+)"', svg)]
    return labels, nodes


def overlapping(boxes_a, boxes_b=None) -> list[tuple]:
    """Pairs of boxes (left, top, right, bottom) whose insides meet (each pair once within one list)."""
    pairs = [(a, b) for i, a in enumerate(boxes_a) for b in (boxes_a[i + 1:] if boxes_b is None else boxes_b)]
    return [(a, b) for a, b in pairs if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]


def assert_labels_apart(triples) -> str:
    svg = str(formalization_svg(triples))
    labels, nodes = label_and_node_boxes(svg)
    assert len(labels) == len([triple for triple in triples if len(triple) == 3])
    width, height = (float(value) for value in re.search(r'width="(\d+)" height="(\d+)"', svg).groups())
    boxes = [box for _, box in labels]
    assert overlapping(boxes) == [], triples
    assert overlapping(boxes, nodes) == [], triples
    assert all(box[0] >= 0 and box[1] >= 0 and box[2] <= width and box[3] <= height for box in boxes)
    return svg


BUSY = [["?", "the_director_of_the_film", "V@A"], ["V@A", "alma_mater_of_the_person", "C@University of Aor"],
        ["V@A", "birth_date_in_the_calendar", "C@1919-08-25"], ["V@A", "member_of_the_committee", "V@B"],
        ["V@A", "spouse", "C@Lia"], ["V@A", "award_received_in_1950s", "C@Golden Bear"], ["V@C", "alma_mater_of_the_person", "V@B"],
        ["V@B", "country", "C@Zairpirora"], ["V@B", "founded", "C@1638"], ["V@C", "occupation", "C@Scientist"],
        ["?", "starring", "V@D"], ["C@Song", "starring", "V@D"], ["V@A", "mentor_of_the_student_now", "V@C"]]


def test_formalization_labels_never_overlap_each_other_or_a_node(runs):
    _, snapshot, _, _ = runs
    busy = assert_labels_apart(BUSY)
    assert sum(1 for triple in BUSY if "V@A" in (triple[0], triple[2])) >= 6 and "…" in busy  # long names shortened
    star = [["V@Hub", f"a_rather_long_relation_{number:02d}", f"C@Value {number}"] for number in range(12)]
    star += [["?", "hub_of", "V@Hub"], ["V@Hub", "same_pair_again", "C@Value 0"], ["C@Value 3", "back_to_the_hub", "V@Hub"]]
    assert_labels_apart(star)
    parallel = [["?", "found_by", "V@A"]] + [["V@A", f"relation_number_{number:02d}", "C@B"] for number in range(16)]
    crowded = assert_labels_apart(parallel)
    assert crowded.count('class="leader"') >= 1  # no spot left on the crowded edge: the band under the graph
    tasks = [task for split in ("train", "dev", "test") for task in read_tasks(snapshot, "viewer", split)]
    assert len(tasks) >= 10 and max(len(task.formalization) for task in tasks) >= 5
    for task in tasks:
        assert_labels_apart(task.formalization)
    assert formalization_svg(parallel) == formalization_svg([list(triple) for triple in parallel])  # deterministic


def test_formalization_labels_stay_escaped_and_apart_for_hostile_relations():
    triples = [["?", "<script>alert(1)</script>", "V@A"], ["V@A", "&amp; \"quoted\" <b>", "C@<img src=x>"],
               ["V@A", "<b>", "C@x"], ["V@A", "<b>", "C@y"], ["V@A", "<b>", "C@z"]]
    svg = assert_labels_apart(triples)
    assert "<script>" not in svg and "<b>" not in svg and "<img" not in svg and "&lt;script&gt;" in svg


DETERMINISM_SCRIPT = """
import hashlib, sys
from fastapi.testclient import TestClient
from stillweb.server.viewer import ViewerConfig, make_viewer_app
snapshot, episodes = sys.argv[1:3]
client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(episodes,))))
folder = episodes.rstrip("/").rsplit("/", 1)[1]
for url in ["/view/episodes/" + folder + "/changed.jsonl?view=all", "/view/compare?a=" + folder + "/reference.jsonl&b=" + folder + "/changed.jsonl",
            "/view/compare?a=" + folder + "/prefix.jsonl&b=" + folder + "/reference.jsonl"]:
    page = client.get(url)
    print(url, page.status_code, hashlib.sha256(page.content).hexdigest())
"""


@pytest.mark.slow
def test_whole_run_pages_are_identical_across_processes(runs):
    _, snapshot, _, episodes = runs
    outputs = [subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT, str(snapshot), str(episodes)],
                              capture_output=True, text=True, check=True).stdout for _ in range(2)]
    assert outputs[0] == outputs[1] and outputs[0].count(" 200 ") == 3


def test_an_episode_record_sums_only_numeric_rewards_and_names_only_a_text_task():
    """A recording is file input: rewards that are text, lists or integers past a float, and a task id
    that is not text, never raise on the replay and compare pages (they count as the runs table counts them)."""
    from stillweb.server.viewer.trajectories import EpisodeRecord

    step = lambda reward: (3, {"type": "step", "reward": reward})  # noqa: E731
    record = EpisodeRecord(0, (2, {"type": "reset", "info": {"task_id": [1, 2]}}), tuple(map(step, [0.5, "<b>", [1], None, True])))
    assert record.reward == 0.5 and record.task_id is None
    assert EpisodeRecord(0, (2, {"info": {"task_id": "t"}}), (step(10 ** 400), step(1))).reward == float("inf")
    assert EpisodeRecord(0, (2, {"info": {"task_id": "t"}}), ()).task_id == "t"


@pytest.mark.parametrize("parts", [["<script>window.__pwned = 5</script>"], "<script>window.__pwned = 5</script>", 3])
def test_recorded_reward_parts_that_are_not_a_dict_show_as_escaped_json(parts):
    """info["reward_parts"] is file input: a list or a string made the replay pages a 500 (dictsort)."""
    from stillweb.server.viewer.pages import pretty_json, render

    page = render("_reward_parts.html", parts=parts).body.decode()
    assert "<script>" not in page and f'<pre class="parts">{escape(pretty_json(parts))}</pre>' in page
    table = render("_reward_parts.html", parts={"outcome": 1.0, "<b>": 0.25}).body.decode()
    assert "<th>&lt;b&gt;</th>" in table and '<span class="num" title="0.25">0.25</span>' in table
