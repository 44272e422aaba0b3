"""Building a snapshot from any source of pages, atomically.

One code path for every source: pages (:class:`~stillweb.corpora.records.RawPage`)
are parsed in worker processes (wikitext through :func:`~stillweb.corpora.wikitext.parse_page`),
given dense doc ids in source order, and written as ``docs.parquet`` (+ its
memory-mappable copy ``docs.arrow``), ``facts.parquet``, ``links.parquet``,
``redirects.parquet``, the tantivy ``index/`` and ``manifest.json``.

Everything is written into a temporary directory beside the destination and
swapped into place at the end (an atomic exchange where the OS allows), so an
interrupted or failed build never damages a snapshot already at the destination.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import multiprocessing
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from .index import INDEX_PARAMETERS, IndexBuilder
from .manifest import content_fingerprint, write_manifest
from .records import DOCS_SCHEMA, FACTS_SCHEMA, LINKS_SCHEMA, REDIRECTS_SCHEMA, ParsedPage, RawPage
from .version import PACKAGE_VERSION

__all__ = ["build_snapshot", "BuildResult", "render_fact_box"]

_PARSE_CHUNK = 32
_WRITE_BATCH = 2_048


@dataclass
class BuildResult:
    """What a build produced: the final path and its manifest."""

    path: Path
    manifest: dict


@dataclass
class _Collected:
    """Per-build accumulators for what must be resolved after all titles are known."""

    titles: list[str] = field(default_factory=list)
    redirects: dict[str, str] = field(default_factory=dict)
    link_sources: list[int] = field(default_factory=list)
    link_targets: list[str] = field(default_factory=list)
    facts: dict[str, list] = field(default_factory=lambda: {name: [] for name in FACTS_SCHEMA.names})
    fact_objects: list[str | None] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)


def render_fact_box(page: ParsedPage) -> str:
    """The infobox as readable lines, as a reader of the rendered page sees it.

    Infobox facts are shown at the top of the plaintext ("Birth place: Lunor"),
    so every fact of the graph is stated in its evidence document's text.
    """
    lines: list[str] = []
    for fact in page.facts:
        label = fact.relation.replace("_", " ").strip().capitalize()
        lines.append(f"{label}: {fact.value}")
    return "\n".join(lines)


def _parse(page: RawPage) -> ParsedPage:
    if not page.is_wikitext:
        return ParsedPage(title=page.title, text=page.text, url=page.url)
    from .wikitext import parse_page

    parsed = parse_page(page.title, page.text)
    if page.url:
        parsed.url = page.url
    return parsed


def _parse_chunk(pages: list[RawPage]) -> list[ParsedPage]:
    return [_parse(page) for page in pages]


def _chunks(pages: Iterable[RawPage], collected: _Collected, size: int) -> Iterator[list[RawPage]]:
    """Article pages in chunks for the workers; redirects are set aside here."""
    chunk: list[RawPage] = []
    for page in pages:
        if page.redirect is not None:
            collected.redirects.setdefault(_normalise_title(page.title), _normalise_title(page.redirect))
            continue
        chunk.append(page)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _normalise_title(title: str) -> str:
    title = " ".join(title.replace("_", " ").split())
    return title[:1].upper() + title[1:]


def _default_url(title: str) -> str:
    return "https://en.wikipedia.org/wiki/" + title.replace(" ", "_")


class _DocsWriter:
    """Streams documents to docs.parquet and docs.arrow in batches."""

    def __init__(self, directory: Path) -> None:
        self._parquet = pq.ParquetWriter(directory / "docs.parquet", DOCS_SCHEMA, compression="zstd")
        self._arrow_sink = pa.OSFile(str(directory / "docs.arrow"), "wb")
        self._arrow = pa.ipc.new_file(self._arrow_sink, DOCS_SCHEMA)
        self._rows: dict[str, list] = {name: [] for name in DOCS_SCHEMA.names}

    def add(self, doc_id: int, page: ParsedPage, text: str) -> None:
        row = self._rows
        row["doc_id"].append(doc_id)
        row["title"].append(page.title)
        row["url"].append(page.url or _default_url(page.title))
        row["kind"].append(page.kind)
        row["text"].append(text)
        row["categories"].append(list(page.categories))
        if len(row["doc_id"]) >= _WRITE_BATCH:
            self.flush()

    def flush(self) -> None:
        if self._rows["doc_id"]:
            batch = pa.RecordBatch.from_pydict(self._rows, schema=DOCS_SCHEMA)
            self._parquet.write_batch(batch)
            self._arrow.write_batch(batch)
            self._rows = {name: [] for name in DOCS_SCHEMA.names}

    def close(self) -> None:
        self.flush()
        self._parquet.close()
        self._arrow.close()
        self._arrow_sink.close()


def _collect_facts(collected: _Collected, doc_id: int, page: ParsedPage) -> None:
    columns = collected.facts
    for fact in page.facts:
        columns["subject"].append(doc_id)
        columns["relation"].append(fact.relation)
        columns["value"].append(fact.value)
        columns["value_type"].append(fact.value_type)
        columns["number"].append(fact.number)
        columns["date"].append(fact.date)
        columns["template"].append(fact.template)
        columns["evidence"].append(doc_id)
        collected.fact_objects.append(fact.object_title)


def _write_table(path: Path, columns: dict[str, list], schema: pa.Schema) -> None:
    pq.write_table(pa.Table.from_pydict(columns, schema=schema), path, compression="zstd")


def _resolve_redirects(collected: _Collected, title_ids: dict[str, int]) -> dict[str, int]:
    """Alias -> doc id, following redirect chains (up to 5 steps); broken ones are dropped."""
    resolved: dict[str, int] = {}
    for alias in sorted(collected.redirects):
        if alias in title_ids:
            continue
        target = collected.redirects[alias]
        for _ in range(5):
            if target in title_ids:
                resolved[alias] = title_ids[target]
                break
            target = collected.redirects.get(target)
            if target is None:
                break
    return resolved


def _write_graph(tmp: Path, collected: _Collected) -> dict[str, int]:
    """Resolve link targets and fact objects to doc ids; write links, facts, redirects."""
    title_ids = {title: i for i, title in enumerate(collected.titles)}
    aliases = _resolve_redirects(collected, title_ids)

    def resolve(title: str | None) -> int:
        if not title:
            return -1
        title = _normalise_title(title)
        found = title_ids.get(title)
        return aliases.get(title, -1) if found is None else found

    links = sorted(
        {(s, t) for s, t in zip(collected.link_sources, map(resolve, collected.link_targets)) if t >= 0 and t != s}
    )
    _write_table(tmp / "links.parquet", {"source": [s for s, _ in links], "target": [t for _, t in links]}, LINKS_SCHEMA)

    fact_columns = collected.facts
    fact_columns["object"] = [resolve(title) for title in collected.fact_objects]
    _write_table(tmp / "facts.parquet", fact_columns, FACTS_SCHEMA)

    _write_table(
        tmp / "redirects.parquet",
        {"alias": list(aliases), "doc_id": list(aliases.values())},
        REDIRECTS_SCHEMA,
    )
    return {"links": len(links), "facts": len(collected.fact_objects), "redirects": len(aliases),
            "entity_facts": sum(1 for v in fact_columns["object"] if v >= 0)}


def _exchange(tmp: Path, out: Path) -> None:
    """Move the finished build to ``out``, atomically replacing any existing snapshot."""
    if not out.exists():
        os.rename(tmp, out)
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    at_fdcwd, rename_exchange = -100, 2
    if renameat2 is not None and renameat2(at_fdcwd, bytes(tmp), at_fdcwd, bytes(out), rename_exchange) == 0:
        shutil.rmtree(tmp)  # tmp now holds the old snapshot
        return
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old)


def build_snapshot(
    pages: Iterable[RawPage],
    out: str | Path,
    *,
    source: dict,
    parameters: dict,
    workers: int = 1,
    total: int | None = None,
    progress: bool = True,
    extra_files: Callable[[Path], dict] | None = None,
) -> BuildResult:
    """Parse ``pages`` and write a complete snapshot at ``out`` (replacing one that is there).

    ``source`` and ``parameters`` are recorded in the manifest (keep them free
    of paths and times: they enter nothing but the manifest). ``workers``
    parsing processes are used (1 = in this process); the result does not
    depend on it. ``extra_files(tmp_dir)`` may write more files into the
    snapshot before it is sealed and returns counts to record.
    """
    out = Path(out).expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.building-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    pool = None
    try:
        collected = _Collected()
        chunks = _chunks(pages, collected, _PARSE_CHUNK)
        if workers > 1:  # fork before tantivy starts its writer threads
            # Freeze the parent's objects (a source may hold a whole world in memory) so the
            # workers' garbage collector never touches, and so copies, the pages they share.
            gc.freeze()
            pool = multiprocessing.get_context("fork").Pool(workers)
            gc.unfreeze()
            parsed_chunks = pool.imap(_parse_chunk, chunks)
        else:
            parsed_chunks = map(_parse_chunk, chunks)
        docs = _DocsWriter(tmp)
        index = IndexBuilder(tmp / "index")
        bar = tqdm(total=total, unit="page", desc="building", disable=not progress, mininterval=1.0)
        seen_titles: set[str] = set()
        for chunk in parsed_chunks:
            for page in chunk:
                page.title = _normalise_title(page.title)
                if page.title in seen_titles:
                    continue  # a duplicate title: the first one wins
                seen_titles.add(page.title)
                doc_id = len(collected.titles)
                collected.titles.append(page.title)
                box = render_fact_box(page)
                text = f"{box}\n\n{page.text}" if box else page.text
                docs.add(doc_id, page, text)
                index.add(doc_id, page.title, text)
                collected.link_sources.extend([doc_id] * len(page.links))
                collected.link_targets.extend(page.links)
                _collect_facts(collected, doc_id, page)
                collected.kinds[page.kind] = collected.kinds.get(page.kind, 0) + 1
            bar.update(len(chunk))
        bar.close()
        if pool is not None:
            pool.close()
            pool.join()
            pool = None
        docs.close()
        if not collected.titles:
            raise ValueError("the source yielded no article pages: nothing to build")
        segments = index.finish()
        counts = {"docs": len(collected.titles), **_write_graph(tmp, collected),
                  "kinds": dict(sorted(collected.kinds.items()))}
        if extra_files is not None:
            counts.update(extra_files(tmp))
        manifest = {
            "name": out.name,
            "source": source,
            "parameters": parameters,
            "counts": counts,
            "index": dict(INDEX_PARAMETERS, segments=segments),
            "package_version": PACKAGE_VERSION,
            "fingerprint": content_fingerprint(tmp, INDEX_PARAMETERS),
        }
        manifest = write_manifest(tmp, manifest)
        _exchange(tmp, out)
        return BuildResult(out, manifest)
    except BaseException:
        if pool is not None:
            pool.terminate()
            pool.join()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
