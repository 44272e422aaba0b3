"""The run-health page in headless Chromium: the SVG figures render, visible, with their
thresholds and warning markers where the collapse starts; a screenshot for the README."""

from __future__ import annotations

import pytest

from support.browser import shoot
from support.health_runs import collapsing_run

pytestmark = [pytest.mark.extra, pytest.mark.slow]


def test_health_page_renders_the_figures_with_markers(page, viewer, screenshots):
    base, _snapshot, _task, episodes = viewer
    collapsing_run(episodes / "collapse.jsonl", policy_version=3)
    page.goto(f"{base}/view/health?file={episodes.name}/collapse.jsonl&window=4&baseline=4")
    figures = page.locator("svg.health-figure")
    assert figures.count() == 7
    for index in range(7):
        box = figures.nth(index).bounding_box()
        assert box and box["width"] > 300 and box["height"] > 100  # drawn at a readable size, not collapsed
    markers = page.locator("svg.health-figure g.warning-marker")
    assert markers.count() == 4
    assert sorted(markers.nth(index).get_attribute("data-episode") for index in range(4)) == ["10", "9", "9", "9"]
    first = page.locator('svg[data-figure="action_length"] g.warning-marker circle')
    first.scroll_into_view_if_needed()
    assert first.is_visible()
    assert "WARNING length_up" in page.locator('svg[data-figure="action_length"] g.warning-marker title').text_content()
    assert page.locator("svg.health-figure g.threshold").count() == 5
    assert page.locator("pre.health-report").text_content().count("WARNING") == 4
    page.evaluate("document.querySelector('svg[data-figure=\"action_length\"]').scrollIntoView(); window.scrollBy(0, -12)")
    shoot(page, screenshots, "health")
    page.goto(f"{base}/view/health")  # every file merged: the two reference episodes and the run
    assert page.locator("svg.health-figure").count() == 7 and page.locator("nav a", has_text="Health").is_visible()
