"""The viewer in a real browser: headless Chromium (Debian's ``chromium``, driven by
Playwright through ``executable_path``) against ``stillweb view`` in a child process.

Search, a task page, a replay, a hand-played episode saved and replayed, and a
document whose text is ``<script>`` (shown, never run). Each test saves a
screenshot; with ``STILLWEB_SCREENSHOTS=DIR`` they go to DIR (how the README's
``docs/screenshots`` are made). Needs the ``test`` extra's playwright and
``scripts/install_chromium.sh``; CI (``STILLWEB_REQUIRE_EXTRAS=1``) fails rather than skips.
Fixtures are in ``conftest.py``, helpers in ``support/browser.py``.
"""

from __future__ import annotations

import pytest

from stillweb.cli.main import main as cli_main
from support.browser import shoot, start_viewer
from support.viewer_data import HOSTILE_DOC, HOSTILE_QUESTION, HOSTILE_TASK_ID, hostile_snapshot

pytestmark = [pytest.mark.extra, pytest.mark.slow]


def test_search_and_follow_links(viewer, page, screenshots):
    base, _, task, _ = viewer
    page.goto(f"{base}/view/")
    page.fill(".big-search input[name=q]", task["evidence"][0]["doc_title"])
    page.press(".big-search input[name=q]", "Enter")
    page.wait_for_url("**/view/search?q=*")
    first = page.locator("ol.hits li a").first
    assert first.inner_text() == task["evidence"][0]["doc_title"]
    words = {word.lower() for word in task["evidence"][0]["doc_title"].split()}
    marks = page.locator("ol.hits li").first.locator(".snippet mark, a mark").all_inner_texts()
    assert marks and {mark.lower() for mark in marks} <= words  # the query's words, marked
    shoot(page, screenshots, "search")
    first.click()
    page.wait_for_url("**/view/doc/*?q=*")
    assert page.locator("h1").inner_text() == task["evidence"][0]["doc_title"]
    assert page.locator("aside table.list tr").count() > 1  # the facts
    marked = page.locator("pre.doctext mark").all_inner_texts()
    assert marked and {mark.lower() for mark in marked} <= words
    assert page.locator("p.matches").inner_text().startswith(f"{len(marked)} match")
    shoot(page, screenshots, "document")
    page.click("#jump")
    page.wait_for_url("**#first-match")
    assert page.locator("mark#first-match").is_visible() and page.locator("mark#first-match").inner_text() == marked[0]
    page.click("#back")
    page.wait_for_url("**/view/search?q=*")
    assert page.locator(".big-search input[name=q]").input_value() == task["evidence"][0]["doc_title"]
    first = page.locator("ol.hits li a").first
    first.click()
    page.wait_for_url("**/view/doc/*?q=*")
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
    assert "different tasks" not in page.content()  # the compare screenshot: test_viewer_browser_trajectories.py


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
