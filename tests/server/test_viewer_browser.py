"""The viewer in a real browser: headless Chromium (Debian's ``chromium``, driven by
Playwright through ``executable_path``) against ``stillweb view`` in a child process.

Search, a task page, a replay, a hand-played episode saved and replayed, and a
document whose text is ``<script>`` (shown, never run). Each test saves a
screenshot; with ``STILLWEB_SCREENSHOTS=DIR`` they go to DIR (how the README's
``docs/screenshots`` are made). Needs the ``test`` extra's playwright and
``scripts/install_chromium.sh``; CI (``STILLWEB_REQUIRE_EXTRAS=1``) fails rather than skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from support.network import free_port
from stillweb.cli.main import main as cli_main
from stillweb.corpora.tasks.store import read_tasks
from support.viewer_data import HOSTILE_DOC, HOSTILE_QUESTION, HOSTILE_TASK_ID, hostile_snapshot, record_reference_episode, viewer_snapshot

pytestmark = [pytest.mark.extra, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def start_viewer(*arguments: str) -> tuple[subprocess.Popen, str]:
    """``stillweb view ARGUMENTS`` on a free loopback port; returns (process, base url) once /health answers."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "stillweb.cli.main", "view", *arguments, "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"stillweb view exited: {process.stderr.read().decode(errors='replace')[-2000:]}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("stillweb view did not answer within 60 s")


@pytest.fixture(scope="module")
def browser():
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


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("STILLWEB_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(page, folder: Path, name: str) -> None:
    path = folder / f"viewer-{name}.png"
    page.screenshot(path=str(path), full_page=False)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank one


def test_search_and_follow_links(viewer, page, screenshots):
    base, _, task, _ = viewer
    page.goto(f"{base}/view/")
    page.fill(".big-search input[name=q]", task["evidence"][0]["doc_title"])
    page.press(".big-search input[name=q]", "Enter")
    page.wait_for_url("**/view/search?q=*")
    first = page.locator("ol.hits li a").first
    assert first.inner_text() == task["evidence"][0]["doc_title"]
    shoot(page, screenshots, "search")
    first.click()
    page.wait_for_url("**/view/doc/*")
    assert page.locator("h1").inner_text() == task["evidence"][0]["doc_title"]
    assert page.locator("aside table.list tr").count() > 1  # the facts
    shoot(page, screenshots, "document")
    linked = page.locator("aside ul.links a").first
    title = linked.inner_text()
    linked.click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == title


def test_task_list_filter_and_task_page(viewer, page, screenshots):
    base, _, task, _ = viewer
    page.goto(f"{base}/view/tasks")
    page.select_option("select[name=split]", "train")
    page.click("form.filters button")
    page.wait_for_url("**split=train*")
    assert all(cell == "train" for cell in page.locator("table.tasks tr td:last-child").all_inner_texts())
    page.click(f"a[href='/view/tasks/{task['task_id']}']")
    page.wait_for_url(f"**/view/tasks/{task['task_id']}")
    graph = page.locator("svg.formalization")
    assert graph.is_visible() and graph.locator("g.node").count() >= 3
    assert page.locator("ol.calls li").count() >= 3
    shoot(page, screenshots, "task")
    page.click(f"table.list a[href='/view/doc/{task['evidence'][0]['doc_id']}']")
    page.wait_for_url(f"**/view/doc/{task['evidence'][0]['doc_id']}")


def test_replay_steps_and_compares(viewer, page, screenshots):
    base, _, task, episodes = viewer
    page.goto(f"{base}/view/episodes")
    page.click(f"a[href^='/view/episodes/{episodes.name}/reference.jsonl']")
    page.wait_for_url("**/reference.jsonl?episode=0")
    page.keyboard.press("ArrowRight")
    page.wait_for_url("**step=1")
    assert "identical to the recording" in page.locator("aside").inner_text()
    assert page.locator("div.parsed b").first.inner_text() == "search"
    page.keyboard.press("ArrowRight")
    page.wait_for_url("**step=2")
    shoot(page, screenshots, "replay")
    page.goto(f"{base}/view/episodes")
    page.select_option("select[name=a]", f"{episodes.name}/reference.jsonl")
    page.select_option("select[name=b]", f"{episodes.name}/reference-openai.jsonl")
    page.click("form[action='/view/compare'] button")
    page.wait_for_url("**/view/compare*")
    assert page.locator("table.compare tr").count() >= 3
    headers = page.locator("table.compare th").all_inner_texts()
    assert "reference.jsonl" in headers[0] and "reference-openai.jsonl" in headers[1]
    assert "different tasks" not in page.content()
    shoot(page, screenshots, "compare")


def test_play_by_hand_then_replay_the_download(viewer, page, screenshots, tmp_path):
    base, _, task, episodes = viewer
    page.goto(f"{base}/view/play?task_id={task['task_id']}")
    page.click("form.play-start button")
    page.wait_for_url("**/view/play/*")
    search = page.locator("form[data-tool=search]")
    search.locator("input[name='arg.query']").fill(task["evidence"][0]["doc_title"])
    search.locator("button").click()
    page.wait_for_load_state()
    assert page.locator("div.transcript div.step").count() == 1
    assert task["evidence"][0]["doc_title"] in page.locator("div.transcript pre.observation").last.inner_text()
    shoot(page, screenshots, "play")
    page.fill("textarea#action", f"<answer>{task['answer']}</answer>")
    page.click("form.raw button")
    page.wait_for_selector("#result")
    assert "Episode over: reward" in page.locator("#result").inner_text()
    with page.expect_download() as download:
        page.click("#download")
    saved = tmp_path / "played.jsonl"
    download.value.save_as(str(saved))
    assert cli_main(["replay", str(saved)]) == 0
    page.click("#save")
    page.wait_for_url(f"**/view/episodes/{episodes.name}/played-*")
    assert "identical to the recording" in page.content()


def test_script_text_is_shown_never_run(page, tmp_path, screenshots):
    process, base = start_viewer(str(hostile_snapshot(tmp_path)), "--tasks", "hostile")
    try:
        page.goto(f"{base}/view/doc/0")
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.locator("pre.doctext").inner_text() == HOSTILE_DOC
        shoot(page, screenshots, "escaped")
        page.goto(f"{base}/view/tasks/{HOSTILE_TASK_ID}")
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.locator("p.question").inner_text() == HOSTILE_QUESTION
        assert page.locator("img").count() == 0
        assert "<script>mentions</script>" in page.locator("svg.formalization").inner_html().replace("&lt;", "<").replace("&gt;", ">")
        page.goto(f"{base}/view/search?q=script+page")
        assert page.evaluate("typeof window.__pwned") == "undefined"
    finally:
        process.kill()
        process.wait()
