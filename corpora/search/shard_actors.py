"""A sharded snapshot searched by Ray actors spread over the nodes (issue 48; needs ``stillweb[ray]``).

:func:`serve_shards` starts actors that each hold a run of the snapshot's shards (a doc id range),
spread over the cluster's nodes, so each node's page cache keeps its shards' postings; they are named
after the snapshot's fingerprint in the ``stillweb`` namespace. Every process of the cluster that then
opens the snapshot (``Snapshot.open``, the environments' ``shared_snapshot``, ``stillweb serve``'s
``/retrieve``) finds them by name and searches through them: one call per actor for a query or a whole
batch, hits merged by ``(-score, doc_id)`` (:class:`~stillweb.corpora.search.shards.ShardedIndex`).
An actor scores with the whole collection's statistics (its index is the snapshot's ``index/``, over
every shard's segments, and it collects among its own doc ids), so the results are those of one
process searching the whole snapshot, byte for byte. Documents are read where the snapshot is
opened, from the memory-mapped ``docs.arrow`` of each shard (every node sees the snapshot: a shared
filesystem, or the same copy on each, as for Ray builds).

>>> actors = serve_shards("snapshots/wiki18-x8", actors=4)       # doctest: +SKIP
>>> Snapshot.open("snapshots/wiki18-x8").search("who wrote hamlet")  # doctest: +SKIP
>>> stop_shards("snapshots/wiki18-x8")                            # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from stillweb.corpora.errors import UsageError
from stillweb.corpora.search.shards import LocalGroup, RangeIndex, ShardedIndex, shard_index, whole_parameters
from stillweb.corpora.snapshot.manifest import SHARDED_FORMATS, read_manifest

__all__ = ["serve_shards", "stop_shards", "running_shard_groups", "ShardSearcher", "NAMESPACE"]

NAMESPACE = "stillweb"


class ShardSearcher:
    """The Ray actor of a run of shards: doc ids ``first`` to ``end - 1`` of the snapshot at ``path``."""

    def __init__(self, path: str, first: int, end: int) -> None:
        path, self.first, self.end = Path(path), first, end
        manifest = read_manifest(path)
        if manifest["index"].get("impacts"):  # each of its shards' impact postings, merged
            indexes = [shard_index(path, manifest, shard) for shard in manifest["shards"] if first <= shard["first_doc_id"] < end]
        else:  # tantivy over every shard's segments, among its doc ids
            indexes = [RangeIndex(path / "index", whole_parameters(manifest), first, end)]
        self._index = ShardedIndex([LocalGroup(index) for index in indexes], indexes[0])

    def search_many(self, queries: Sequence[str], k: int, fields: tuple[str, ...] | None,
                    passages: bool) -> list[list[tuple]]:
        """Each query's top ``k`` among the actor's doc ids (global statistics)."""
        return self._index.search_many(queries, k, fields, passages)

    def describe(self) -> dict:
        """The node the actor runs on, the doc ids it holds, its process and resident memory (MiB)."""
        resident = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        return {"node_id": ray.get_runtime_context().get_node_id(), "first": self.first, "end": self.end,
                "pid": os.getpid(), "resident_mib": resident}


class _ActorGroup:
    """A :class:`~stillweb.corpora.search.shards.ShardGroup` answered by a :class:`ShardSearcher` actor."""

    remote = True

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def submit(self, queries: Sequence[str], k: int, fields: tuple[str, ...] | None, passages: bool) -> Any:
        return self.handle.search_many.remote(list(queries), k, fields, passages)

    def result(self, submitted: Any) -> list[list[tuple]]:
        return ray.get(submitted)


def _name(fingerprint: str, number: int) -> str:
    return f"stillweb-shards-{fingerprint[:16]}-{number}"


def serve_shards(path: str | Path, actors: int | None = None, actor_options: dict | None = None,
                 detached: bool = False) -> list[Any]:
    """Start ``actors`` shard actors (default: one per alive node) for the sharded snapshot at ``path``,
    each holding a run of about equal documents of whole shards, placed on the nodes in turn (a node
    short of the resources asked for in ``actor_options`` lets Ray place it elsewhere); returns their
    handles once every one has opened the index. ``detached``: they outlive this driver (for servers of
    other jobs; :func:`stop_shards` ends them). ``UsageError`` for a snapshot that is not sharded, more
    actors than shards, or actors already serving it."""
    path = Path(path).expanduser().resolve()
    manifest = read_manifest(path)
    if manifest["format"] not in SHARDED_FORMATS:
        raise UsageError(f"{path} is not a sharded snapshot (build one with `stillweb build corpus ... --shards N`)")
    shards = manifest["shards"]
    actors = actors or len([node for node in ray.nodes() if node["Alive"]])
    if not 1 <= actors <= len(shards):
        raise UsageError(f"actors must be 1..{len(shards)} (the snapshot's shards), got {actors}")
    if running_shard_groups(manifest["fingerprint"]):
        raise UsageError(f"shard actors already serve {path}: stop_shards first")
    total, runs = manifest["counts"]["docs"], [[] for _ in range(actors)]
    for shard in shards:  # a shard goes to the run its middle document falls in
        runs[min(actors - 1, (2 * shard["first_doc_id"] + shard["docs"]) * actors // (2 * total))].append(shard)
    options = {"num_cpus": 1, **(actor_options or {}), "namespace": NAMESPACE, **({"lifetime": "detached"} if detached else {})}
    nodes = sorted(node["NodeID"] for node in ray.nodes() if node["Alive"] and node["Resources"].get("CPU"))
    handles = []
    for number, run in enumerate(run for run in runs if run):
        first, last = run[0], run[-1]
        where = NodeAffinitySchedulingStrategy(nodes[number % len(nodes)], soft=True)  # one per node, in turn
        handles.append(ray.remote(ShardSearcher).options(name=_name(manifest["fingerprint"], number), **{
            "scheduling_strategy": where, **options}).remote(str(path), first["first_doc_id"], last["first_doc_id"] + last["docs"]))
    ray.get([handle.describe.remote() for handle in handles])
    return handles


def running_shard_groups(fingerprint: str) -> list[_ActorGroup]:
    """The shard actors serving the snapshot of ``fingerprint`` in this Ray cluster, as shard groups (none: [])."""
    groups = []
    while True:
        try:
            groups.append(_ActorGroup(ray.get_actor(_name(fingerprint, len(groups)), namespace=NAMESPACE)))
        except ValueError:
            return groups


def stop_shards(path: str | Path) -> int:
    """End the shard actors serving the snapshot at ``path``; returns how many there were."""
    groups = running_shard_groups(read_manifest(Path(path).expanduser().resolve())["fingerprint"])
    for group in groups:
        ray.kill(group.handle)
    return len(groups)
