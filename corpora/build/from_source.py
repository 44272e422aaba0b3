"""Snapshot builds from each kind of source, all through :func:`build_snapshot`.

- :func:`build_synthetic`: the seeded fictional world, written as a MediaWiki
  XML dump and read back through the same dump reader and wikitext parser as
  real Wikipedia; its true facts are kept (``truth.parquet``) and the
  precision and recall of the extracted facts against them are recorded.
- :func:`build_wikipedia`: a ``pages-articles`` XML dump (plain or ``.bz2``).
- :func:`build_rows`: any row corpus (wiki-18, BEIR, KILT, ``save_to_disk``,
  parquet / JSON lines / JSON / CSV / TSV, compressed or not): one document per row,
  the corpus's ids kept as ``source_id`` (:mod:`stillweb.corpora.sources.corpus_formats`).

Every build accounts for its rows (read, written, skipped by reason) in
``manifest["counts"]["rows"]``; ``passages=WORDS`` splits pages into passages.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.errors import UsageError, writing
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.build.accounting import RowAccount
from stillweb.corpora.snapshot.sharded import ShardPlace
from stillweb.corpora.build.snapshot_writer import (SOURCE_PREFIX, WIKIPEDIA_URL_TEMPLATE, BuildResult, build_snapshot,
                                             remove_stale_builds)

__all__ = ["build_synthetic", "build_wikipedia", "build_rows", "fact_recovery", "TRUTH_SCHEMA"]

TRUTH_SCHEMA = pa.schema(
    [
        ("subject", pa.string()),
        ("relation", pa.string()),
        ("value", pa.string()),
        ("value_type", pa.string()),
        ("object", pa.string()),
    ]
)


def fact_recovery(snapshot_dir: Path) -> dict:
    """Precision and recall of ``facts.parquet`` against ``truth.parquet``, as distinct
    (subject title, relation, value) rows, computed with Arrow joins (no per-fact Python objects)."""
    keys = ["subject", "relation", "value"]
    titles = pq.read_table(snapshot_dir / "docs.parquet", columns=["title"]).column("title").combine_chunks()
    facts = pq.read_table(snapshot_dir / "facts.parquet", columns=keys)
    subjects = facts.column("subject").combine_chunks()
    extracted = pa.table({"subject": titles.take(subjects), "relation": facts.column("relation"),
                          "value": facts.column("value")})
    extracted = extracted.group_by(keys).aggregate([])
    truth = pq.read_table(snapshot_dir / "truth.parquet", columns=keys).group_by(keys).aggregate([])
    found = extracted.join(truth, keys=keys, join_type="inner").num_rows
    return {
        "precision": round(found / extracted.num_rows, 6) if extracted.num_rows else 0.0,
        "recall": round(found / truth.num_rows, 6) if truth.num_rows else 0.0,
        "extracted": extracted.num_rows,
        "true": truth.num_rows,
    }


DUMP_STYLES = ("synthetic", "wikipedia")


def build_synthetic(articles: int, seed: int, out: str | Path, *, workers: int = 1, progress: bool = True,
                    passages: int | None = None, on_ray: bool = False, dump_style: str = "synthetic",
                    language: str | None = None) -> BuildResult:
    """Build the synthetic world of ``articles`` articles from ``seed`` into ``out``
    (``passages=WORDS``: a passage-level snapshot of WORDS-word windows).

    ``on_ray``: parse the written dump's page ranges as Ray tasks (:mod:`stillweb.corpora.build.on_ray`;
    the same snapshot, fingerprint included); ``workers`` is then unused.
    ``dump_style="wikipedia"`` writes the intermediate dump with English
    Wikipedia's infobox habits (``wiki_habits.wikipedia_style_pages``): the
    same world and true facts, read back through the infobox mapping.
    ``language="zh"`` writes the world's prose in Chinese (:mod:`stillweb.corpora.synthetic.chinese_pages`,
    the same infoboxes, so the same facts byte for byte) and indexes it as Chinese.
    """
    from stillweb.corpora.sources.wikipedia_xml import read_dump
    from stillweb.corpora.synthetic import generate_world, write_xml_dump

    check_positive_int("articles", articles)
    if dump_style not in DUMP_STYLES:
        raise UsageError(f"dump_style must be one of {DUMP_STYLES}, got {dump_style!r}")
    out = Path(out).expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_builds(out)
    work = out.with_name(f"{SOURCE_PREFIX.format(name=out.name)}{os.getpid()}")
    work.mkdir(exist_ok=True)
    kept = f"the snapshot already at {out} is unchanged" if out.exists() else f"nothing was created at {out}"
    try:
        dump_path, truth_path = work / "world.xml", work / "truth.parquet"
        world = generate_world(articles, seed)
        with writing(out, "the snapshot", f"the world's intermediate dump was removed; {kept}"):
            write_xml_dump(_world_pages(world, dump_style, language), dump_path)
            _write_truth(world, truth_path)
        del world  # the build reads the dump; the world's memory is not needed any more

        def add_truth(tmp: Path) -> dict:
            shutil.copyfile(truth_path, tmp / "truth.parquet")
            return {"fact_recovery": fact_recovery(tmp)}

        if on_ray:
            from stillweb.corpora.build.on_ray import dump_pages_on_ray

            pages, workers = dump_pages_on_ray(dump_path), 1
        else:
            pages = read_dump(dump_path)
        return build_snapshot(
            pages,
            out,
            source={"kind": "synthetic", "articles": articles, "seed": seed, **_dump_style(dump_style)},
            parameters={"articles": articles, "seed": seed, **_passage_parameters(passages), **_dump_style(dump_style)},
            workers=workers,
            progress=progress,
            extra_files=add_truth,
            passage_words=passages,
            language=language,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _world_pages(world, dump_style: str, language: str | None):
    """The pages the intermediate dump holds: English (either dump style) or Chinese prose."""
    from stillweb.corpora.synthetic import wikipedia_style_pages, world_pages

    if language == "zh" and dump_style == "synthetic":
        from stillweb.corpora.synthetic.chinese_pages import chinese_world_pages

        return chinese_world_pages(world)
    return world_pages(world) if dump_style == "synthetic" else wikipedia_style_pages(world)


def _dump_style(dump_style: str) -> dict:
    """The dump style for the manifest (absent for the default, so default manifests are unchanged)."""
    return {"dump_style": dump_style} if dump_style != "synthetic" else {}


def _write_truth(world, path: Path) -> None:
    """The world's true facts as ``truth.parquet``, written in batches."""
    from stillweb.corpora.synthetic.facts import iter_true_facts

    with pq.ParquetWriter(path, TRUTH_SCHEMA, compression="zstd") as writer:
        rows: list[tuple] = []
        for fact in iter_true_facts(world):
            rows.append((fact.subject_title, fact.relation, fact.value, fact.value_type, fact.object_title))
            if len(rows) >= 65_536:
                writer.write_table(_truth_table(rows))
                rows = []
        writer.write_table(_truth_table(rows))


