"""Whole trajectories in a real browser (headless Chromium, see ``test_viewer_browser.py``): the
strip of an all-steps page jumps to its step, the step-by-step page and the all-steps page link
to each other, and the compare page opens at, and jumps to, the first difference (without
JavaScript too). The formalization graph's relation labels, as drawn, do not overlap.
Fixtures are in ``conftest.py``; screenshots ``viewer-trajectory`` and ``viewer-compare``."""

from __future__ import annotations

import pytest

from support.browser import shoot
from support.viewer_data import record_actions, recorded_actions

pytestmark = [pytest.mark.extra, pytest.mark.slow]


@pytest.fixture(scope="module")
def changed(viewer) -> str:
    """The name of a recording of the reference agent's actions with the one at step 2 changed."""
    _, snapshot, task, episodes = viewer
    actions = recorded_actions(episodes / "reference.jsonl")
    record_actions(snapshot, "viewer", task, episodes / "changed.jsonl", [actions[0], HOSTILE_ACTION, *actions[2:]])
    return f"{episodes.name}/changed.jsonl"


HOSTILE_ACTION = "<script>window.__pwned = 4</script>Let me think, <b>without a tool call</b>."


def top_in_view(page, selector: str) -> float:
    """Where the element's top is, relative to the top of the viewport (px)."""
    return page.evaluate(f"document.querySelector({selector!r}).getBoundingClientRect().top")


def test_the_strip_jumps_to_a_step_and_the_pages_link_each_other(viewer, page, screenshots, changed):
    base, *_ = viewer
    page.goto(f"{base}/view/episodes/{changed}?episode=0&view=all")
    cells = page.locator("nav.strip a.cell")
    count = cells.count()
    assert count == page.locator("section.whole-step").count() > 5
    assert "flagged" in cells.nth(2).get_attribute("class") and "terminal" in cells.last.get_attribute("class")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("#step-2 pre.action").inner_text() == HOSTILE_ACTION
    shoot(page, screenshots, "trajectory")
    cells.nth(5).click()
    page.wait_for_url("**#step-5")
    assert 0 <= top_in_view(page, "#step-5") < 40
    assert page.locator("#step-5 .step h3").inner_text().startswith("step 5")
    page.locator("#step-5 a", has_text="open it step by step").click()
    page.wait_for_url("**step=5")
    assert page.locator("nav.stepper span").first.inner_text() == f"step 5 of {count - 1}"
    page.click("#all-steps")
    page.wait_for_url("**view=all#step-5")
    assert 0 <= top_in_view(page, "#step-5") < 40


def test_compare_opens_at_the_first_difference_and_jumps_back_to_it(viewer, page, browser, screenshots, changed):
    base, _, _, episodes = viewer
    page.goto(f"{base}/view/episodes")
    page.select_option("select[name=a]", f"{episodes.name}/reference.jsonl")
    page.select_option("select[name=b]", changed)
    page.click("form[action='/view/compare'] button")
    page.wait_for_url("**/view/compare*")
    page.wait_for_function("document.getElementById('first-difference').getBoundingClientRect().top < 40")
    assert 0 <= top_in_view(page, "#first-difference") < 40  # viewer.js scrolled to it
    marked = page.locator("tr.first-difference")
    assert marked.count() == 1 and "first difference: action, observation" in marked.inner_text()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    shoot(page, screenshots, "compare")
    page.evaluate("window.scrollTo(0, 0)")
    assert top_in_view(page, "#first-difference") > 200
    assert page.locator("#divergence").inner_text().startswith("First difference at step 2: action, observation")
    page.click("#jump")
    page.wait_for_url("**#first-difference")
    assert 0 <= top_in_view(page, "#first-difference") < 40
    plain = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 860})
    try:
        without_js = plain.new_page()
        without_js.goto(page.url.split("#")[0])
        assert top_in_view(without_js, "#first-difference") > 200  # nothing scrolls without JavaScript
        without_js.click("#jump")
        without_js.wait_for_url("**#first-difference")
        assert 0 <= top_in_view(without_js, "#first-difference") < 40
    finally:
        plain.close()


def test_drawn_relation_labels_do_not_overlap(viewer, page):
    base, _, task, _ = viewer
    page.goto(f"{base}/view/tasks/{task['task_id']}")
    boxes = page.evaluate("""Array.from(document.querySelectorAll('svg.formalization text')).map(text => {
        const box = text.getBBox(); return [text.classList.contains('relation'), box.x, box.y, box.x + box.width, box.y + box.height]; })""")
    labels = [box[1:] for box in boxes if box[0]]
    nodes = [[float(value) for value in box] for box in page.evaluate("""Array.from(document.querySelectorAll('svg.formalization g.node')).map(node => {
        const box = node.getBBox(); return [box.x, box.y, box.x + box.width, box.y + box.height]; })""")]
    assert len(labels) == len(task["formalization"]) >= 2
    meet = lambda a, b: a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]  # noqa: E731
    assert not [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:] if meet(a, b)]
    assert not [(a, b) for a in labels for b in nodes if meet(a, b)]
