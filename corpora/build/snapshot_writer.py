"""Building a snapshot from any source of pages, atomically.

One code path for every source: pages (:class:`~stillweb.corpora.snapshot.records.RawPage`)
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
import glob
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.build.bounded import InFlight
from stillweb.corpora.build.language import IndexingCheck, choose_language
from stillweb.corpora.errors import UsageError, writing
from stillweb.corpora.graph.fact_box import render_fact_box
from stillweb.corpora.search.analyzers import analyzer_for
from stillweb.corpora.search.impacts_build import build_impacts
from stillweb.corpora.search.index import (INDEX_PARAMETERS, PRUNED_QUERIES, TITLE_FIRST_PASSAGE, IndexBuilder, passage_parameters,
                                           with_language)
from stillweb.corpora.search.page_ranking import PAGE_INDEX_PARAMETERS
from stillweb.corpora.snapshot.manifest import MANIFEST_NAME, content_fingerprint, write_manifest, write_manifest_as_is
from stillweb.corpora.graph.stats import InfoboxCounts
from stillweb.corpora.graph.writer import GraphWriter
from stillweb.corpora.build.passages import split_passages
from stillweb.corpora.processes import ignore_interrupts, process_context
from stillweb.corpora.progress import progress_bar
from stillweb.corpora.snapshot.sharded import ShardPlace
from stillweb.corpora.snapshot.records import DOCS_SCHEMA, SOURCE_HEAD_FIELD, ParsedPage, PreParsedPage, RawPage, SkippedRow
from stillweb.corpora.build.accounting import RowAccount
from stillweb.corpora.wikitext import normalize_title, parse_page
from stillweb.corpora.version import PACKAGE_VERSION

__all__ = ["build_snapshot", "BuildResult", "preparse", "copy_with_index"]

_PARSE_CHUNK = 32
_IN_FLIGHT = 16  # parsed chunks per worker waiting to be indexed, at most (bounded.InFlight)
_WRITE_BATCH = 2_048


@dataclass
class BuildResult:
    """What a build produced: the final path, its manifest, and what to tell the user (language, warnings)."""

    path: Path
    manifest: dict
    notes: tuple[str, ...] = ()


def _parse(page: RawPage | PreParsedPage) -> ParsedPage:
    if isinstance(page, PreParsedPage):
        return page.parsed
    if not page.is_wikitext:  # a row corpus: the title as given, only whitespace collapsed
        return ParsedPage(title=" ".join(page.title.split()), text=page.text, url=page.url, source_id=page.source_id,
                          source_head=page.source_head)
    parsed = parse_page(_normalize_title(page.title), page.text, page.script)
    parsed.source_id = page.source_id
    if page.url:
        parsed.url = page.url
    return parsed


def _parse_chunk(pages: list[RawPage]) -> list[tuple[str, ParsedPage]]:
    return [(page.position, _parse(page)) for page in pages]


def preparse(page: RawPage) -> RawPage | PreParsedPage:
    """An article parsed now (for a build that parses where it reads, e.g. on Ray); redirects as they are."""
    return page if page.redirect is not None else PreParsedPage(_parse(page), page.position)


def _chunks(
    pages: Iterable[RawPage | SkippedRow], graph: GraphWriter, account: RowAccount, size: int
) -> Iterator[list[RawPage]]:
    """Article pages in chunks for the workers; redirects go straight to the graph, skips to the account."""
    chunk: list[RawPage] = []
    for page in pages:
        if isinstance(page, SkippedRow):
            account.skip(page.reason, page.position, page.detail)
            continue
        if getattr(page, "title_from_id", False):
            account.missing_title += 1
        if page.redirect is not None:
            account.redirect(page.position)
            graph.add_redirect(_normalize_title(page.title), _normalize_title(page.redirect))
            continue
        chunk.append(page)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _normalize_title(title: str) -> str:
    """A page title as MediaWiki normalizes it (the same rule as link targets)."""
    return normalize_title(title) or " ".join(title.split())


WIKIPEDIA_URL_TEMPLATE = "https://en.wikipedia.org/wiki/{title}"  # a dump's pages: their article URL


def check_url_template(template: str | None) -> None:
    """``ValueError`` naming a URL template that uses fields other than ``{id}`` and ``{title}``."""
    if template is None:
        return
    try:
        template.format(id="x", title="x")
    except (KeyError, IndexError, ValueError) as error:
        raise UsageError(f"bad --url-template {template!r}: only {{id}} and {{title}} may appear ({error})") from None


def document_url(template: str | None, title: str, source_id: str) -> str:
    """The URL a document gets when its source has none: the template filled in, else empty (never made up)."""
    if template is None:
        return ""
    return template.format(title=quote(title.replace(" ", "_"), safe="_()',-:"), id=quote(source_id, safe=""))


class _DocsWriter:
    """Streams documents to docs.parquet and docs.arrow in batches."""

    def __init__(self, directory: Path, url_template: str | None = None, source_heads: bool = False) -> None:
        self._url_template = url_template
        self._schema = DOCS_SCHEMA.append(SOURCE_HEAD_FIELD) if source_heads else DOCS_SCHEMA
        self._parquet = pq.ParquetWriter(directory / "docs.parquet", self._schema, compression="zstd")
        self._arrow_sink = pa.OSFile(str(directory / "docs.arrow"), "wb")
        self._arrow = pa.ipc.new_file(self._arrow_sink, self._schema)
        self._rows: dict[str, list] = {name: [] for name in self._schema.names}

    def add(self, doc_id: int, page: ParsedPage, text: str) -> None:
        row = self._rows
        row["doc_id"].append(doc_id)
        row["source_id"].append(page.source_id)
        row["title"].append(page.title)
        row["url"].append(page.url or document_url(self._url_template, page.title, page.source_id))
        row["kind"].append(page.kind)
        row["text"].append(text)
        row["categories"].append(list(page.categories))
        if "source_head" in row:
            row["source_head"].append(page.source_head or "")
        if len(row["doc_id"]) >= _WRITE_BATCH:
            self.flush()

    def flush(self) -> None:
        if self._rows["doc_id"]:
            batch = pa.RecordBatch.from_pydict(self._rows, schema=self._schema)
            self._parquet.write_batch(batch)
            self._arrow.write_batch(batch)
            self._rows = {name: [] for name in self._schema.names}

    def close(self) -> None:
        self.flush()
        self._parquet.close()
        self._arrow.close()
        self._arrow_sink.close()


BUILDING_PREFIX = ".{name}.building-"  # + the building process's pid: the build's temp directory beside --out
OLD_PREFIX = ".{name}.old-"  # + pid: the replaced snapshot, between two renames where renameat2 is missing
SOURCE_PREFIX = ".{name}.source-"  # + pid: the synthetic world's intermediate dump (build_from_source)


def remove_stale_builds(out: Path) -> list[Path]:
    """Remove the temp directories that killed builds of ``out`` left (their process is gone); returns them.

    A build killed with SIGKILL (or by the OOM killer, or a power cut) cannot clean up after itself;
    the next build of the same ``--out`` does it. A directory of a build still running is left alone.
    """
    removed = []
    for prefix in (BUILDING_PREFIX, OLD_PREFIX, SOURCE_PREFIX):
        start = prefix.format(name=out.name)
        for path in sorted(out.parent.glob(glob.escape(start) + "*")):
            pid = path.name[len(start):]
            if pid.isdigit() and not _process_alive(int(pid)):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # this build's own directories (a synthetic build's dump is made before the snapshot)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def exchange_into_place(tmp: Path, out: Path) -> None:
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
    old = out.with_name(f"{OLD_PREFIX.format(name=out.name)}{os.getpid()}")
    os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old)


def page_parameters(language: str) -> dict:
    """How a page-level snapshot of ``language`` is indexed: English pages as passages ranked by their best
    (format 4, :data:`PAGE_INDEX_PARAMETERS`), other languages one document per page (:data:`INDEX_PARAMETERS`)."""
    return PAGE_INDEX_PARAMETERS if analyzer_for(language) is None else INDEX_PARAMETERS


def build_snapshot(
    pages: Iterable[RawPage | SkippedRow],
    out: str | Path,
    *,
    source: dict,
    parameters: dict,
    workers: int = 1,
    total: int | None = None,
    progress: bool = True,
    extra_files: Callable[[Path], dict] | None = None,
    account: RowAccount | None = None,
    passage_words: int | None = None,
    passage_level: bool = False,
    url_template: str | None = None,
    source_heads: bool = False,
    language: str | None = None,
    declared_language: str | None = None,
    shard: ShardPlace | None = None,
) -> BuildResult:
    """Parse ``pages`` and write a complete snapshot at ``out`` (replacing one that is there).

    ``source`` and ``parameters`` are recorded in the manifest (keep them free
    of paths and times: they enter nothing but the manifest). ``workers``
    parsing processes are used (1 = in this process); the result does not
    depend on it. ``extra_files(tmp_dir)`` may write more files into the
    snapshot before it is sealed and returns counts to record.

    ``account`` decides and counts every row (default: a dump's page semantics,
    ``RowAccount(dedupe="title")``); its summary is the manifest's ``counts.rows``.
    ``passage_words`` splits each parsed page into passages of that many words
    (:func:`~stillweb.corpora.build.passages.split_passages`); facts and links stay
    with a page's first passage. A passage-level snapshot (``passage_words`` or
    ``passage_level``: row corpora) is indexed one document per row, English as format 5 ranks rows
    (:func:`~stillweb.corpora.search.index.passage_parameters`), an English page-level one with
    :data:`~stillweb.corpora.search.index.PAGE_INDEX_PARAMETERS` (format 4: a page as its best passage; other
    languages keep one document per page, ``INDEX_PARAMETERS``). A document whose source gives
    no URL gets ``url_template`` filled with ``{title}``/``{id}``, else an empty URL. ``source_heads`` (wiki-18
    rows, unsplit) keeps each row's head as written in a ``source_head`` column (:meth:`Snapshot.contents_of`).
    ``language`` picks the analyzer (:mod:`stillweb.corpora.search.analyzers`; default: ``declared_language``,
    the source's own, else detected from the first pages); the result's notes say what was chosen
    and warn when the analyzer would index the text poorly. ``shard``: the build is one shard of a sharded
    snapshot (:mod:`stillweb.corpora.snapshot.sharded`): its index holds global doc ids (recorded in its
    index parameters, so in its fingerprint).
    """
    check_url_template(url_template)
    pages, language, notes = choose_language(pages, language, declared_language)
    passage = passage_level or passage_words
    index_parameters = with_language(passage_parameters(language) if passage else page_parameters(language), language)
    if shard is not None:
        index_parameters = dict(index_parameters, **shard.index_parameters())
    first_doc_id = shard.first_doc_id if shard is not None else 0
    account = account if account is not None else RowAccount(dedupe="title")
    out = Path(out).expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = f"the snapshot already at {out} is unchanged" if out.exists() else f"nothing was created at {out}"
    with writing(out, "the snapshot", f"the build's temporary files were removed; {kept}"):  # a full disk names --out
        remove_stale_builds(out)
        tmp = out.with_name(f"{BUILDING_PREFIX.format(name=out.name)}{os.getpid()}")
        if tmp.exists():  # left by an earlier process that had this pid
            shutil.rmtree(tmp)
        tmp.mkdir()
        pool = window = None
        index = None
        try:
            graph = GraphWriter(tmp / ".graph-spill")
            doc_count = 0
            kinds: dict[str, int] = {}
            infobox = InfoboxCounts()
            chunks = _chunks(pages, graph, account, _PARSE_CHUNK)
            if workers > 1:  # started as stillweb.corpora.processes says; chunks of pages go to them pickled
                pool = process_context().Pool(workers, initializer=ignore_interrupts)
                window = InFlight(_IN_FLIGHT * workers)  # imap alone would queue every parsed chunk read ahead
                parsed_chunks = pool.imap(_parse_chunk, window.feed(chunks))
            else:
                parsed_chunks = map(_parse_chunk, chunks)
            docs = _DocsWriter(tmp, url_template, source_heads and not passage_words)
            index = _index_builder(tmp / "index", index_parameters, language, shard)
            check = IndexingCheck(language)
            bar = progress_bar(total=total, unit="page", desc="building", enabled=progress)
            for chunk in parsed_chunks:
                if window is not None:
                    window.taken()
                for position, page in chunk:
                    box = render_fact_box(page, language)
                    text = f"{box}\n\n{page.text}" if box else page.text
                    if not account.admit(page.title, text, page.source_id, position):
                        continue
                    pieces = split_passages(page, text, passage_words, language) if passage_words else [(page, text)]
                    for number, (piece, piece_text) in enumerate(pieces):
                        doc_id, doc_count = doc_count, doc_count + 1
                        docs.add(doc_id, piece, piece_text)
                        index.add(first_doc_id + doc_id, piece.title, piece_text)  # a shard's: global ids
                        check.add(piece_text)
                        if number == 0:
                            graph.add_page(doc_id, page)
                            infobox.add(page)
                        kinds[piece.kind] = kinds.get(piece.kind, 0) + 1
                bar.update(len(chunk))
            bar.close()
            if pool is not None:
                pool.close()
                pool.join()
                pool = None
            docs.close()
            if not doc_count:
                raise UsageError("the source yielded no article pages: nothing to build")
            segments = index.finish()
            # A shard's impacts would score with its own statistics: a sharded snapshot searches its shards as one (sharded.py).
            impacts = (build_impacts(tmp, index_parameters, workers, titled=index.title_flags)
                       if index_parameters.get("query") in PRUNED_QUERIES and not shard else None)
            counts = {"docs": doc_count, **graph.finish(tmp), "kinds": dict(sorted(kinds.items())),
                      "infobox_fields": infobox.summary()}
            shutil.rmtree(tmp / ".graph-spill")
            if extra_files is not None:
                counts.update(extra_files(tmp))
            counts["rows"] = account.summary()
            manifest = {
                "name": out.name,
                "source": source,
                "parameters": parameters,
                "counts": counts,
                "index": dict(index_parameters, segments=segments, **({"impacts": impacts} if impacts else {})),
                "package_version": PACKAGE_VERSION,
                "fingerprint": content_fingerprint(tmp, index_parameters),
            }
            manifest = write_manifest(tmp, manifest)
            exchange_into_place(tmp, out)
            warning = check.warning()
            return BuildResult(out, manifest, tuple(notes) + ((f"warning: {warning}",) if warning else ()))
        except BaseException:
            if window is not None:
                window.close()  # the pool's task thread may wait for a slot: terminate() joins it
            if pool is not None:
                pool.terminate()
                pool.join()
            if index is not None and not index.finished:
                index.abort()  # tantivy's threads must stop writing before the directory goes
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _index_builder(directory: Path, parameters: dict, language: str, shard: ShardPlace | None = None) -> IndexBuilder:
    """The index writer for recorded ``parameters``: the body as title + text and the title field once per
    title (row corpora, passages), pages cut into passages (format 4), the tokenizer they name; a shard's
    title fields after the titles of the shards before it."""
    return IndexBuilder(directory, title_in_body=parameters.get("body") == "title, newline, text", language=language,
                        title_once=parameters.get("title") == TITLE_FIRST_PASSAGE and (shard.seen_titles() if shard else True),
                        tokenizer=parameters.get("tokenizer"), passage_words=parameters.get("passage_words"))


def copy_with_index(snapshot: str | Path, out: str | Path, parameters: dict, format: str) -> Path:
    """A copy at ``out`` of the (English) snapshot at ``snapshot``, its index rebuilt with ``parameters``
    and its manifest saying ``format``: the same pages or rows as an older format indexed them (e.g.
    ``INDEX_PARAMETERS``, format 3 pages; ``PASSAGE_INDEX_PARAMETERS``, format 3-4 rows), to compare
    rankings in tests and benchmarks. Its fingerprint is
    recomputed (the index parameters are part of it: another ranking, another fingerprint); its file
    hashes are not updated (``stillweb verify`` flags its index)."""
    source, out = Path(snapshot), Path(out)
    shutil.copytree(source, out, ignore=shutil.ignore_patterns("index"))
    table = pq.read_table(source / "docs.parquet", columns=["doc_id", "title", "text"])
    builder = _index_builder(out / "index", parameters, "en")
    for doc_id, title, text in zip(*(table.column(name).to_pylist() for name in ("doc_id", "title", "text"))):
        builder.add(doc_id, title, text)
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest.update(format=format, index=dict(parameters, segments=builder.finish()),
                    fingerprint=content_fingerprint(out, parameters))
    write_manifest_as_is(out, manifest)
    return out