def _truth_table(rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pydict({name: [row[i] for row in rows] for i, name in enumerate(TRUTH_SCHEMA.names)},
                                schema=TRUTH_SCHEMA)


def _passage_parameters(passages: int | None) -> dict:
    return {"passage_words": passages} if passages else {}


def build_wikipedia(path: str | Path, out: str | Path, *, workers: int = 1, skip_bad: bool = False,
                    progress: bool = True, passages: int | None = None, strict: bool = False,
                    on_ray: bool = False, language: str | None = None, script: str | None = None) -> BuildResult:
    """Build from a MediaWiki ``pages-articles`` XML dump (plain or ``.bz2``).

    Pages keep their dump semantics: a repeated title is skipped (``duplicate_title``),
    redirects become aliases. ``passages=WORDS`` makes a Search-R1 style passage index.
    ``on_ray``: read and parse the dump's shards (bzip2 streams of a multistream dump,
    page ranges of plain XML) as Ray tasks (:mod:`stillweb.corpora.build.on_ray`); the same
    snapshot, fingerprint included; ``workers`` is then unused. ``language`` (default: the dump's
    ``xml:lang``, else detected) picks the analyzer (:mod:`stillweb.corpora.search.analyzers`).
    A Chinese dump (``language`` or the dump's own ``zh``) is written in one ``script``: ``hans``
    (simplified, the default) or ``hant`` (:mod:`stillweb.corpora.wikitext.variants`; recorded in the
    manifest's parameters); page titles stay as written, URLs point at zh.wikipedia.org.
    """
    from stillweb.corpora.sources.wikipedia_xml import DumpStats, dump_language, read_dump
    from stillweb.corpora.wikitext.variants import DEFAULT_SCRIPT, SCRIPTS

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"dump not found: {path}")
    declared = dump_language(path) if language is None else None
    if script is not None and script not in SCRIPTS:
        raise UsageError(f"unknown --script {script!r}; expected one of {', '.join(SCRIPTS)}")
    if script is None and (language or declared) == "zh":
        script = DEFAULT_SCRIPT
    stats = DumpStats()
    account = RowAccount(dedupe="title", strict=strict)

    def count_bad_pages(_tmp: Path) -> dict:
        notes = stats.bad_page_notes[:4] + [stats.cut_page] if stats.cut_page else stats.bad_page_notes
        account.add_skipped("bad_page", stats.bad_pages, list(dict.fromkeys(notes)))
        early = {"dump_ended_early": {"reason": stats.stopped_at, "cut_page": stats.cut_page}} if stats.stopped_at else {}
        return {"skipped_bad_pages": stats.bad_pages, **early}

    if on_ray:
        from stillweb.corpora.build.on_ray import dump_pages_on_ray

        pages, workers = dump_pages_on_ray(path, skip_bad=skip_bad, stats=stats, script=script), 1
    else:
        pages = read_dump(path, skip_bad=skip_bad, stats=stats)
        if script is not None:
            pages = _in_script(pages, script)
    result = build_snapshot(
        pages,
        out,
        source={"kind": "wikipedia-xml", "file": path.name, "bytes": path.stat().st_size},
        parameters={"skip_bad": skip_bad, **_passage_parameters(passages), **({"script": script} if script else {})},
        url_template=ZHWIKI_URL_TEMPLATE if script else WIKIPEDIA_URL_TEMPLATE,
        workers=workers,
        progress=progress,
        extra_files=count_bad_pages,
        account=account,
        passage_words=passages,
        language=language,
        declared_language=declared,
    )
    return replace(result, notes=result.notes + (_ended_early_warning(stats),)) if stats.stopped_at else result


