"""`stillweb freeze record|serve` against real changing services made here: an HTTP JSON search API
and an MCP server (stdio and streamable HTTP). Recorded once, replayed twice with identical bytes while
the live service keeps changing; a miss is flagged and counted; bad input gets clear errors."""

from __future__ import annotations

import subprocess

import httpx
import pytest

from support.freeze_servers import FREEZE as CLI, start_freeze as _freeze, stop as _stop
from support.network import free_port

from stillweb.sandboxes.frozen import FrozenStore
from stillweb.sandboxes.frozen.upkeep import read_usage, store_info, verify_store

CALLS = [("POST", "/search", {"json": {"q": "river", "k": 3}}), ("POST", "/search", {"json": {"k": 3, "q": "river"}}),
         ("POST", "/search", {"json": {"q": "lake", "api_key": "SECRET-1"}}), ("GET", "/page", {"params": {"url": "a b"}})]


def _replay(base: str) -> list[bytes]:
    with httpx.Client(base_url=base) as client:
        return [client.request(method, path, **kwargs).content for method, path, kwargs in CALLS]


@pytest.mark.slow
def test_http_record_then_replay_twice_identical(live_http, tmp_path):
    store = tmp_path / "frozen"
    port = free_port()
    recorder = _freeze("record", "--upstream", live_http, "--out", str(store), "--usage-log", str(tmp_path / "rec.jsonl"),
                       port=port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            recorded = [client.request(method, path, **kwargs) for method, path, kwargs in CALLS]
            assert [r.headers["x-stillweb-frozen"] for r in recorded] == ["live", "store", "live", "live"]
            assert recorded[0].content == recorded[1].content  # a repeat sees the recorded answer, as replays will
            live_again = httpx.post(f"{live_http}/search", json={"q": "river", "k": 3}).content
            assert live_again != recorded[0].content  # the live service changes...
            html = client.get("/html")
            assert html.status_code == 502 and "not JSON" in html.json()["detail"] and "/html" in html.json()["detail"]
            assert client.get("/fail").json()["error"] == "upstream_error"
            too_big = client.post("/search", content=b'{"q": "' + b"x" * 2_000_000 + b'"}')
            assert too_big.status_code == 413 and too_big.json()["error"] == "body_too_large"
    finally:
        _stop(recorder)
    assert "SECRET-1" not in (store / "records.log").read_text() and not verify_store(store)
    port = free_port()
    server = _freeze("serve", str(store), "--usage-log", str(tmp_path / "use.jsonl"), port=port)
    try:
        base = f"http://127.0.0.1:{port}"
        first, second = _replay(base), _replay(base)
        assert first == second == [r.content for r in recorded]  # ...the frozen one does not
        miss = httpx.post(f"{base}/search", json={"q": "never asked"})
        assert miss.status_code == 404 and miss.json()["error"] == "not_recorded"
        assert miss.headers["x-stillweb-frozen"] == "not_recorded"
        assert httpx.get(f"{base}/stats").json()["counters"] == {"frozen_hits": 8, "frozen_misses": 1}
    finally:
        _stop(server)
    info = store_info(FrozenStore.open(store), read_usage([tmp_path / "use.jsonl"]))
    assert info["records"] == 3 and info["usage"]["misses"] == 1 and info["usage"]["hits"] == 8


@pytest.mark.slow
def test_upstream_down_is_a_clear_error_and_nothing_recorded_is_lost(tmp_path):
    store = FrozenStore.create(tmp_path / "frozen", "http", "u")
    store.add({"method": "GET", "path": "/x", "query": [], "body": None, "headers": {}}, {"status": 200, "body": "1"})
    port, dead = free_port(), free_port()
    server = _freeze("serve", str(tmp_path / "frozen"), "--on-miss", "live", "--upstream", f"http://127.0.0.1:{dead}",
                     port=port)
    try:
        down = httpx.get(f"http://127.0.0.1:{port}/y")
        assert down.status_code == 502 and f"127.0.0.1:{dead}/y" in down.json()["detail"] and "down" in down.json()["detail"]
        hit = httpx.get(f"http://127.0.0.1:{port}/x")
        assert hit.content == b"1" and hit.headers["x-stillweb-on-miss"] == "live"
    finally:
        _stop(server)
    assert len(FrozenStore.open(tmp_path / "frozen")) == 1
    bad = subprocess.run([*CLI, "serve", str(tmp_path / "nothing")], capture_output=True, text=True)
    assert bad.returncode == 2 and "frozen store not found" in bad.stderr and "Traceback" not in bad.stderr
