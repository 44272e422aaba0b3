"""Fixtures of the viewer's browser tests (``test_viewer_browser*.py``): one headless Chromium
per test module, a fresh page per test (failing on any page error or dialog), ``stillweb view``
over the small snapshot with two recorded reference episodes, and the screenshot folder
(``STILLWEB_SCREENSHOTS=DIR`` writes them where the README's ``docs/screenshots`` come from)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stillweb.corpora.tasks.store.files import read_tasks
from support.browser import CHROMIUM, CHROMIUM_ARGS, start_viewer
from support.viewer_data import record_reference_episode, viewer_snapshot


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for one test module. Not for the session: Playwright's sync API keeps an asyncio
    loop running in the main thread while it is open, and a later test that runs its own loop
    (``anyio.run`` in docs/trainers.md's MCP block) fails with "Cannot run the event loop while another
    loop is running"."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed: run scripts/install_chromium.sh")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}") or dialog.dismiss())
    yield page
    context.close()
    assert errors == [], errors


@pytest.fixture(scope="module")
def viewer(small_snapshot, tmp_path_factory):
    """(base url, snapshot, a task, episodes dir) of ``stillweb view`` over the small snapshot."""
    snapshot = viewer_snapshot(small_snapshot, tmp_path_factory.mktemp("browser-viewer"))
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    episodes = tmp_path_factory.mktemp("browser-episodes")
    record_reference_episode(snapshot, "viewer", task, episodes / "reference.jsonl")
    record_reference_episode(snapshot, "viewer", task, episodes / "reference-openai.jsonl", tool_format="openai")
    process, base = start_viewer(str(snapshot), "--tasks", "viewer", "--episodes", str(episodes))
    yield base, snapshot, task, episodes
    process.kill()
    process.wait()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("STILLWEB_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