def _ended_early_warning(stats) -> str:
    """The console's word on a dump that broke off under ``--skip-bad`` (the manifest's ``dump_ended_early``):
    where and why, and the page cut off with it.

    >>> from stillweb.corpora.sources.wikipedia_xml import DumpStats
    >>> print(_ended_early_warning(DumpStats(stopped_at="after page 0, inside page 1 ('B'): no element found",
    ...                                      cut_page="page 1 ('B') is cut off near decompressed byte 90: no element found")))
    warning: the dump ends early (--skip-bad): after page 0, inside page 1 ('B'): no element found; page 1 ('B') is cut off: skipped, counted in skipped_bad_pages; the snapshot holds the pages before it
    """
    cut = ""
    if stats.cut_page:
        cut = f"; {stats.cut_page.rsplit(' near decompressed byte ', 1)[0]}: skipped, counted in skipped_bad_pages"
    return f"warning: the dump ends early (--skip-bad): {stats.stopped_at}{cut}; the snapshot holds the pages before it"


ZHWIKI_URL_TEMPLATE = "https://zh.wikipedia.org/wiki/{title}"


def _in_script(pages, script: str):
    """The dump's pages, each marked to be written in ``script`` when parsed."""
    for page in pages:
        yield replace(page, script=script)


def build_rows(inputs: list[str | Path], out: str | Path, *, format: str | None = None, columns=None,
               dedupe: str = "none", strict: bool = False, passages: int | None = None,
               max_row_chars: int | None = None, workers: int = 1, progress: bool = True,
               url_template: str | None = None, on_ray: bool = False, language: str | None = None,
               shard: ShardPlace | None = None) -> BuildResult:
    """Build from a row corpus: one document per row unless ``dedupe`` says otherwise.

    ``inputs`` are files, folders or globs read in the order given; ``format`` and
    ``columns`` (a :class:`~stillweb.corpora.sources.corpus_formats.ColumnMap`) override
    detection. ``dedupe`` is ``none`` (a repeated source id is an error), ``id``,
    ``title`` or ``text``; ``strict`` fails on the first skipped row. A row without a URL
    gets ``url_template`` (``{id}``, ``{title}``) filled in, else none; a row without a
    title is titled by its id and counted as ``missing_title``.
    ``on_ray``: read
    the shards (parquet row groups, byte ranges of JSON lines) as Ray tasks
    (:func:`stillweb.corpora.build.on_ray.rows_on_ray`); the same snapshot, fingerprint and row counts.
    ``language`` (default: detected from the first rows) picks the analyzer (:mod:`stillweb.corpora.search.analyzers`).
    ``shard``: one shard of a sharded build (:mod:`stillweb.corpora.build.in_shards`): only its units of
    reading, in order (positions counted from its first unit in each file), its doc ids from its place.
    """
    from stillweb.corpora.sources.corpus_formats import MAX_ROW_CHARS, CorpusSpec

    spec = CorpusSpec.detect(list(inputs), format, columns, max_row_chars or MAX_ROW_CHARS)
    account = RowAccount(dedupe=dedupe, strict=strict)
    rows = spec.read()
    if shard is not None:
        from stillweb.corpora.build.on_ray import joined_rows

        rows = joined_rows(shard.units, (list(spec.read_shard(unit)) for unit in shard.units))
    elif on_ray:
        from stillweb.corpora.build.on_ray import rows_on_ray

        rows, workers = rows_on_ray(spec), 1
    return build_snapshot(
        rows,
        out,
        source=dict(spec.describe(), **({"units": [unit.describe() for unit in shard.units]} if shard is not None else {})),
        parameters={"dedupe": dedupe, "strict": strict, "max_row_chars": spec.max_row_chars,
                    **({"url_template": url_template} if url_template else {}),
                    **_passage_parameters(passages)},
        workers=workers,
        progress=progress,
        account=account,
        passage_words=passages,
        passage_level=True,
        url_template=url_template,
        source_heads=spec.format == "wiki18",  # served back byte for byte by /retrieve
        language=language,
        shard=shard,
    )
