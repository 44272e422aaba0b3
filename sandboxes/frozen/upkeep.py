"""Keeping a frozen store healthy: what it holds and how it was used, its integrity, the union of
two stores, and dropping records no run used (``stillweb freeze info|verify|merge|prune``).

Usage comes from two kinds of JSON-lines files, read alike by :func:`read_usage`: the usage
log of ``stillweb freeze serve --usage-log`` (``{"key", "source"}`` per call) and episode
recordings (:class:`~stillweb.envs.runs.recording.RecordEpisodes`), whose step ``info`` lists
``frozen_calls`` (``[{"tool", "key", "source"}]``).

>>> store_info(FrozenStore.open("frozen/"), read_usage(["run.jsonl"]))["usage"]   # doctest: +SKIP
{'calls': 120, 'hits': 118, 'misses': 2, 'live': 0, 'hit_rate': 0.9833}
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.sandboxes.frozen.store import LOG_NAME, FrozenStore, FrozenStoreError, read_frozen_manifest

__all__ = ["merge_stores", "prune_store", "read_usage", "store_info", "verify_store"]


def read_usage(paths: Iterable[str | Path]) -> list[tuple[str, str]]:
    """``(key, source)`` of every frozen call in usage logs and episode recordings, in file order.
    ``ValueError`` naming the file and line of a line that is not JSON."""
    used: list[tuple[str, str]] = []
    for path in paths:
        with Path(path).open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as error:
                    raise UsageError(f"{path}:{number}: not a JSON line ({error})") from None
                if not isinstance(item, dict):
                    continue
                if isinstance(item.get("key"), str) and isinstance(item.get("source"), str):
                    used.append((item["key"], item["source"]))
                info = item.get("info") if item.get("type") == "step" else None
                for call in (info or {}).get("frozen_calls") or ():
                    used.append((call["key"], call["source"]))
    return used


def store_info(store: FrozenStore, usage: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Counts, fingerprint, damage and conflicts of ``store``; with ``usage``, the hit/miss/live rates."""
    records = store.records()
    info: dict[str, Any] = {
        "path": str(store.path), "kind": store.kind, "upstream": store.manifest.get("upstream"),
        "records": len(records), "fingerprint": store.fingerprint, "log_bytes": (store.path / LOG_NAME).stat().st_size,
        "routes": dict(sorted(Counter(f"{r['request']['method']} {r['request']['path']}" for r in records).items())),
        "damaged_lines": len(store.damage), "conflicting_keys": len(store.conflicts),
    }
    if usage is not None:
        sources = Counter(source for _, source in usage)
        calls = len(usage)
        info["usage"] = {"calls": calls, "hits": sources["store"], "misses": sources["not_recorded"],
                         "live": sources["live"], "hit_rate": round(sources["store"] / calls, 4) if calls else None,
                         "distinct_keys": len({key for key, _ in usage})}
    return info


def verify_store(path: str | Path) -> list[str]:
    """Problems of the store at ``path`` (empty when intact): a log that differs from the manifest's
    hash over the bytes it covers, damaged or torn lines, keys answered differently twice.
    Records appended after the manifest was written are not problems."""
    path = Path(path)
    manifest = read_frozen_manifest(path)
    problems = []
    log = path / LOG_NAME
    if not log.is_file():
        return [f"missing file: {log}"]
    content = log.read_bytes()
    covered = manifest.get("log_bytes", 0)
    expected = manifest.get("files", {}).get(LOG_NAME)
    if len(content) < covered:
        problems.append(f"{log} is shorter ({len(content)} bytes) than the manifest says ({covered}): records were lost")
    elif expected is not None and hashlib.sha256(content[:covered]).hexdigest() != expected:
        problems.append(f"{log}: its first {covered} bytes differ from the manifest's sha256 (damaged on disk)")
    store = FrozenStore(path, manifest)
    problems += [f"{log} byte {damage.offset}: {damage.reason}" for damage in store.damage]
    problems += [f"key {key} recorded again with {count} different answer(s) (the first is served)"
                 for key, count in sorted(store.conflicts.items())]
    return problems


def merge_stores(first: str | Path, second: str | Path, out: str | Path) -> dict[str, Any]:
    """Write the union of two stores of the same kind to the new store ``out``; where both answered a
    request differently, ``first``'s answer is kept and the key is reported in ``conflicts``."""
    one, two = FrozenStore.open(first), FrozenStore.open(second)
    if one.kind != two.kind:
        raise UsageError(f"cannot merge a {one.kind} store ({first}) with a {two.kind} store ({second})")
    target = _new_store(out, one)
    conflicts = []
    for store in (one, two):
        records = store.records()
        kept = target.add_many([(record["request"], record["response"]) for record in records])
        conflicts += [{"key": record["key"], "method": record["request"]["method"], "path": record["request"]["path"]}
                      for record, stored in zip(records, kept) if stored["response"] != record["response"]]
    target.write_manifest({"merged_from": [one.fingerprint, two.fingerprint]})
    return {"records": len(target), "from_first": len(one), "from_second": len(two), "conflicts": conflicts,
            "fingerprint": target.fingerprint}


def prune_store(path: str | Path, used_keys: Iterable[str], out: str | Path) -> dict[str, Any]:
    """Write to the new store ``out`` only the records of ``path`` whose key is in ``used_keys``."""
    source = FrozenStore.open(path)
    keep = set(used_keys)
    target = _new_store(out, source)
    target.add_many([(record["request"], record["response"]) for record in source.records() if record["key"] in keep])
    target.write_manifest({"pruned_from": source.fingerprint})
    return {"records": len(target), "dropped": len(source) - len(target), "fingerprint": target.fingerprint}


def _new_store(out: str | Path, like: FrozenStore) -> FrozenStore:
    out = Path(out)
    if out.exists():
        raise FrozenStoreError(f"{out} already exists: give a new directory (stores are never overwritten)")
    return FrozenStore.create(out, like.kind, like.manifest.get("upstream", ""), like.keep_headers, like.secret_fields)
