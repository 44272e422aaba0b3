"""The runs table in a real browser (headless Chromium against ``stillweb view`` in a child
process, over real and synthetic recordings): filter by a drop-down (applied on change by
viewer.js, and by the form's button with JavaScript off), sort by a column header, follow a
row to its episode. Fixtures are in ``conftest.py``, helpers in ``support/browser.py``."""

from __future__ import annotations

import pytest

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.files import read_tasks
from support.browser import shoot, start_viewer
from support.runs_data import runs_directories
from support.viewer_data import viewer_snapshot

pytestmark = [pytest.mark.extra, pytest.mark.slow]

ENDING, REWARD = 5, 7  # the table's columns (1-based, as nth-child counts them)


@pytest.fixture(scope="module")
def runs_viewer(small_snapshot, tmp_path_factory):
    """The base url of ``stillweb view`` over a few hundred recorded episodes."""
    folder = tmp_path_factory.mktemp("browser-runs")
    snapshot = viewer_snapshot(small_snapshot, folder)
    tasks = [task.to_row() for task in read_tasks(snapshot, "viewer", "train")[:2]]
    directories = runs_directories(snapshot, tasks, folder / "episodes", Snapshot.open(snapshot).fingerprint)
    process, base = start_viewer(str(snapshot), "--tasks", "viewer", *(argument for path in directories for argument in ("--episodes", str(path))))
    yield base
    process.kill()
    process.wait()


def column(page, number: int) -> list[str]:
    return page.locator(f"table.runs tbody tr td:nth-child({number})").all_inner_texts()


def test_filter_sort_and_follow_a_row(runs_viewer, page, screenshots):
    page.goto(f"{runs_viewer}/view/episodes")
    everything = int(page.locator("dd[data-figure=episodes]").inner_text())
    page.select_option("form.runs select[name=ending]", "truncated")  # viewer.js submits on change
    page.wait_for_url("**/view/episodes?ending=truncated")  # empty fields left out of the URL
    truncated = int(page.locator("dd[data-figure=episodes]").inner_text())
    assert 0 < truncated < everything
    assert set(column(page, ENDING)) == {"truncated"}
    page.click("table.runs thead a:text-is('reward')")
    page.wait_for_url("**sort=reward*")
    page.click("table.runs thead a:has-text('reward')")
    page.wait_for_url("**order=desc*")
    assert "ending=truncated" in page.url
    rewards = [float(text) for text in column(page, REWARD)]
    assert rewards == sorted(rewards, reverse=True) and len(rewards) == min(100, truncated)
    assert page.locator("table.runs thead a.sorted.desc").inner_text().startswith("reward")
    shoot(page, screenshots, "runs")
    first = page.locator("table.runs tbody tr").first.locator("a[href^='/view/episodes/']")
    target = first.get_attribute("href")
    first.click()
    page.wait_for_url(f"**{target}")
    assert "?episode=" in page.url and page.locator("nav.stepper").count() == 1


def test_the_form_works_without_javascript(runs_viewer, browser):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 860})
    try:
        page = context.new_page()
        page.goto(f"{runs_viewer}/view/episodes")
        page.select_option("form.runs select[name=flag]", "near_miss_call")
        page.select_option("form.runs select[name=sort]", "turns")
        page.select_option("form.runs select[name=order]", "desc")
        assert "flag=" not in page.url  # nothing submitted on change without the script
        page.click("form.runs button")
        page.wait_for_url("**flag=near_miss_call*")
        turns = [int(text) for text in column(page, 8)]
        assert turns and turns == sorted(turns, reverse=True)
        assert all("near_miss_call" in text for text in column(page, 10))
    finally:
        context.close()
