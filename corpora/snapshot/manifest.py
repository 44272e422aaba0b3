"""A snapshot's manifest: what it is, how it was built, and hashes to check it.

``manifest.json`` records the source, build parameters, counts, the sha256 of
every file, and the **fingerprint**: a hash of the content (the rows of the
tables and the index parameters), not of paths, times, thread counts or the
bytes of tantivy's segment files (which carry random segment ids).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.errors import DataError

__all__ = [
    "FORMAT",
    "SHARDED_FORMAT",
    "SHARDED_FORMATS",
    "READABLE_FORMATS",
    "MANIFEST_NAME",
    "TABLE_FILES",
    "SnapshotError",
    "content_fingerprint",
    "file_hashes",
    "check_table_footers",
    "damaged",
    "read_manifest",
    "read_snapshot_table",
    "verify_snapshot",
    "write_manifest",
    "write_manifest_as_is",
]

# 2: docs carry ``source_id`` (the corpus's own id). 3: the index parameters may say how a query is
# read ("query": "terms" on passage snapshots, issue 37); an older reader would ignore that and rank
# differently, so it refuses the format instead. Older formats read as recorded (empty source ids
# for 1; tantivy query syntax, and passages' body field alone, for 1 and 2). 4: pages are indexed as
# passages and rank as their best one (index.PAGE_INDEX_PARAMETERS, issue 43); a format 3 reader would
# count passages as documents, so it refuses the format. 5: English rows and passages rank with query term
# counts, single letters as stop words and adjacent-term proximity (index.ROW_INDEX_PARAMETERS, issue 50); a
# format 4 reader would not know the tokenizer or the query mode, so it refuses the format. 6: the index also
# holds impact postings (index.impacts, search/impacts.py, issue 48), searched with exact block-max MaxScore;
# a score sums its clauses in query order, where tantivy's order varies, so scores may differ from format 5's
# in the last bit. A format 5 reader would search it exhaustively with tantivy, so it refuses the format.
FORMAT = "stillweb-snapshot/6"
# A snapshot built in shards: a manifest listing shard snapshots of the formats above (snapshot/sharded.py, issue 48).
# 2: each shard carries impact postings scored with the collection's statistics (a /1 reader would search tantivy).
SHARDED_FORMAT = "stillweb-sharded/2"
SHARDED_FORMATS = ("stillweb-sharded/1", SHARDED_FORMAT)
READABLE_FORMATS = ("stillweb-snapshot/1", "stillweb-snapshot/2", "stillweb-snapshot/3", "stillweb-snapshot/4",
                    "stillweb-snapshot/5", FORMAT, *SHARDED_FORMATS)
MANIFEST_NAME = "manifest.json"
TABLE_FILES = ("docs.parquet", "facts.parquet", "links.parquet", "redirects.parquet")
_HASH_BATCH_ROWS = 65_536


class SnapshotError(DataError):
    """A snapshot directory is missing, incomplete or damaged; the message names the file."""


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_hashes(directory: Path) -> dict[str, str]:
    """sha256 of every file below ``directory`` except the manifest, by relative path."""
    hashes = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and path.name != MANIFEST_NAME and ".tantivy-" not in path.name:
            hashes[path.relative_to(directory).as_posix()] = _sha256_file(path)
    return hashes


class _HashSink:
    """A write-only file object that feeds a hash (for Arrow IPC streams)."""

    def __init__(self, digest) -> None:
        self.digest = digest
        self.closed = False

    def write(self, data) -> int:
        self.digest.update(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def _hash_table(path: Path, digest) -> None:
    """Feed the table's rows to ``digest`` as an Arrow IPC stream of fixed-size batches.

    Rows are regrouped into batches of ``_HASH_BATCH_ROWS`` whatever the file's
    row groups, and only one such window is in memory at a time.
    """
    parquet = pq.ParquetFile(path)
    schema = parquet.schema_arrow.remove_metadata()
    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    with pa.ipc.new_stream(pa.PythonFile(_HashSink(digest), mode="w"), schema) as writer:

        def flush(rows: int) -> None:
            nonlocal pending, pending_rows
            window = pa.Table.from_batches(pending, schema=schema)
            head, rest = window.slice(0, rows).combine_chunks(), window.slice(rows)
            for batch in head.to_batches():
                writer.write_batch(batch)
            pending, pending_rows = rest.to_batches(), rest.num_rows

        for batch in parquet.iter_batches(batch_size=_HASH_BATCH_ROWS):
            pending.append(batch.replace_schema_metadata(None))
            pending_rows += batch.num_rows
            while pending_rows >= _HASH_BATCH_ROWS:
                flush(_HASH_BATCH_ROWS)
        if pending_rows:
            flush(pending_rows)


def content_fingerprint(directory: Path, index_parameters: dict) -> str:
    """Hash of the snapshot's content: table rows in order, plus the index parameters."""
    digest = hashlib.sha256()
    digest.update(FORMAT.encode())
    digest.update(json.dumps(index_parameters, sort_keys=True).encode())
    for name in TABLE_FILES:
        digest.update(name.encode())
        _hash_table(directory / name, digest)
    return digest.hexdigest()


