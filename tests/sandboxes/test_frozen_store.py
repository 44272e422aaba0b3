"""The frozen store: canonical requests without secrets, first answer wins, crash safety (a killed
writer keeps every completed record), concurrent writers, clear errors, verify/merge/prune."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stillweb.sandboxes.frozen import FrozenStore, FrozenStoreError, canonical_request, request_key
from stillweb.sandboxes.frozen.store import LOG_NAME
from stillweb.corpora.snapshot.manifest import MANIFEST_NAME
from stillweb.sandboxes.frozen.upkeep import merge_stores, prune_store, read_usage, store_info, verify_store


def _call(n: int, size: int = 10) -> tuple[dict, dict]:
    return canonical_request("POST", "/search", body={"q": f"query {n}"}), {"status": 200, "body": json.dumps({"hits": ["x" * size, n]})}


def test_canonical_request_drops_secrets_and_sorts(tmp_path):
    one = canonical_request("post", "/s", [("b", "2"), ("api_key", "K1"), ("a", "1")],
                            {"q": "x", "auth": {"token": "T"}, "api_key": "K1"},
                            {"Authorization": "Bearer K1", "Accept-Language": "de"}, ["Accept-Language"])
    two = canonical_request("POST", "/s", [("a", "1"), ("b", "2"), ("api_key", "K2")], {"api_key": "K2", "auth": {}, "q": "x"},
                            {"accept-language": "de"}, ["accept-language"])
    assert one == two and request_key(one) == request_key(two)
    assert "K1" not in json.dumps(one) and "Bearer" not in json.dumps(one)
    assert one["query"] == [["a", "1"], ["b", "2"]] and one["headers"] == {"accept-language": "de"}
    with pytest.raises(ValueError, match="credentials"):
        canonical_request("GET", "/", keep_headers=["Authorization"])
    with pytest.raises(ValueError, match="credentials"):
        FrozenStore.create(tmp_path / "never", "http", "u", keep_headers=["X-Api-Token"])
    assert not (tmp_path / "never").exists()


def test_first_answer_wins_and_fingerprint_ignores_order(tmp_path):
    a = FrozenStore.create(tmp_path / "a", "http", "u")
    b = FrozenStore.create(tmp_path / "b", "http", "u")
    calls = [_call(n) for n in range(5)]
    a.add_many(calls)
    b.add_many(list(reversed(calls)))
    assert a.fingerprint == b.fingerprint and len(a) == 5
    request, _ = calls[0]
    kept = a.add(request, {"status": 200, "body": "{}"})
    assert kept["response"] == calls[0][1] and len(a) == 5  # a retry never replaces the first answer
    assert (tmp_path / "a" / LOG_NAME).read_bytes().count(b"\n") == 5


WRITER = """
import sys, json
from stillweb.sandboxes.frozen import FrozenStore, canonical_request
store = FrozenStore.create(sys.argv[1], "http", "u")
for n in range(int(sys.argv[2]), 10**6):
    record = store.add(canonical_request("POST", "/s", body={"n": n}), {"status": 200, "body": json.dumps("x" * 200000)})
    print(record["key"], flush=True)
