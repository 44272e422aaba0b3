"""The viewer as a newcomer meets it, in headless Chromium: every page of the top bar, a
task, a document, an episode step by step and all its steps, a comparison and the health
page load without a console error or a failed request (a missing resource, the browser's
own /favicon.ico included), fit the window without a horizontal scroll bar, and every link
on them answers. Fixtures are in ``conftest.py``, helpers in ``support/browser.py``."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest

pytestmark = [pytest.mark.extra, pytest.mark.slow]


def test_every_page_loads_cleanly_fits_and_links_to_pages_that_answer(viewer, browser):
    base, _, task, episodes = viewer
    name = f"{episodes.name}/reference.jsonl"
    pages = ["/view/", "/view/search?q=river", "/view/tasks", f"/view/tasks/{task['task_id']}",
             f"/view/doc/{task['evidence'][0]['doc_id']}?q=river", "/view/episodes", f"/view/episodes/{name}?step=1",
             f"/view/episodes/{name}?view=all", f"/view/compare?a={name}&b={episodes.name}/reference-openai.jsonl",
             "/view/health", "/view/play"]
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}") if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
    try:
        links: set[str] = set()
        for path in pages:
            response = page.goto(base + path)
            assert response.status == 200, path
            page.wait_for_load_state("load")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 1280, f"{path}: the page is {width} px wide in a 1280 px window"
            links |= {urljoin(page.url, href).split("#")[0] for href in page.eval_on_selector_all("a[href]", "all => all.map(a => a.getAttribute('href'))")}
        assert problems == [], problems
        dead = [(link, status) for link in sorted(links) if link.startswith(base)
                for status in [page.request.get(link).status] if status >= 400]
        assert dead == [], dead
    finally:
        context.close()