def write_manifest(directory: Path, manifest: dict) -> dict:
    """Add file hashes to ``manifest`` and write it as ``manifest.json``."""
    manifest = dict(manifest, format=FORMAT, files=file_hashes(directory))
    return write_manifest_as_is(directory, manifest)


def write_manifest_as_is(directory: Path, manifest: dict) -> dict:
    """Write ``manifest`` as ``manifest.json`` unchanged (its format and file hashes as given: an addition
    such as ``stillweb build dense`` keeps the snapshot's format and hashes only the files it adds)."""
    text = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (directory / MANIFEST_NAME).write_text(text, encoding="utf-8")
    return manifest


def load_manifest_json(directory: Path, error: type[Exception], folder: str, kind: str) -> Any:
    """The parsed ``manifest.json`` of ``directory`` (a snapshot or a frozen store: ``folder`` and ``kind``
    name it in messages); ``error`` naming the path when the folder or its manifest is absent or damaged.

    >>> load_manifest_json(Path("/nonexistent"), FileNotFoundError, "snapshot directory", "stillweb snapshot")
    Traceback (most recent call last):
    FileNotFoundError: snapshot directory not found: /nonexistent
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise error(f"{folder} not found: {directory}")
    path = directory / MANIFEST_NAME
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"not a {kind} (no {MANIFEST_NAME}): {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as problem:
        raise error(f"damaged manifest {path}: {problem}") from None


def read_manifest(directory: Path) -> dict:
    """The manifest of a snapshot directory; :class:`SnapshotError` if absent or unreadable."""
    manifest = load_manifest_json(directory, SnapshotError, "snapshot directory", "stillweb snapshot")
    path = Path(directory) / MANIFEST_NAME
    if not isinstance(manifest, dict) or manifest.get("format") not in READABLE_FORMATS:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise SnapshotError(f"{path} has format {found!r}; this stillweb reads {', '.join(READABLE_FORMATS)}"
                            " (a newer format needs a newer stillweb)")
    return manifest


def damaged(path: Path, error: BaseException) -> SnapshotError:
    """The error for a snapshot file that cannot be read: it names the file and how to find what else is damaged."""
    reason = " ".join(str(error).split())  # pyarrow's messages span lines
    return SnapshotError(f"cannot read {path}: {reason} (the file is damaged or truncated; "
                         f"`stillweb verify {path.parent}` lists every damaged file; rebuild the snapshot)")


def read_snapshot_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A parquet table of a snapshot; :class:`SnapshotError` naming the file when it is damaged or missing."""
    try:
        return pq.read_table(path, columns=columns)
    except (OSError, pa.ArrowException) as error:
        raise damaged(Path(path), error) from None


def check_table_footers(directory: Path) -> None:
    """Read the footer of each table file present (a few KB each): a truncated file fails here, naming it."""
    for name in TABLE_FILES:
        path = Path(directory) / name
        if path.is_file():
            try:
                pq.read_metadata(path)
            except (OSError, pa.ArrowException) as error:
                raise damaged(path, error) from None


def verify_snapshot(directory: Path) -> list[str]:
    """Recheck every file hash (a sharded snapshot's and each of its shards'); return the problems found
    (empty when intact)."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    problems = []
    for shard in manifest.get("shards", []):  # a sharded snapshot's
        try:
            problems += [f"{shard['path']}: {problem}" for problem in verify_snapshot(directory / shard["path"])]
        except SnapshotError as error:
            problems.append(f"{shard['path']}: {error}")
    for relative, expected in sorted(manifest.get("files", {}).items()):
        path = directory / relative
        if not path.is_file():
            problems.append(f"missing file: {relative}")
        elif _sha256_file(path) != expected:
            problems.append(f"damaged file (sha256 differs): {relative}")
    return problems