"""


def test_killed_writer_keeps_every_completed_record(tmp_path):
    path = tmp_path / "store"
    FrozenStore.create(path, "http", "u")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "0"], stdout=subprocess.PIPE, text=True)
    completed = [writer.stdout.readline().split()[0] for _ in range(8)]
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    completed += [line.split()[0] for line in writer.stdout.read().splitlines() if line.strip()]
    with (path / LOG_NAME).open("ab") as log:  # and a torn line for sure, as a kill mid-write leaves it
        log.write(b"0123456789abcdef {\"key\": \"trunc")
    store = FrozenStore.open(path)
    assert all(store.get(key) is not None for key in completed)
    assert len(store.damage) <= 1 and len(store) >= len(completed)
    store.add(*_call(1))  # the next writer closes the torn line first: nothing after it is lost
    reopened = FrozenStore.open(path)
    assert len(reopened) == len(store) and all(reopened.get(key) is not None for key in completed)
    assert [d.reason for d in reopened.damage] == [store.damage[0].reason] * len(reopened.damage)
    assert any("torn or damaged" in problem for problem in verify_store(path))


@pytest.mark.slow
def test_concurrent_writers_threads_and_processes(tmp_path):
    path = tmp_path / "store"
    store = FrozenStore.create(path, "http", "u")
    processes = [subprocess.Popen([sys.executable, "-c", WRITER.replace("10**6", "sys_limit").replace(
        "import sys, json", "import sys, json\nsys_limit = int(sys.argv[2]) + 20"), str(path), str(start)],
        stdout=subprocess.DEVNULL) for start in (0, 10)]
    threads = [threading.Thread(target=lambda: [store.add(*_call(n)) for n in range(30)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(process.wait() == 0 for process in processes)
    reopened = FrozenStore.open(path)
    assert len(reopened) == 30 + 30 and not reopened.damage  # /s n=0..29 from two processes, /search 0..29
    assert not verify_store(path) and not reopened.conflicts


def test_bad_stores_name_what_and_where(tmp_path):
    with pytest.raises(FrozenStoreError, match="not found"):
        FrozenStore.open(tmp_path / "missing")
    path = tmp_path / "store"
    store = FrozenStore.create(path, "http", "u")
    store.add(*_call(0))
    store.write_manifest()
    manifest = json.loads((path / MANIFEST_NAME).read_text())
    (path / MANIFEST_NAME).write_text(json.dumps(dict(manifest, format="stillweb-frozen/9")))
    with pytest.raises(FrozenStoreError, match=r"manifest.json was written by a newer stillweb \(format stillweb-frozen/9\)"):
        FrozenStore.open(path)
    (path / MANIFEST_NAME).write_text("{not json")
    with pytest.raises(FrozenStoreError, match="damaged manifest .*manifest.json"):
        FrozenStore.open(path)
    (path / MANIFEST_NAME).write_text(json.dumps(manifest))
    log = path / LOG_NAME
    content = bytearray(log.read_bytes())
    content[60] ^= 1
    log.write_bytes(bytes(content))
    problems = verify_store(path)
    assert any("differ from the manifest" in p for p in problems) and any("byte 0" in p for p in problems)
    with pytest.raises(ValueError, match="frozen http store"):
        FrozenStore.create(path, "mcp", "u")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file").write_text("x")
    with pytest.raises(ValueError, match="not a frozen store"):
        FrozenStore.create(tmp_path / "other", "http", "u")


def test_merge_reports_conflicts_and_prune_keeps_used(tmp_path):
    a = FrozenStore.create(tmp_path / "a", "http", "u")
    b = FrozenStore.create(tmp_path / "b", "http", "u")
    a.add_many([_call(n) for n in range(3)])
    b.add_many([_call(n, size=20) if n == 2 else _call(n) for n in range(2, 5)])
    report = merge_stores(tmp_path / "a", tmp_path / "b", tmp_path / "ab")
    assert report["records"] == 5 and [c["key"] for c in report["conflicts"]] == [request_key(_call(2)[0])]
    assert FrozenStore.open(tmp_path / "ab").get(request_key(_call(2)[0]))["response"] == _call(2)[1]
    with pytest.raises(FrozenStoreError, match="already exists"):
        merge_stores(tmp_path / "a", tmp_path / "b", tmp_path / "ab")
    usage = tmp_path / "usage.jsonl"
    episode = {"type": "step", "info": {"frozen_calls": [{"tool": "s", "key": request_key(_call(4)[0]), "source": "store"}]}}
    usage.write_text(json.dumps({"key": request_key(_call(0)[0]), "source": "store"}) + "\n"
                     + json.dumps({"key": "f" * 64, "source": "not_recorded"}) + "\n" + json.dumps(episode) + "\n")
    used = read_usage([usage])
    assert store_info(FrozenStore.open(tmp_path / "ab"), used)["usage"] == {
        "calls": 3, "hits": 2, "misses": 1, "live": 0, "hit_rate": 0.6667, "distinct_keys": 3}
    pruned = prune_store(tmp_path / "ab", [key for key, _ in used], tmp_path / "small")
    assert pruned == {"records": 2, "dropped": 3, "fingerprint": FrozenStore.open(tmp_path / "small").fingerprint}
    assert not verify_store(tmp_path / "small")


@pytest.mark.slow
def test_store_bytes_are_deterministic_across_processes(tmp_path):
    script = ("import sys, json\nfrom stillweb.sandboxes.frozen import FrozenStore, canonical_request\n"
              "s = FrozenStore.create(sys.argv[1], 'http', 'u')\n"
              "s.add_many([(canonical_request('POST', '/s', body={'q': n, 'a': [1.5, 'é']}), {'status': 200, 'body': '[]'})"
              " for n in range(50)])\ns.write_manifest()\n")
    for name in ("one", "two"):
        seed = "1" if name == "one" else "2"
        subprocess.run([sys.executable, "-c", script, str(tmp_path / name)], check=True, env={**os.environ, "PYTHONHASHSEED": seed})
    for file in (LOG_NAME, MANIFEST_NAME):
        assert (tmp_path / "one" / file).read_bytes() == (tmp_path / "two" / file).read_bytes()
