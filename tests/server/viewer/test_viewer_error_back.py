"""Error pages link a way back that keeps the user's place, beside "Back to the start page": a bad
runs-table parameter to the table with the other, valid parameters kept; a bad health parameter to
/view/health; a bad episode to the file's first episode, an unknown file to the runs table; a bad
search k to the same search with the default k; any parameter that fails validation to the same
page without it. Every way back answers 200 (FastAPI TestClient)."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.sandboxes.tools.search import DEFAULT_K
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from support.viewer_data import record_reference_episode, viewer_snapshot


@pytest.fixture(scope="module")
def client(small_snapshot, tmp_path_factory):
    """A viewer over the small snapshot with one recorded episode, ``runs/reference.jsonl``."""
    folder = tmp_path_factory.mktemp("back")
    snapshot = viewer_snapshot(small_snapshot, folder)
    task = read_tasks(snapshot, "viewer", "train")[0].to_row()
    runs = folder / "runs"
    runs.mkdir()
    record_reference_episode(snapshot, "viewer", task, runs / "reference.jsonl")
    return TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(runs,))))


def ways_back(client, url, **params) -> list[tuple[str, str]]:
    """(href, label) of the links of the error page at ``url``, after checking it is one."""
    response = client.get(url, params=params)
    assert 400 <= response.status_code < 500 and 'role="alert"' in response.text, (url, params, response.status_code)
    links = response.text.split('role="alert"')[1]
    return [(html.unescape(href), html.unescape(label)) for href, label in re.findall(r'<a[^>]* href="([^"]*)">([^<]*)</a>', links)]


@pytest.mark.parametrize("url, params, back", [
    ("/view/episodes", {"sort": "reward", "order": "desc", "ending": "exploded"}, "/view/episodes?sort=reward&order=desc"),
    ("/view/episodes", {"ending": "terminated", "page": "999"}, "/view/episodes?ending=terminated"),
    ("/view/episodes", {"sort": "bogus", "order": "sideways", "reward_min": "0"}, "/view/episodes?reward_min=0"),
    ("/view/episodes", {"task": "sw-nope"}, "/view/episodes"),
    ("/view/health", {"file": "nope.jsonl"}, "/view/health"),
    ("/view/health", {"file": "runs/reference.jsonl", "by": "moon"}, "/view/health?file=runs%2Freference.jsonl"),
    ("/view/health", {"window": "0", "by": "episode"}, "/view/health?by=episode"),
    ("/view/episodes/runs/reference.jsonl", {"episode": "7"}, "/view/episodes/runs/reference.jsonl"),
    ("/view/episodes/runs/reference.jsonl", {"episode": "-1", "view": "all"}, "/view/episodes/runs/reference.jsonl?view=all"),
    ("/view/episodes/runs/nope.jsonl", {}, "/view/episodes"),
    ("/view/compare", {"a": "runs/nope.jsonl", "b": "runs/reference.jsonl"}, "/view/episodes"),
    ("/view/search", {"q": "river & sea", "k": "0"}, "/view/search?q=river+%26+sea"),
    ("/view/search", {"q": "river", "k": "many"}, "/view/search?q=river"),
])
def test_an_error_page_links_back_to_where_the_user_was_and_to_the_start_page(client, url, params, back):
    links = ways_back(client, url, **params)
    assert links[0][0] == back and links[-1] == ("/view/", "Back to the start page"), links
    assert client.get(back).status_code == 200, back


def test_the_way_back_names_what_it_leaves_out(client):
    links = ways_back(client, "/view/episodes", sort="bogus", order="sideways", reward_min="0")
    assert links[0] == ("/view/episodes?reward_min=0", "Back to the episodes without sort, order")
    assert ways_back(client, "/view/search", q="x", k="0")[0][1] == f"Search again with the default k ({DEFAULT_K})"
