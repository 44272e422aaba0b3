"""Sharded snapshot builds on Ray (``stillweb build ... --ray``; needs the ``stillweb[ray]`` extra).

The source is cut into shards (row corpora: :func:`rows_on_ray`, parquet row groups and
byte ranges of JSON lines; dumps below).
The dump is cut into shards (:func:`~stillweb.corpora.sources.wikipedia_xml.dump_shards`:
runs of bzip2 streams of a multistream dump or page-aligned ranges of plain XML).
Each shard is read *and parsed* by a Ray task on whichever
node has a free CPU; the driver takes the shards' pages back strictly in shard
order and feeds them to the one :func:`~stillweb.corpora.build.snapshot_writer.build_snapshot`
that writes the documents, the index and the graph. Doc ids, duplicate
handling and every table are therefore exactly those of the local build: the
snapshot's fingerprint is the same.

At most ``window`` shards are in flight (default: twice the cluster's CPUs),
which bounds the driver's memory. ``ray`` is imported when a build starts,
never when this module is imported.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from stillweb.corpora.build.snapshot_writer import preparse
from stillweb.corpora.sources.wikipedia_xml import DumpStats, dump_shards, read_dump_shard

__all__ = ["dump_pages_on_ray", "rows_on_ray", "joined_rows", "SHARD_BYTES"]

SHARD_BYTES = 8 << 20  # file bytes per shard
_PAGE_POSITION = re.compile(r"^page (\d+)")
_ROW_POSITION = re.compile(r":row (\d+)$")
_COUNTED = ("pages", "articles", "redirects", "other_namespaces", "bad_pages")


def dump_pages_on_ray(path: str | Path, skip_bad: bool = False, stats: DumpStats | None = None,
                      shard_bytes: int | None = None, window: int | None = None,
                      script: str | None = None) -> Iterator[Any]:
    """The pages of an XML dump, read and parsed shard by shard on Ray, in dump order (``script``: a
    Chinese dump's pages written in that script, as :func:`~stillweb.corpora.build.from_source.build_wikipedia` does).

    ``stats`` receives the sums of the shards' :class:`DumpStats` (positions
    renumbered over the whole dump); as with :func:`read_dump`, a stream broken
    under ``skip_bad`` ends the pages there.
    """
    stats = stats if stats is not None else DumpStats()
    for items, shard_stats in _shard_results(dump_shards(path, shard_bytes or SHARD_BYTES), _parse_dump_shard, (skip_bad, script), window):
        offset = stats.pages
        for item in items:
            yield _renumbered(item, offset)
        for name in _COUNTED:
            setattr(stats, name, getattr(stats, name) + getattr(shard_stats, name))
        room = 100 - len(stats.bad_page_notes)
        stats.bad_page_notes.extend(_renumber(note, offset) for note in shard_stats.bad_page_notes[:max(room, 0)])
        if shard_stats.stopped_at is not None:
            stats.stopped_at = shard_stats.stopped_at
            stats.cut_page = _renumber(shard_stats.cut_page, offset) if shard_stats.cut_page else None
            return


def rows_on_ray(spec: Any, shard_bytes: int | None = None, window: int | None = None) -> Iterator[Any]:
    """The pages and skipped rows of a row corpus (a :class:`~stillweb.corpora.sources.corpus_formats.CorpusSpec`),
    read shard by shard on Ray, in corpus order: parquet by row groups, uncompressed
    JSON lines by byte ranges of ``shard_bytes``, other files whole (positions as :func:`joined_rows` says)."""
    shards = spec.shards(shard_bytes or SHARD_BYTES)
    return joined_rows(shards, _shard_results(shards, _read_row_shard, (spec,), window))


def joined_rows(shards: Sequence[Any], items_of_shards: Iterable[list]) -> Iterator[Any]:
    """The items (pages and skipped rows) of each of ``shards``, in order, given as one list per shard.

    A byte-range shard counts its rows from its own start; this adds the rows of the file's earlier
    shards, so every position (``<file>:row <n>``) counts from the first of ``shards`` in that file
    (the file's first row when it is among them: the local build's position).
    """
    rows_before: dict[Any, int] = {}
    for shard, items in zip(shards, items_of_shards):
        offset = rows_before.get(shard.path, 0) if shard.start is not None else 0
        for item in items:
            yield dataclasses.replace(item, position=_renumber_row(item.position, offset)) if offset else item
        rows_before[shard.path] = rows_before.get(shard.path, 0) + len(items)


def _read_row_shard(shard, spec) -> list:
    """The shard's pages and skipped rows. Rows are not parsed here: plain text parses cheaply, and the
    driver's build then sees exactly the local build's pages (a missing title, a URL to fill from the template)."""
    return list(spec.read_shard(shard))


def _renumber_row(text: str, offset: int) -> str:
    """``<file>:row N`` counted from a byte range's first row, counted from the file's first."""
    return _ROW_POSITION.sub(lambda match: f":row {int(match.group(1)) + offset}", text, count=1)


def _parse_dump_shard(shard, skip_bad: bool, script: str | None = None) -> tuple[list, DumpStats]:
    stats = DumpStats()
    pages = read_dump_shard(shard, skip_bad, stats)
    return [preparse(dataclasses.replace(page, script=script) if script else page) for page in pages], stats


def _shard_results(shards: Sequence[Any], parse: Callable, args: tuple, window: int | None) -> Iterator[Any]:
    """``parse(shard, *args)`` of every shard as Ray tasks, yielded in shard order, ``window`` in flight."""
    import ray

    if not ray.is_initialized():
        ray.init()  # joins the cluster of RAY_ADDRESS / `ray start`, or starts a local one
    window = window or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    task = ray.remote(parse).options(num_cpus=1, max_retries=3)
    queued, in_flight = deque(shards), deque()
    try:
        while queued or in_flight:
            while queued and len(in_flight) < window:
                in_flight.append(task.remote(queued.popleft(), *args))
            yield ray.get(in_flight.popleft())
    finally:
        for ref in in_flight:
            ray.cancel(ref)


def _renumbered(item: Any, offset: int) -> Any:
    return dataclasses.replace(item, position=_renumber(item.position, offset)) if offset else item


def _renumber(text: str, offset: int) -> str:
    """``page N ...`` (a position counted from a shard's first page) counted from the dump's first."""
    return _PAGE_POSITION.sub(lambda match: f"page {int(match.group(1)) + offset}", text, count=1)

