"""Records of one corpus file, by container: JSON lines, JSON, CSV, TSV, parquet and
``datasets.save_to_disk`` folders.

Every container yields, for each record in file order, either ``(position, record)``
with ``position = "<file>:row <n>"`` (n counts every record of the file from 1) and
``record`` a dict, or a :class:`~stillweb.corpora.snapshot.records.SkippedRow` for a record
that cannot be read (``bad_utf8``, ``not_json``, ``not_object``, ``bad_csv``).

Work is cut into :class:`Shard` s (a whole file, or one parquet row group) so a
distributed build can read shard ``i`` alone: ``for shard in file_shards(path,
"parquet"): read_shard(shard)``. Everything streams: a JSON-lines, CSV or TSV
file is read one line at a time, parquet one batch at a time; only a ``.json``
array is parsed whole (use JSON lines for large corpora).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.records import SkippedRow
from stillweb.corpora.sources.files import CorpusFileError, compression_of, open_binary, open_lines

__all__ = ["Shard", "Record", "CONTAINERS", "file_shards", "read_shard", "peek_columns", "path_bytes"]

CONTAINERS = ("jsonl", "json", "csv", "tsv", "parquet", "hf-disk")
_BATCH_ROWS = 1024
_MAX_FIELD_CHARS = 1 << 26
# Headerless TSV (MS MARCO ``collection.tsv``: id, text; DPR ``psgs_w100.tsv`` has a header).
HEADERLESS_TSV_COLUMNS = {2: ("id", "text"), 3: ("id", "text", "title")}
_KNOWN_HEADER_NAMES = {"id", "_id", "docid", "doc_id", "pid", "text", "title", "contents", "passage", "body"}

Record = tuple[str, dict]


@dataclass(frozen=True)
class Shard:
    """A unit of reading: a file in a container, for parquet one row group (``part``), for an
    uncompressed JSON-lines file a byte range ``[start, end)`` cut at line starts.

    A byte-range shard cannot know how many rows come before it: its positions count rows
    from the range's start, and whoever joins the shards adds the rows of the earlier ones.
    """

    path: Path
    container: str
    part: int | None = None
    start: int | None = None
    end: int | None = None

    def describe(self) -> dict:
        """The shard for a manifest: its file's name, and its row group or byte range (no path).

        >>> Shard(Path("/data/a.jsonl"), "jsonl", start=0, end=512).describe()
        {'file': 'a.jsonl', 'bytes': [0, 512]}
        """
        return {"file": self.path.name, **({"row_group": self.part} if self.part is not None else {}),
                **({"bytes": [self.start, self.end]} if self.start is not None else {})}

    def size(self) -> int:
        """About how many bytes of the source the shard reads (a parquet row group: its uncompressed size)."""
        if self.part is not None:
            return _parquet_file(self.path).metadata.row_group(self.part).total_byte_size
        if self.start is not None:
            return (self.end or 0) - self.start
        return path_bytes(self.path)


def path_bytes(path: Path) -> int:
    """The bytes of a file, or of every file below a folder."""
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file()) if path.is_dir() else path.stat().st_size


def file_shards(path: Path, container: str, shard_bytes: int | None = None) -> list[Shard]:
    """The shards of one file (or ``save_to_disk`` folder), in reading order; ``shard_bytes``
    cuts an uncompressed JSON-lines file into line-aligned byte ranges of about that size."""
    if container not in CONTAINERS:
        raise UsageError(f"unknown container {container!r}; expected one of {', '.join(CONTAINERS)}")
    if container == "parquet":
        groups = _parquet_file(path).metadata.num_row_groups
        return [Shard(path, container, part) for part in range(groups)]
    if container == "jsonl" and shard_bytes and compression_of(path) is None:
        return [Shard(path, container, start=start, end=end) for start, end in _line_ranges(path, shard_bytes)]
    return [Shard(path, container)]


def _line_ranges(path: Path, shard_bytes: int) -> list[tuple[int, int]]:
    """``[start, end)`` ranges of about ``shard_bytes`` covering the file, each starting a line."""
    size = path.stat().st_size
    ranges, start = [], 0
    with path.open("rb") as stream:
        while start < size:
            stream.seek(min(start + shard_bytes, size))
            stream.readline()  # to the end of the line the cut falls in
            end = min(stream.tell(), size) if start + shard_bytes < size else size
            ranges.append((start, end))
            start = end
    return ranges or [(0, 0)]


def read_shard(shard: Shard) -> Iterator[Record | SkippedRow]:
    """The records of ``shard``, in file order."""
    readers = {"jsonl": _read_json_lines, "json": _read_json, "csv": _read_delimited, "tsv": _read_delimited,
               "parquet": _read_parquet_group, "hf-disk": _read_saved_dataset}
    return readers[shard.container](shard)


def peek_columns(shard: Shard) -> list[str]:
    """The column names of a shard's first readable record (``[]`` when it has none)."""
    if shard.container == "parquet":
        return list(_parquet_file(shard.path).schema_arrow.names)
    if shard.container == "hf-disk":
        return list(_load_saved(shard.path).column_names)
    for item in read_shard(shard):
        if not isinstance(item, SkippedRow):
            return list(item[1])
    return []


def _position(path: Path, row: int) -> str:
    return f"{path.name}:row {row}"


