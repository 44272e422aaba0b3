"""Property-based fuzzing of every viewer page (hypothesis, FastAPI TestClient).

The GET routes under ``/view`` are listed from the app itself, so a page added later is
fuzzed without a change here. Each example is one request to one route with hostile path
values (path traversal, ``<script>``, NUL, percent-encoded junk, huge and negative numbers,
very long text) or with real ones (the recordings, tasks and documents the viewer has), and
random query parameters (the route's own, the runs table's, other pages', unknown keys).
The viewer reads a directory of damaged and hostile recordings (support.damaged_recordings).

Every answer: not a 5xx (``raise_server_exceptions=False``, so a crash shows as a failing
example naming its URL); an HTML page under ``/view`` (never a JSON error body), except the
static assets and a recording download; no markup sent is echoed raw; an error page says
what was wrong, naming the parameter or the value that was bad.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote, unquote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from stillweb.server.viewer.run_query import CHOICE_FILTERS, RANGE_FILTERS, SORT_KEYS
from support.damaged_recordings import DAMAGED, HOSTILE_VALUES, damaged_directory
from support.viewer_data import record_reference_episode, viewer_snapshot

PREFIX = "/view"
EXAMPLES = 150

# markup an attacker would send, and the raw fragment of each that must never come back unescaped
MARKUP = {
    "<script>fz()</script>": "<script>fz",
    "\"'><img src=x onerror=fz()>": "<img src=x",
    "<svg/onload=fz()>": "<svg/onload",
    "\" autofocus onfocus=\"fz()": "\" autofocus onfocus",
    "javascript:fz()//<b>": "javascript:fz()//<b>",
}
HOSTILE_TEXT = [
    *MARKUP, "", " ", "0", "-1", "-0", "1e400", "nan", "inf", "-inf", "1.5", "0x10", "²", "٣", "1_000", "+7",
    str(10 ** 40), "-" + str(10 ** 40), "9" * 1200, "a" * 3000, "../../etc/passwd", "..\\..\\windows\\win.ini",
    "/etc/passwd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "\x00", "a\x00b", "\ufffd", "\u202e\u2028\x85", "😀" * 50,
    "{{ 7 * 7 }}", "{% raw %}", "' OR 1=1 --", "title:(", "AND OR NOT", "*", "\"unterminated", "none", "None",
    "null", "[]", "{}", "true",
]
# percent-encoded junk sent as it is: invalid UTF-8, a UTF-8-encoded lone surrogate, NUL, a lone %
RAW_JUNK = ["%ff%fe", "%ED%A0%80", "%00", "%", "%zz", "%C0%AE%C0%AE%2F", "%E2%80%AE", "%25%00"]
KNOWN_KEYS = ["page", "episode", "step", "view", "a", "b", "ae", "be", "file", "window", "baseline", "by", "q", "k",
              "task_id", "split", "hops", "level", "shape", "sort", "order", *CHOICE_FILTERS, *RANGE_FILTERS]


def view_routes(app) -> list[tuple[str, frozenset[str]]]:
    """(path, its declared query parameter names) of every GET route and mount under ``/view``."""
    try:
        from fastapi.routing import iter_route_contexts  # FastAPI >= 0.123 keeps included routers as contexts
        routes = [(context.path, context.methods, context.original_route) for context in iter_route_contexts(app.router.routes)]
    except ImportError:
        routes = [(route.path, getattr(route, "methods", None), route) for route in app.routes]
    found = []
    for path, methods, route in routes:
        if not path or not path.startswith(PREFIX) or (methods is not None and "GET" not in methods):
            continue
        dependant = getattr(route, "dependant", None)
        names = frozenset(param.alias for param in dependant.query_params) if dependant is not None else frozenset()
        found.append((path if methods is not None else path + "/{path:path}", names))  # a mount serves paths below it
    return sorted(found)


@pytest.fixture(scope="module")
def fuzzed(small_snapshot, tmp_path_factory):
    """(client, routes, real values: recording names, task ids, doc ids and titles, sort keys)."""
    folder = tmp_path_factory.mktemp("fuzz")
    snapshot = viewer_snapshot(small_snapshot, folder)
    tasks = [task.to_row() for task in read_tasks(snapshot, "viewer", "train")]
    good = record_reference_episode(snapshot, "viewer", tasks[0], folder / "reference.jsonl")
    directory = damaged_directory(good, folder / "runs")
    app = make_viewer_app(ViewerConfig(snapshot, tasks="viewer", episodes=(directory,)))
    names = [f"{directory.name}/{name}" for name in ("good.jsonl", *DAMAGED, *(f"{name}.jsonl" for name in HOSTILE_VALUES))]
    real = [*names, *(task["task_id"] for task in tasks[:3]), "0", "1", "299", tasks[0]["evidence"][0]["doc_title"],
            "all", "step", "asc", "desc", *SORT_KEYS, "terminated", "truncated", "unfinished", "max_turns", "format_error",
            "policy_version", "episode", "train", "2", "viewer.css", "viewer.js"]
    return TestClient(app, raise_server_exceptions=False), view_routes(app), real


def test_the_fuzzed_routes_are_every_page(fuzzed):
    """The listing finds the pages (so the fuzzing below is not silently over nothing)."""
    _, routes, _ = fuzzed
    paths = {path for path, _ in routes}
    assert {"/view/", "/view/search", "/view/doc/{ref:path}", "/view/tasks", "/view/tasks/{task_id}", "/view/episodes",
            "/view/episodes/{name:path}", "/view/compare", "/view/health", "/view/play", "/view/play/{session_id}",
            "/view/static/{path:path}"} <= paths
    assert {"q", "k"} <= dict(routes)["/view/search"] and {"a", "b", "ae", "be"} <= dict(routes)["/view/compare"]


@st.composite
def requests(draw, routes, real):
    """(route path, the URL to get, the decoded path values, the decoded query (key, value) pairs sent)."""
    path, declared = draw(st.sampled_from(routes))
    values = []

    def filled(match: re.Match) -> str:
        is_path = match.group(2) == "path"
        value = draw(st.one_of(st.sampled_from(real), st.sampled_from(HOSTILE_TEXT), st.text(max_size=40),
                               st.sampled_from(RAW_JUNK).map(lambda junk: ("raw", junk))))
        if isinstance(value, tuple):
            values.append(unquote(value[1]))  # as the server decodes it (invalid UTF-8 replaced)
            return value[1]
        values.append(value)
        return quote(value, safe="/" if is_path else "").replace(".", "%2E")  # the client would resolve a raw "../" itself

    url = re.sub(r"\{(\w+)(?::(\w+))?\}", filled, path)
    keys = st.one_of(st.sampled_from(sorted(declared | set(KNOWN_KEYS))), st.sampled_from(HOSTILE_TEXT[:8]),
                     st.text(min_size=1, max_size=12))
    query_values = st.one_of(st.sampled_from(real), st.sampled_from(HOSTILE_TEXT), st.text(max_size=60),
                             st.integers(min_value=-(10 ** 30), max_value=10 ** 30).map(str),
                             st.sampled_from(RAW_JUNK).map(lambda junk: ("raw", junk)))
    pairs = draw(st.lists(st.tuples(keys, query_values), max_size=6))
    sent, parts = [], []
    for key, value in pairs:
        if isinstance(value, tuple):
            sent.append((key, unquote(value[1])))
            parts.append(f"{quote(key, safe='')}={value[1]}")
        else:
            sent.append((key, value))
            parts.append(f"{quote(key, safe='')}={quote(value, safe='')}")
    return path, url + ("?" + "&".join(parts) if parts else ""), values, sent


def problem_of(page: str) -> str | None:
    found = re.search(r'<p class="problem" role="alert">(.*?)</p>', page, flags=re.S)
    return html.unescape(found.group(1)).strip() if found else None


def names_what_was_wrong(message: str, values: list[str], sent: list[tuple[str, str]], declared: frozenset[str]) -> bool:
    """Whether an error page's message names a path value, a query parameter sent or the route's (a missing one)
    or a value sent (as text or as its repr, at least the start of it), or the page asked for."""
    if message.startswith("No page "):
        return True
    # "x/" is redirected to "x"; TestClient decodes a path twice (httpx's URL.path is decoded, Starlette unquotes it again)
    shown = [form for value in values for form in (value, value.strip("/"), unquote(value))] + [value for _, value in sent]
    for value in shown:
        if repr(value) in message:
            return True
        for form in (value, repr(value)[1:-1]):
            if len(form.strip()) >= 3 and form[:30] in message:  # a shorter form would be found in any message
                return True
    keys = {key for key, _ in sent if key.strip()} | declared
    return any(re.search(rf"(^|[^\w]){re.escape(key)}([^\w]|$)", message) for key in keys)


def check(client, route: str, url: str, values: list[str], sent: list[tuple[str, str]], declared: frozenset[str] = frozenset()) -> None:
    response = client.get(url)
    where = f"GET {url[:300]} (route {route})"
    assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:500]}"
    kind = response.headers.get("content-type", "")
    asset = response.status_code == 200 and (route.startswith(f"{PREFIX}/static/") or route.endswith(".jsonl"))
    if not asset:
        assert kind.startswith("text/html"), f"{where}: {response.status_code} {kind}: {response.text[:300]}"
    for raw in MARKUP.values():
        assert raw not in response.text, f"{where}: {raw!r} echoed unescaped"
    if response.status_code >= 400:
        message = problem_of(response.text)
        assert message, f"{where}: {response.status_code} page without a message: {response.text[:500]}"
        assert names_what_was_wrong(message, values, sent, declared), f"{where}: the message does not say what was wrong: {message[:500]}"


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_no_request_to_a_page_crashes_echoes_markup_or_answers_without_saying_why(fuzzed, data):
    client, routes, real = fuzzed
    route, url, values, sent = data.draw(requests(routes, real))
    check(client, route, url, values, sent, dict(routes)[route])


@pytest.mark.parametrize("route, url, values", [
    ("/view/doc/{ref:path}", "/view/doc/%C2%B2", ["²"]),
    ("/view/episodes/{name:path}", "/view/episodes/runs/digits.jsonl", ["runs/digits.jsonl"]),
    ("/view/episodes/{name:path}", "/view/episodes/runs/policy-text.jsonl?view=all", ["runs/policy-text.jsonl"]),
    ("/view/episodes/{name:path}", "/view/episodes/runs/killed.jsonl?episode=1", ["runs/killed.jsonl"]),
    ("/view/compare", "/view/compare?a=runs/reward-text.jsonl&b=runs/killed.jsonl", []),
    ("/view/health", "/view/health?file=runs/stats-turns-huge.jsonl", []),
    ("/view/episodes", "/view/episodes?sort=reward&order=desc", []),
])
def test_requests_that_once_were_a_500(fuzzed, route, url, values):
    client, _, _ = fuzzed
    check(client, route, url, values, [])
