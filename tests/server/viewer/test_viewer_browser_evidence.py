"""Evidence at a glance in a real browser (headless Chromium, see ``test_viewer_browser.py``):
the jump to a document's first marked word brings it into view, a replay step marks the
task's evidence documents (screenshot ``viewer-evidence``) and its last step shows the gold
answer, and the play page keeps the latest step and the input together and shows the gold
answer at the end. Fixtures are in ``conftest.py``."""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

import pytest

from stillweb.corpora.snapshot.reading import Snapshot
from support.browser import shoot

pytestmark = [pytest.mark.extra, pytest.mark.slow]

IN_VIEW = """selector => {
  const element = document.querySelector(selector), box = element.getBoundingClientRect();
  const frame = element.closest("pre").getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight && box.top >= frame.top && box.bottom <= frame.bottom;
}"""


def late_word(text: str) -> str:
    """A word of ``text`` whose first appearance is as late as possible (so its mark starts out of view)."""
    firsts: dict[str, int] = {}
    for match in re.finditer(r"[A-Za-z]{7,}", text):
        firsts.setdefault(match.group().lower(), match.start())
    return max(firsts, key=lambda word: (firsts[word], word))


def test_the_jump_brings_the_first_mark_into_view(viewer, page):
    base, snapshot, _, _ = viewer
    opened = Snapshot.open(snapshot)
    document = max((opened.lookup(doc_id) for doc_id in range(len(opened))), key=lambda doc: (len(doc.text), -doc.doc_id))
    word = late_word(document.text)
    page.set_viewport_size({"width": 1280, "height": 420})
    page.goto(f"{base}/view/doc/{document.doc_id}?{urlencode({'q': word})}")
    assert page.locator("pre.doctext mark").count() >= 1
    assert not page.evaluate(IN_VIEW, "#first-match")  # the mark starts out of view: the jump has work to do
    page.click("#jump")
    page.wait_for_url("**#first-match")
    page.wait_for_function(f"({IN_VIEW})('#first-match')")
    assert page.locator("mark#first-match").inner_text().lower() == word


def test_a_replay_step_marks_the_evidence_and_the_last_step_the_gold_answer(viewer, page, screenshots):
    base, _, task, episodes = viewer
    evidence = set(task["evidence_docs"]) | {fact["doc_id"] for fact in task["evidence"]}
    records = [json.loads(line) for line in (episodes / "reference.jsonl").read_text(encoding="utf-8").splitlines()][2:]
    step = next(number for number, record in enumerate(records, start=1)
                if '"open"' in record["action"] and {item["doc_id"] for item in record["info"]["shown_docs"]} & evidence)
    page.goto(f"{base}/view/episodes/{episodes.name}/reference.jsonl?episode=0&step={step}")
    badge = page.locator("pre.observation a.evidence").first
    assert badge.is_visible() and int(badge.inner_text().strip("[]").split()[1]) in evidence
    assert page.evaluate("getComputedStyle(document.querySelector('pre.observation a.evidence'), '::after').content") == '"evidence"'
    line = page.locator("p.evidence-line.opened")
    assert line.is_visible() and line.inner_text().startswith("opened evidence: doc ")
    shoot(page, screenshots, "evidence")
    page.goto(f"{base}/view/episodes/{episodes.name}/reference.jsonl?episode=0&step={len(records)}")
    assert page.locator("table.gold td.gold-answer").inner_text() == task["answer"]
    assert page.locator("table.gold td.given").inner_text() == records[-1]["info"]["answer"]


def test_play_keeps_the_latest_step_by_the_input_and_shows_the_gold_answer(viewer, page):
    base, _, task, _ = viewer
    page.set_viewport_size({"width": 1280, "height": 500})
    page.goto(f"{base}/view/play?task_id={task['task_id']}")
    page.click("form.play-start button")
    page.wait_for_url("**/view/play/*")
    for query in (task["evidence"][0]["doc_title"], task["evidence"][-1]["doc_title"], task["answer"]):
        search = page.locator("form[data-tool=search]")
        search.locator("input[name='arg.query']").fill(query)
        search.locator("button").click()
        page.wait_for_url("**#latest")
    assert page.locator("div.transcript details.step.earlier").count() == 2
    assert page.locator("div.transcript div.step").count() == 1
    assert task["answer"] in page.locator("#latest pre.action").inner_text()
    latest = page.evaluate("document.getElementById('latest').getBoundingClientRect().top")
    assert -1 < latest < 40  # the browser opened the page at the latest step (to the pixel), the input just below it
    below = page.evaluate("document.querySelector('section.act').getBoundingClientRect().top - document.getElementById('latest').getBoundingClientRect().bottom")
    assert 0 <= below < 60
    page.fill("textarea#action", "<answer>Surely Not This</answer>")
    page.click("form.raw button")
    page.wait_for_selector("#result")
    assert page.locator("#result td.gold-answer").inner_text() == task["answer"]
    assert page.locator("#result td.given").inner_text() == "Surely Not This"
