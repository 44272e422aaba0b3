"""A named pipe given directly as ``--episodes PATH`` (files found in a directory are filtered with
``is_file()`` already): the viewer lists it with the reason "not a regular file" on every page that
lists or reads recordings and never opens it (opening a pipe for reading blocks until a writer
comes), and ``stillweb view`` starts and answers. The timeout markers turn a regression, a blocked
read, into a failure instead of a hang; they are not a speed check."""

from __future__ import annotations

import html
import os
import re

import httpx
import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from support.browser import start_viewer
from support.viewer_data import record_reference_episode, viewer_snapshot

REASON = "'pipe.jsonl' is not a regular file (a named pipe): recordings are read from regular files only"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes (os.mkfifo)")


@pytest.fixture(scope="module")
def piped(small_snapshot, tmp_path_factory):
    """(snapshot, the named pipe, a good recording) in a tmp dir."""
    folder = tmp_path_factory.mktemp("fifo")
    snapshot = viewer_snapshot(small_snapshot, folder)
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    good = record_reference_episode(snapshot, "viewer", task, folder / "good.jsonl")
    pipe = folder / "pipe.jsonl"
    os.mkfifo(pipe)
    return snapshot, pipe, good


def problem_of(page: str) -> str:
    """The text of an error page's message."""
    return html.unescape(re.search(r'<p class="problem" role="alert">(.*?)</p>', page, flags=re.S).group(1))


@pytest.mark.timeout(60, method="thread")  # a blocked read is in C: only the thread method ends it
def test_every_page_lists_the_pipe_with_its_reason_without_opening_it(piped):
    snapshot, pipe, good = piped
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(pipe, good))))
    runs = client.get("/view/episodes")
    assert runs.status_code == 200
    files = html.unescape(runs.text.split('<table class="list files">')[1])
    assert REASON in files and "good.jsonl" in files
    assert "/view/episodes/good.jsonl?episode=0" in runs.text  # the good file still shows
    health = client.get("/view/health")
    assert health.status_code == 200 and REASON in html.unescape(health.text) and "<svg" in health.text
    assert client.get("/view/health", params={"file": "pipe.jsonl"}).status_code == 200
    for params in ({}, {"view": "all"}, {"episode": 1}):
        page = client.get("/view/episodes/pipe.jsonl", params=params)
        assert page.status_code == 422 and problem_of(page.text) == REASON, params
    compare = client.get("/view/compare", params={"a": "pipe.jsonl", "b": "good.jsonl"})
    assert compare.status_code == 422 and problem_of(compare.text) == REASON
    assert client.get("/view/episodes/good.jsonl").status_code == 200


@pytest.mark.timeout(60, method="thread")  # a blocked read is in C: only the thread method ends it
def test_stillweb_view_starts_and_answers_with_a_pipe_as_episodes(piped):
    snapshot, pipe, _ = piped
    process, base = start_viewer(str(snapshot), "--tasks", "viewer", "--episodes", str(pipe))
    try:
        for path in ("/view/episodes", "/view/health"):
            response = httpx.get(base + path, timeout=None)
            assert response.status_code == 200 and REASON in html.unescape(response.text), path
    finally:
        process.terminate()
        process.wait()
