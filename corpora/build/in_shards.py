"""A row corpus built as a sharded snapshot (``stillweb build corpus ... --shards N [--ray]``; issue 48).

The source's units of reading (parquet row groups, line-aligned byte ranges of JSON lines, whole
files: :meth:`~stillweb.corpora.sources.corpus_formats.CorpusSpec.shards`) are cut into ``N`` runs
of about equal bytes, in order; each run is built by the ordinary row build
(:func:`~stillweb.corpora.build.from_source.build_rows` with a :class:`~stillweb.corpora.snapshot.sharded.ShardPlace`)
into ``shard-000j/``, either one after another here or as one Ray task per shard on whichever node has
the CPUs (every node must see the source and ``--out``: a shared filesystem, as for ``--ray`` builds).
A shard needs its place: its first doc id (the documents of the runs before it) and the titles of the
runs before it (a title's title field goes on its first passage in the whole corpus only,
``PASSAGE_INDEX_PARAMETERS``); here each shard takes them from the shards built before it, on Ray every
run is first counted by a task of its own. Once every shard is written, ``index/`` joins their segments
and each shard gets impact postings (format 6) scored with the whole collection's statistics, read from
``index/`` (:class:`~stillweb.corpora.snapshot.sharded.CollectionStatistics`). The driver then writes the
manifest that lists the shards
(:func:`~stillweb.corpora.snapshot.sharded.write_sharded_manifest`), and the whole directory is swapped
into place at once, as every build is.

The documents and the index are the unsharded build's, doc ids included: every row is decided alone,
the language is chosen once from the first rows, and source ids are checked unique across shards at
the end. What a shard cannot see is the other shards' rows, so ``--dedupe`` other than ``none`` is
refused.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow.compute as pc

from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.build.accounting import RowSkipError
from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.build.language import choose_language
from stillweb.corpora.build.passages import split_passages
from stillweb.corpora.build.snapshot_writer import BUILDING_PREFIX, BuildResult, exchange_into_place, preparse, remove_stale_builds
from stillweb.corpora.errors import UsageError, writing
from stillweb.corpora.search.impacts_build import build_impacts
from stillweb.corpora.search.index import PRUNED_QUERIES
from stillweb.corpora.snapshot.manifest import read_manifest, write_manifest
from stillweb.corpora.snapshot.records import SkippedRow
from stillweb.corpora.snapshot.sharded import (SHARD_FOLDER, CollectionStatistics, ShardPlace, TitleHashes, open_docs,
                                               write_sharded_manifest, write_union_index)
from stillweb.corpora.sources.containers import path_bytes
from stillweb.corpora.sources.corpus_formats import MAX_ROW_CHARS, CorpusSpec
from stillweb.corpora.version import PACKAGE_VERSION

__all__ = ["build_rows_in_shards", "unit_runs", "count_run", "add_impacts"]

UNITS_PER_SHARD = 16  # byte ranges of JSON lines cut per shard: runs of near-equal bytes


def build_rows_in_shards(inputs: list[str | Path], out: str | Path, shards: int, *, on_ray: bool = False,
                         progress: bool = True, language: str | None = None, **options) -> BuildResult:
    """Build the row corpus ``inputs`` into a sharded snapshot of ``shards`` shards at ``out``.

    ``options`` are :func:`~stillweb.corpora.build.from_source.build_rows`'s (``format``, ``columns``,
    ``strict``, ``passages``, ``max_row_chars``, ``workers``, ``url_template``; ``dedupe`` must be
    ``none``). ``on_ray``: each shard is a Ray task of ``workers`` CPUs. ``UsageError`` when the source
    has fewer units of reading than ``shards`` (a compressed file is one: decompress it).
    """
    check_positive_int("shards", shards)
    if options.get("dedupe", "none") != "none":
        raise UsageError(f"--dedupe {options['dedupe']} needs every row in one build: a shard does not see the "
                         "others' rows; deduplicate the source first, or build without --shards")
    spec = CorpusSpec.detect(list(inputs), options.get("format"), options.get("columns"),
                             options.get("max_row_chars") or MAX_ROW_CHARS)
    runs = unit_runs(spec, shards)
    _pages, language, notes = choose_language(spec.read(), language)  # once, from the first rows: every shard alike
    out = Path(out).expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = f"the snapshot already at {out} is unchanged" if out.exists() else f"nothing was created at {out}"
    with writing(out, "the snapshot", f"the build's temporary files were removed; {kept}"):
        remove_stale_builds(out)
        tmp = out.with_name(f"{BUILDING_PREFIX.format(name=out.name)}{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            folders = [SHARD_FOLDER.format(number) for number in range(shards)]
            options = dict(options, format=spec.format, language=language)
            if on_ray:
                befores = _build_on_ray(list(spec.inputs), tmp, folders, runs, options)
            else:
                place, befores = ShardPlace(), []
                for folder, run in zip(folders, runs):
                    place = ShardPlace(tuple(run), place.first_doc_id, place.titles_before)
                    befores.append(place.titles_before)
                    _build_shard(list(spec.inputs), str(tmp / folder), place, options, progress)
                    titles = open_docs([tmp / folder]).column("title")
                    place = ShardPlace((), place.first_doc_id + len(titles),
                                       place.titles_before | TitleHashes.of(pc.unique(titles).to_pylist()))
            _check_unique_ids(tmp, folders)
            write_union_index(tmp, folders)
            if read_manifest(tmp / folders[0])["index"].get("query") in PRUNED_QUERIES:
                jobs = [(str(tmp), folder, before, options.get("workers", 1)) for folder, before in zip(folders, befores)]
                if on_ray:
                    _add_impacts_on_ray(jobs)
                else:
                    for job in jobs:
                        add_impacts(*job)
            manifest = write_sharded_manifest(tmp, folders, {
                "name": out.name, "source": spec.describe(),
                "parameters": dict(read_manifest(tmp / folders[0])["parameters"], shards=shards),
                "package_version": PACKAGE_VERSION})
            exchange_into_place(tmp, out)
            return BuildResult(out, manifest, tuple(notes))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def unit_runs(spec: CorpusSpec, shards: int) -> list[list]:
    """The source's units of reading cut into ``shards`` runs of about equal bytes, in order (a unit
    goes to the run its middle byte falls in)."""
    files = spec.files()
    total = sum(path_bytes(path) for path in files)
    units = spec.shards(max(1, total // (shards * UNITS_PER_SHARD)))
    sizes = [max(1, unit.size()) for unit in units]
    runs: list[list] = [[] for _ in range(shards)]
    before = 0
    for unit, size in zip(units, sizes):
        runs[min(shards - 1, (2 * before + size) * shards // (2 * sum(sizes)))].append(unit)
        before += size
    if any(not run for run in runs):
        raise UsageError(f"the source has {len(units)} units of reading ({', '.join(sorted({p.name for p in files}))}), "
                         f"too few or too uneven for {shards} shards: a compressed or JSON file is one unit, a parquet "
                         "file one per row group; decompress JSON lines, split the source, or ask for fewer shards")
    return runs


def _build_shard(inputs: list[str], out: str, place: ShardPlace, options: dict, progress: bool = False) -> None:
    """One shard: the ordinary row build of its units (on a Ray node, or here)."""
    build_rows(inputs, out, shard=place, progress=progress, **options)


def count_run(inputs: list[str], run: list, options: dict) -> tuple[int, TitleHashes]:
    """(documents, their titles) that the build of ``run`` will write: its rows as the build parses and
    splits them (a row corpus admits every row it reads when ``dedupe`` is ``none``)."""
    spec = CorpusSpec.detect(inputs, options["format"], options.get("columns"), options.get("max_row_chars") or MAX_ROW_CHARS)
    docs, titles = 0, set()
    for unit in run:
        for item in spec.read_shard(unit):
            if isinstance(item, SkippedRow):
                continue
            page = preparse(item).parsed
            pieces = split_passages(page, page.text, options["passages"], options["language"]) if options.get("passages") else [(page, "")]
            docs += len(pieces)
            titles.update(piece.title for piece, _text in pieces)
    return docs, TitleHashes.of(sorted(titles))


def _build_on_ray(inputs: list[str], tmp: Path, folders: list[str], runs: list[list], options: dict) -> list[TitleHashes]:
    """The shards' builds as Ray tasks, all queued at once: first every run's documents are counted (in
    parallel), which places each shard (its first doc id, the titles before it); then each shard is built
    by a task of ``workers`` CPUs (its parsing processes; at most a node's CPUs, so every task fits on
    some node), the tasks spread over the nodes. Returns the titles before each shard."""
    import ray

    if not ray.is_initialized():
        ray.init()  # joins the cluster of RAY_ADDRESS / `ray start`, or starts a local one
    spread = {"scheduling_strategy": "SPREAD", "max_retries": 1}  # over the nodes, not packed onto the first
    counts = _ray_all(ray, [ray.remote(count_run).options(num_cpus=1, **spread).remote(inputs, run, options) for run in runs])
    largest = max(int(node["Resources"].get("CPU", 1)) for node in ray.nodes() if node["Alive"])
    build = ray.remote(_build_shard).options(num_cpus=max(1, min(options.get("workers", 1), largest)), **spread)
    place, refs, befores = ShardPlace(), [], []
    for folder, run, (docs, titles) in zip(folders, runs, counts):
        place = ShardPlace(tuple(run), place.first_doc_id, place.titles_before)
        befores.append(place.titles_before)
        refs.append(build.remote(inputs, str(tmp / folder), place, options))
        place = ShardPlace((), place.first_doc_id + docs, place.titles_before | titles)
    _ray_all(ray, refs)
    for folder, (docs, _titles) in zip(folders, counts):
        if open_docs([tmp / folder]).num_rows != docs:
            raise RuntimeError(f"shard {folder} wrote {open_docs([tmp / folder]).num_rows} documents, its count said {docs}")
    return befores


def add_impacts(path: str, folder: str, titles_before: TitleHashes, workers: int = 1) -> None:
    """Give the shard ``folder`` of the sharded snapshot being built at ``path`` (its ``index/`` written)
    impact postings scored with the whole collection's statistics, recorded in its manifest (its
    fingerprint, a hash of its rows and index parameters, stays)."""
    shard = Path(path) / folder
    manifest = read_manifest(shard)
    manifest["index"]["impacts"] = build_impacts(shard, manifest["index"], workers, CollectionStatistics(Path(path), titles_before))
    write_manifest(shard, manifest)


def _add_impacts_on_ray(jobs: list[tuple]) -> None:
    """:func:`add_impacts` of every shard as a Ray task of its ``workers`` CPUs, spread over the nodes."""
    import ray

    largest = max(int(node["Resources"].get("CPU", 1)) for node in ray.nodes() if node["Alive"])
    task = ray.remote(add_impacts).options(num_cpus=max(1, min(jobs[0][3], largest)), scheduling_strategy="SPREAD", max_retries=1)
    _ray_all(ray, [task.remote(*job) for job in jobs])


def _ray_all(ray, refs: list) -> list:
    """The results of ``refs``; on an error, the rest cancelled."""
    try:
        return ray.get(refs)
    except BaseException:
        for ref in refs:
            ray.cancel(ref)
        raise


def _check_unique_ids(tmp: Path, folders: list[str]) -> None:
    """``RowSkipError`` naming a source id held by two shards' documents (a build of one shard checks its own)."""
    ids = open_docs([tmp / folder for folder in folders]).column("source_id")
    counts = pc.value_counts(ids)
    repeated = counts.filter(pc.and_(pc.greater(counts.field("counts"), 1), pc.not_equal(counts.field("values"), "")))
    if len(repeated):
        value = repeated[0]["values"].as_py()
        holders = [folder for folder in folders if pc.any(pc.equal(open_docs([tmp / folder]).column("source_id"), value)).as_py()]
        raise RowSkipError(f"duplicate source id {value!r} in {' and '.join(holders)}; ids must be unique "
                           "(a sharded build cannot --dedupe: deduplicate the source first)")
