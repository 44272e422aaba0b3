"""Row corpora as they are: FlashRAG / Search-R1 ``wiki-18``, BEIR, KILT, Hugging Face
``wikimedia/wikipedia`` and ``save_to_disk`` folders, and any parquet / JSON lines /
JSON / CSV / TSV with a column mapping.

Each source row becomes one :class:`~stillweb.corpora.snapshot.records.RawPage` (plaintext,
``source_id`` = the corpus's own id) or a :class:`~stillweb.corpora.snapshot.records.SkippedRow`
with its reason (``empty_text``, ``missing_id``, ``too_large``, ``bad_value`` and the
container's ``bad_utf8``, ``not_json``...). Nothing is merged here: duplicates are
the build's :class:`~stillweb.corpora.build.accounting.RowAccount` policy.

The formats are one registry, :data:`CORPUS_FORMATS` (read by ``stillweb build corpus --format`` and the
docs' lists, tests/test_registries.py): a new one is added there and in :func:`detect_format`.

Formats (``--format``, detected when not given, see :func:`detect_format`):

=========  ==========================================================================
wiki18     JSON lines ``{"id": "0", "contents": "\\"Title\\"\\ntext"}`` (FlashRAG, Search-R1)
beir       a folder with ``corpus.jsonl`` (``_id``, ``title``, ``text``); queries and qrels
           are for ``stillweb eval retrieval``
kilt       JSON lines ``{"_id", "wikipedia_title", "text": [paragraphs]}`` (KILT knowledge source)
hf-disk    a ``datasets.save_to_disk`` folder
parquet, jsonl, json, csv, tsv: any columns, mapped by ``--id-column`` / ``--title-column`` /
           ``--text-column`` (defaults: the first of ``id _id docid doc_id pid``, ``title``,
           the first of ``text contents passage body content``)
=========  ==========================================================================

>>> spec = CorpusSpec.detect(["corpus.jsonl.gz"])                # doctest: +SKIP
>>> for item in spec.read(): ...                                 # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.records import RawPage, SkippedRow
from stillweb.corpora.sources.files import data_suffix, expand_inputs
from stillweb.corpora.sources.containers import Shard, file_shards, peek_columns, read_shard

__all__ = ["CorpusSpec", "ColumnMap", "CORPUS_FORMATS", "MAX_ROW_CHARS", "detect_format", "beir_corpus_file"]

CORPUS_FORMATS = ("wiki18", "beir", "kilt", "hf-disk", "parquet", "jsonl", "json", "csv", "tsv")
MAX_ROW_CHARS = 4_000_000  # a row whose text is longer is skipped as too_large
_ID_CANDIDATES = ("id", "_id", "docid", "doc_id", "pid")
_TEXT_CANDIDATES = ("text", "contents", "passage", "body", "content")
_SUFFIX_CONTAINERS = {".jsonl": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}


@dataclass(frozen=True)
class ColumnMap:
    """Which columns hold the id, title, text and url (``None``: the format's default)."""

    id: str | None = None
    title: str | None = None
    text: str | None = None
    url: str | None = None


_LAYOUTS = {  # format -> (container, fixed columns)
    "wiki18": ("jsonl", ColumnMap(id="id", text="contents")),
    "beir": ("jsonl", ColumnMap(id="_id", title="title", text="text")),
    "kilt": ("jsonl", ColumnMap(id="_id", title="wikipedia_title", text="text")),
}


def beir_corpus_file(folder: Path) -> Path | None:
    """The ``corpus.jsonl`` (optionally compressed) of a BEIR folder, or ``None``."""
    found = sorted(p for p in folder.glob("corpus.jsonl*") if p.is_file())
    return found[0] if found else None


def detect_format(inputs: list[str | Path]) -> str:
    """The format of ``inputs``: a BEIR or ``save_to_disk`` folder by its files, else the
    first file's suffix and, for JSON lines, the columns of its first row."""
    first = Path(str(inputs[0])).expanduser()
    if first.is_dir():
        if beir_corpus_file(first) is not None:
            return "beir"
        if (first / "state.json").is_file() or (first / "dataset_dict.json").is_file():
            return "hf-disk"
    files = expand_inputs(inputs)
    container = _SUFFIX_CONTAINERS.get(data_suffix(files[0]))
    if container is None:
        raise UsageError(f"{files[0]}: cannot tell the format from the name; give --format ({', '.join(CORPUS_FORMATS)})")
    if container in ("jsonl", "json"):
        columns = set(peek_columns(Shard(files[0], container)))
        if {"id", "contents"} <= columns and "title" not in columns:
            return "wiki18"
        if {"_id", "wikipedia_title", "text"} <= columns:
            return "kilt"
        if {"_id", "text"} <= columns:
            return "beir"
    return container


@dataclass(frozen=True)
class CorpusSpec:
    """A row corpus to read: its files, format and column mapping.

    ``shards()`` lists the units of work (a file or a parquet row group) and
    ``read_shard(shard)`` reads one, so ``read()`` is their concatenation in order.
    """

    inputs: tuple[str, ...]
    format: str
    columns: ColumnMap = field(default_factory=ColumnMap)
    max_row_chars: int = MAX_ROW_CHARS

    @classmethod
    def detect(cls, inputs: list[str | Path], format: str | None = None, columns: ColumnMap | None = None,
               max_row_chars: int = MAX_ROW_CHARS) -> "CorpusSpec":
        """A spec for ``inputs``; ``format=None`` detects it (:func:`detect_format`)."""
        if not inputs:
            raise UsageError("no corpus input given")
        if format is not None and format not in CORPUS_FORMATS:
            raise UsageError(f"unknown --format {format!r}; expected one of {', '.join(CORPUS_FORMATS)}")
        chosen = format or detect_format(inputs)
        return cls(tuple(str(i) for i in inputs), chosen, columns or ColumnMap(), max_row_chars)

    def container_of(self, path: Path) -> str:
        """How ``path`` stores records (``jsonl``, ``json``, ``csv``, ``tsv``, ``parquet``, ``hf-disk``):
        by its suffix, so one build may mix files; else the format's own container."""
        if self.format == "hf-disk":
            return "hf-disk"
        default = _LAYOUTS[self.format][0] if self.format in _LAYOUTS else self.format
        return _SUFFIX_CONTAINERS.get(data_suffix(path), default)

    def files(self) -> list[Path]:
        """The files (or ``save_to_disk`` folders) to read, in order."""
        if self.format == "hf-disk":
            return [Path(i).expanduser() for i in self.inputs]
        if self.format == "beir":
            return [_beir_corpus(Path(i).expanduser()) for i in self.inputs]
        return expand_inputs(list(self.inputs))

    def shards(self, shard_bytes: int | None = None) -> list[Shard]:
        """Units of reading, in order (see :mod:`stillweb.corpora.sources.containers`); ``shard_bytes``
        also cuts uncompressed JSON-lines files into byte ranges (their rows then count from each range)."""
        return [shard for path in self.files() for shard in file_shards(path, self.container_of(path), shard_bytes)]

    def read(self) -> Iterator[RawPage | SkippedRow]:
        """Every row of every shard, in order."""
        for shard in self.shards():
            yield from self.read_shard(shard)

    def read_shard(self, shard: Shard) -> Iterator[RawPage | SkippedRow]:
        """The pages (or skips) of one shard; the first row's columns are checked against the mapping."""
        mapping: ColumnMap | None = None
        for item in read_shard(shard):
            if isinstance(item, SkippedRow):
                yield item
                continue
            position, record = item
            if mapping is None:
                mapping = self._resolve_columns(shard.path, list(record))
            yield self._page(position, record, mapping)

    def _resolve_columns(self, path: Path, found: list[str]) -> ColumnMap:
        """The mapping for a file with columns ``found``; ``ValueError`` naming the file, columns and flag."""
        fixed = _LAYOUTS.get(self.format, (None, ColumnMap()))[1]
        given = self.columns
        text = given.text or fixed.text or _first_present(_TEXT_CANDIDATES, found)
        mapping = ColumnMap(
            id=given.id or fixed.id or _first_present(_ID_CANDIDATES, found),
            title=given.title or fixed.title or ("title" if "title" in found else None),
            text=text,
            url=given.url or ("url" if "url" in found else None),
        )
        required = {"text": mapping.text, **({"id": mapping.id} if given.id or fixed.id else {}),
                    **({"title": mapping.title} if given.title or fixed.title else {})}
        for role, column in required.items():
            if column is None or column not in found:
                shown = f"column {column!r}" if column else f"{role} column"
                raise UsageError(
                    f"{path}: no {shown} for the {self.format} format; columns found: {', '.join(found) or 'none'}. "
                    f"Name the column with --{role}-column, or choose another --format ({', '.join(CORPUS_FORMATS)})"
                )
        return mapping

    def _page(self, position: str, record: dict, mapping: ColumnMap) -> RawPage | SkippedRow:
        text = record.get(mapping.text)
        if self.format == "kilt" and isinstance(text, list):
            text = "\n\n".join(p.strip() for p in text if isinstance(p, str) and p.strip())
        title = record.get(mapping.title) if mapping.title else ""
        head = None
        if self.format == "wiki18" and isinstance(text, str):
            head, title, text = _split_wiki18(text)
        source_id = record.get(mapping.id) if mapping.id else ""
        if isinstance(source_id, int) and not isinstance(source_id, bool):
            source_id = str(source_id)
        url = record.get(mapping.url) if mapping.url else ""
        for role, value in (("text", text), ("title", title), ("id", source_id), ("url", url)):
            if value is not None and not isinstance(value, str):
                return SkippedRow("bad_value", position, f"{role} column holds {json.dumps(value)[:80]}, expected a string")
        if mapping.id and not (source_id or "").strip():
            return SkippedRow("missing_id", position, f"column {mapping.id!r} is empty")
        if not (text or "").strip():
            return SkippedRow("empty_text", position, f"column {mapping.text!r} is empty")
        if len(text) > self.max_row_chars:
            return SkippedRow("too_large", position, f"{len(text)} characters, the limit is {self.max_row_chars}")
        source_id = (source_id or "").strip()
        missing_title = not (title or "").strip()  # counted as missing_title; the id names the document
        return RawPage(title=source_id if missing_title else title, text=text, url=url or "", is_wikitext=False,
                       position=position, source_id=source_id, title_from_id=missing_title, source_head=head)

    def describe(self) -> dict:
        """The manifest's ``source`` entry: format, file names (not paths) and the column mapping."""
        columns = {k: v for k, v in vars(self.columns).items() if v}
        return {"kind": "rows", "format": self.format, "files": [p.name for p in self.files()], "columns": columns}


def _first_present(candidates: tuple[str, ...], found: list[str]) -> str | None:
    return next((name for name in candidates if name in found), None)


def _split_wiki18(contents: str) -> tuple[str, str, str]:
    """``"Title"\\ntext`` -> (``"Title"\\n``, ``Title``, ``text``), as FlashRAG writes wiki-18 passages: the
    head as written (``contents == head + text``, what Search-R1's retriever serves), the title, the text."""
    head, newline, rest = contents.partition("\n")
    if not newline:
        return "", "", contents
    return head + newline, head.strip().strip('"'), rest


def _beir_corpus(folder: Path) -> Path:
    if folder.is_file():
        return folder
    found = beir_corpus_file(folder)
    if found is None:
        raise FileNotFoundError(f"{folder}: not a BEIR folder (no corpus.jsonl); give --format or the corpus file")
    return found