def _read_json_lines(shard: Shard) -> Iterator[Record | SkippedRow]:
    row = 0
    lines = open_lines(shard.path) if shard.start is None else _range_lines(shard)
    for line in lines:
        if not line.strip():
            continue
        row += 1
        yield _json_record(line, _position(shard.path, row))


def _range_lines(shard: Shard) -> Iterator[bytes]:
    """The lines of an uncompressed file that start in ``[shard.start, shard.end)``."""
    with shard.path.open("rb") as stream:
        stream.seek(shard.start or 0)
        position = shard.start or 0
        while position < (shard.end or 0):
            line = stream.readline()
            if not line:
                return
            position += len(line)
            yield line


def _json_record(line: bytes, position: str) -> Record | SkippedRow:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return SkippedRow("bad_utf8", position, f"byte {error.start} is not UTF-8")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        return SkippedRow("not_json", position, str(error))
    if not isinstance(record, dict):
        return SkippedRow("not_object", position, f"a JSON {type(record).__name__}, expected an object")
    return position, record


def _read_json(shard: Shard) -> Iterator[Record | SkippedRow]:
    """A ``.json`` file: a JSON array of objects, or JSON lines under a ``.json`` name."""
    with open_binary(shard.path) as stream:
        head = stream.peek(64).lstrip()
    if not head.startswith(b"["):
        yield from _read_json_lines(shard)
        return
    try:
        with open_binary(shard.path) as stream:
            records = json.loads(stream.read().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, OSError) as error:
        raise CorpusFileError(f"{shard.path}: not a readable JSON array: {error}") from error
    for row, record in enumerate(records, 1):
        position = _position(shard.path, row)
        if isinstance(record, dict):
            yield position, record
        else:
            yield SkippedRow("not_object", position, f"a JSON {type(record).__name__}, expected an object")


def _decoded_lines(path: Path) -> Iterator[str]:
    for line in open_lines(path):
        yield line.decode("utf-8", "surrogateescape")  # undecodable bytes are caught per row below


def _read_delimited(shard: Shard) -> Iterator[Record | SkippedRow]:
    """CSV with a header row; TSV with a header row or, headerless, MS MARCO / DPR column order."""
    delimiter = "\t" if shard.container == "tsv" else ","
    csv.field_size_limit(max(csv.field_size_limit(), _MAX_FIELD_CHARS))  # long passages; too_large is checked later
    rows = csv.reader(_decoded_lines(shard.path), delimiter=delimiter)
    try:
        first = next(rows, None)
    except csv.Error as error:
        raise CorpusFileError(f"{shard.path}: unreadable first line: {error}") from error
    if first is None:
        return
    header_names = {name.strip().lower() for name in first}
    if shard.container == "tsv" and not header_names & _KNOWN_HEADER_NAMES:
        if len(first) not in HEADERLESS_TSV_COLUMNS:
            raise CorpusFileError(
                f"{shard.path}: a headerless TSV needs 2 columns (id, text) or 3 (id, text, title); "
                f"the first line has {len(first)}. Add a header line naming the columns."
            )
        header = list(HEADERLESS_TSV_COLUMNS[len(first)])
        pending = [first]
    else:
        header = [name.strip() for name in first]
        pending = []
    row = 0
    while True:
        try:
            values = pending.pop() if pending else next(rows)
        except StopIteration:
            return
        except csv.Error as error:
            row += 1
            yield SkippedRow("bad_csv", _position(shard.path, row), str(error))
            continue
        row += 1
        yield _delimited_record(header, values, _position(shard.path, row))


def _delimited_record(header: list[str], values: list[str], position: str) -> Record | SkippedRow:
    if len(values) != len(header):
        return SkippedRow("bad_csv", position, f"{len(values)} fields, the header has {len(header)}")
    for value in values:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return SkippedRow("bad_utf8", position, "a field holds bytes that are not UTF-8")
    return position, dict(zip(header, values))


def _parquet_file(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (OSError, ValueError) as error:
        raise CorpusFileError(f"{path}: not a readable parquet file: {error}") from error


def _read_parquet_group(shard: Shard) -> Iterator[Record | SkippedRow]:
    parquet = _parquet_file(shard.path)
    part = shard.part or 0
    row = sum(parquet.metadata.row_group(i).num_rows for i in range(part))
    for batch in parquet.iter_batches(batch_size=_BATCH_ROWS, row_groups=[part]):
        for record in batch.to_pylist():
            row += 1
            yield _position(shard.path, row), record


def _load_saved(path: Path):
    import datasets  # a core dependency, imported only for save_to_disk folders

    if (path / "dataset_dict.json").is_file():
        splits = sorted(p.name for p in path.iterdir() if (p / "state.json").is_file())
        raise CorpusFileError(
            f"{path} is a DatasetDict with splits {', '.join(splits)}; pass one split folder, e.g. {path / splits[0]}"
            if splits else f"{path} is a DatasetDict without readable splits"
        )
    return datasets.load_from_disk(str(path))


def _read_saved_dataset(shard: Shard) -> Iterator[Record | SkippedRow]:
    """A ``datasets.Dataset.save_to_disk`` folder: its memory-mapped Arrow files, batch by batch."""
    dataset = _load_saved(shard.path)
    row = 0
    for batch in dataset.iter(batch_size=_BATCH_ROWS):
        columns = list(batch)
        for values in zip(*(batch[name] for name in columns)):
            row += 1
            yield _position(shard.path, row), dict(zip(columns, values))
