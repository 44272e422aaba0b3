"""A Chinese snapshot in the viewer, in headless Chromium: the search marks the query's terms in
Han text, the document page marks and jumps to them, and the Han characters are drawn as glyphs
(a font with them is installed by scripts/install_chromium.sh), not as boxes. Saves screenshots
(``viewer-chinese-search.png``, ``viewer-chinese-document.png``). Fixtures are in ``conftest.py``."""

from __future__ import annotations

import pytest

from support.browser import shoot, start_viewer
from support.chinese import CAPITAL_TASK, chinese_task_snapshot

pytestmark = [pytest.mark.extra, pytest.mark.slow]

# Draws each character alone on a canvas in the page's font and returns the pixels: with a font that
# has Han glyphs they differ; without one every character is the same "missing glyph" box.
_PIXELS = """characters => characters.map(character => {
  const canvas = document.createElement('canvas'); canvas.width = 40; canvas.height = 40;
  const context = canvas.getContext('2d'); context.font = '32px ' + getComputedStyle(document.body).fontFamily;
  context.fillText(character, 2, 34);
  return Array.from(context.getImageData(0, 0, 40, 40).data).join(',');
})"""


@pytest.fixture(scope="module")
def chinese_viewer(tmp_path_factory):
    snapshot = chinese_task_snapshot(tmp_path_factory.mktemp("zh-viewer"))
    process, base = start_viewer(str(snapshot), "--tasks", "zh")
    yield base
    process.kill()
    process.wait()


def test_search_and_document_show_and_mark_han_text(chinese_viewer, page, screenshots):
    page.goto(f"{chinese_viewer}/view/")
    page.fill(".big-search input[name=q]", "中國的首都")
    page.press(".big-search input[name=q]", "Enter")
    page.wait_for_url("**/view/search?q=*")
    first = page.locator("ol.hits li a").first
    assert first.inner_text() == "北京"
    marks = page.locator("ol.hits li").first.locator(".snippet mark").all_inner_texts()
    assert any("首都" in mark for mark in marks) and all(mark in "中华人民共和国的首都" for mark in marks)  # runs of query bigrams
    pixels = page.evaluate(_PIXELS, ["北", "京", "首", "都"])
    assert len(set(pixels)) == 4, "Han characters are drawn as identical boxes: no font with Han glyphs (scripts/install_chromium.sh)"
    shoot(page, screenshots, "chinese-search")
    first.click()
    page.wait_for_url("**/view/doc/*?q=*")
    assert page.locator("h1").inner_text() == "北京"
    assert any("首都" in mark for mark in page.locator("pre.doctext mark").all_inner_texts())
    page.click("#jump")
    page.wait_for_url("**#first-match")
    assert page.locator("mark#first-match").is_visible()
    shoot(page, screenshots, "chinese-document")
    page.goto(f"{chinese_viewer}/view/tasks/{CAPITAL_TASK['task_id']}")
    assert CAPITAL_TASK["question"] in page.locator("body").inner_text()
