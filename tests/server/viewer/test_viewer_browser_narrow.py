"""The viewer in a narrow window (420 px), in headless Chromium: the runs table, an episode step by
step and all its steps, the health plots and a comparison scroll sideways inside their own boxes
(wide tables and figures sit in an ``overflow-x: auto`` wrapper), so the page itself never scrolls
sideways and the top bar's links stay in view. Fixtures are in ``conftest.py``."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.extra, pytest.mark.slow]

WIDTH = 420


def test_wide_content_scrolls_in_its_box_and_the_top_bar_stays_in_view(viewer, browser):
    base, _, _, episodes = viewer
    name = f"{episodes.name}/reference.jsonl"
    pages = ["/view/episodes", f"/view/episodes/{name}?step=1", f"/view/episodes/{name}?view=all", "/view/health",
             f"/view/compare?a={name}&b={episodes.name}/reference-openai.jsonl"]
    context = browser.new_context(viewport={"width": WIDTH, "height": 800})
    page = context.new_page()
    try:
        wide = []
        for path in pages:
            assert page.goto(base + path).status == 200, path
            page.wait_for_load_state("load")
            scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            outside = page.eval_on_selector_all(
                "header.top a", "links => links.filter(a => { const box = a.getBoundingClientRect();"
                " return box.left < 0 || box.right > window.innerWidth; }).map(a => a.textContent)")
            if scroll > inner + 2 or outside:
                wide.append((path, scroll, inner, outside))
        assert wide == [], f"pages wider than the {WIDTH} px window, or top-bar links out of view: {wide}"
        page.goto(base + "/view/episodes")  # the table is still all there: its box scrolls
        box = page.evaluate("(() => { const table = document.querySelector('table.runs');"
                            " const wrapper = table.parentElement; return [table.scrollWidth, wrapper.clientWidth,"
                            " getComputedStyle(wrapper).overflowX]; })()")
        assert box[0] > box[1] and box[2] == "auto", box
    finally:
        context.close()
