"""``stillweb build dense``: add a dense index (:mod:`stillweb.corpora.search.dense`) to a built snapshot.

The vectors come from an OpenAI-compatible embeddings server (:func:`embed_snapshot`: each
document's ``prefix + title + "\\n" + text`` cut to ``max_chars``, in batches) or from a file of
precomputed vectors keyed by the corpus's own source ids (:func:`read_vectors_file`: ``.npz``
with ``ids`` and ``vectors``, ``.npy`` beside an ids file, or parquet with ``id`` and
``vector``/``embedding`` columns). :func:`add_dense_index` then writes them atomically: the
snapshot's files are hard-linked into a temporary directory beside it (no copy: they are
immutable), ``dense/`` and the new manifest are written there, and the two directories are
exchanged (``renameat2(RENAME_EXCHANGE)``, as a build does). A failure or Ctrl-C anywhere leaves
the snapshot exactly as it was; the content fingerprint never changes.

>>> add_dense_index("snapshots/syn-2k", vectors_file="vectors.npz", model="my-model")   # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from stillweb.corpora.search.dense import DENSE_DIR, quantize_many, vector_norms
from stillweb.corpora.search.dense_model import (DEFAULT_MODEL, DOCUMENT_PREFIX, MODEL_NAME, QUERY_PREFIX, SHIPPED,
                                                 ModelPool, is_default, model_info, shipped_model)
from stillweb.corpora.search.embeddings import EmbeddingsClient
from stillweb.corpora.errors import DataError, UsageError, writing
from stillweb.corpora.snapshot.manifest import MANIFEST_NAME, write_manifest_as_is
from stillweb.corpora.progress import progress_bar
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.build.snapshot_writer import BUILDING_PREFIX, exchange_into_place, remove_stale_builds

__all__ = ["add_dense_index", "embed_snapshot", "read_vectors_file", "match_vectors", "DEFAULT_MAX_CHARS"]

DEFAULT_MAX_CHARS = 2_000  # of each document's text sent to the server (embedding models read ~512 tokens)
_NAMED = 5  # ids named in an error message
_QUANTIZE_ROWS = 65_536


def add_dense_index(
    snapshot_path: str | Path, *, model: str, endpoint: str | None = None, vectors_file: str | Path | None = None,
    ids_file: str | Path | None = None, batch_size: int = 64, timeout: float = 60.0, max_chars: int = DEFAULT_MAX_CHARS,
    query_prefix: str = "", document_prefix: str = "", ignore_unknown: bool = False, progress: bool = True,
    workers: int = 1,
) -> dict:
    """Embed (``endpoint``, or the shipped model: ``model="default"`` with neither source) or read
    (``vectors_file``) a vector per document, quantise them and add ``dense/`` to the snapshot; returns
    the manifest's ``dense`` entry. ``query_prefix`` is what searches put before a query (e5 and bge want
    ``"query: "``; the shipped model sets its own, and embeds in ``workers`` processes)."""
    path = Path(snapshot_path).expanduser().resolve()
    shipped = is_default(model) and endpoint is None and vectors_file is None
    if not shipped and (endpoint is None) == (vectors_file is None):
        raise UsageError(f"give exactly one of --endpoint URL (an embeddings server) or --vectors FILE, or neither "
                         f"with --model {DEFAULT_MODEL} (the shipped model, the 'dense' extra)")
    if shipped and (query_prefix or document_prefix):
        raise UsageError(f"--model {DEFAULT_MODEL} puts the e5 prefixes {QUERY_PREFIX!r} and {DOCUMENT_PREFIX!r} "
                         f"itself: drop --query-prefix and --document-prefix")
    if shipped:
        info = model_info(shipped_model())
        embedder = shipped_model() if workers == 1 else ModelPool(workers)
        query_prefix, document_prefix = QUERY_PREFIX, DOCUMENT_PREFIX
    snapshot = Snapshot.open(path)
    if shipped:
        vectors = embed_snapshot(snapshot, embedder, batch_size, max_chars, document_prefix, progress)
        source = {"from": SHIPPED, "document_text": f"prefix, title, newline, text (first {max_chars} characters)",
                  "document_prefix": document_prefix}
        model = MODEL_NAME
        source.update(info)
    elif endpoint is not None:
        vectors = embed_snapshot(snapshot, EmbeddingsClient(endpoint, model, timeout), batch_size, max_chars,
                                 document_prefix, progress)
        source = {"from": "endpoint", "document_text": f"prefix, title, newline, text (first {max_chars} characters)",
                  "document_prefix": document_prefix}
    else:
        ids, raw = read_vectors_file(Path(vectors_file), Path(ids_file) if ids_file else None)
        vectors = match_vectors(snapshot, ids, raw, ignore_unknown)
        source = {"from": "vectors file", "file": Path(vectors_file).name}
    snapshot.close()
    norms = vector_norms(vectors)
    info = {
        "model": model, "dimensions": int(vectors.shape[1]), "docs": int(len(vectors)), "query_prefix": query_prefix,
        "quantization": "int8, one scale per vector (largest component +-127, rounded half to even)",
        "similarity": "cosine of the int8 vectors, exact integer dot products",
        "vectors_sha256": hashlib.sha256(vectors.tobytes()).hexdigest(), **source,
    }
    _write_atomically(path, vectors, norms, info)
    return info


def embed_snapshot(snapshot: Snapshot, client: EmbeddingsClient, batch_size: int, max_chars: int, prefix: str,
                   progress: bool = True) -> np.ndarray:
    """Every document's quantised vector from ``client``, in doc-id order (a progress bar on stderr)."""
    for name, value in (("--batch-size", batch_size), ("--max-chars", max_chars)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"{name} must be a positive integer, got {value!r}")
    count = len(snapshot)
    vectors: np.ndarray | None = None
    bar = progress_bar(total=count, unit="doc", desc="embedding", enabled=progress)
    try:
        for start in range(0, count, batch_size):
            ids = list(range(start, min(start + batch_size, count)))
            texts = [f"{prefix}{title}\n{text[:max_chars]}"
                     for title, text in zip(snapshot._titles.many(ids), snapshot._texts.many(ids))]
            batch = quantize_many(client.embed(texts))
            if vectors is None:
                vectors = np.zeros((count, batch.shape[1]), dtype=np.int8)
            vectors[start : start + len(ids)] = batch
            bar.update(len(ids))
    finally:
        bar.close()
        client.close()
    return vectors


def read_vectors_file(path: Path, ids_file: Path | None = None) -> tuple[list[str], np.ndarray]:
    """``(ids, vectors)`` from ``.npz`` (``ids``, ``vectors``), ``.npy`` + ``ids_file`` (one id a line)
    or parquet (``id`` and ``vector`` or ``embedding``); ``UsageError`` naming what is missing."""
    if not path.is_file():
        raise UsageError(f"vectors file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as arrays:
            missing = [name for name in ("ids", "vectors") if name not in arrays]
            if missing:
                raise UsageError(f"{path} has arrays {sorted(arrays)}; it needs 'ids' and 'vectors'")
            ids, vectors = [str(item) for item in arrays["ids"].tolist()], arrays["vectors"]
    elif suffix == ".npy":
        if ids_file is None:
            raise UsageError(f"{path} holds vectors only: give --ids FILE (one source id a line, in the rows' order)")
        vectors = np.load(path, mmap_mode="r", allow_pickle=False)
        ids = ids_file.read_text(encoding="utf-8").splitlines()
    elif suffix == ".parquet":
        table = pq.read_table(path)
        vector_column = next((name for name in ("vector", "embedding") if name in table.column_names), None)
        if "id" not in table.column_names or vector_column is None:
            raise UsageError(f"{path} has columns {table.column_names}; it needs 'id' and 'vector' (or 'embedding')")
        ids = [str(item) for item in table.column("id").to_pylist()]
        vectors = _list_column_matrix(table.column(vector_column), path)
    else:
        raise UsageError(f"vectors file {path} must be .npz, .npy (with --ids) or .parquet")
    if vectors.ndim != 2 or len(vectors) != len(ids):
        raise UsageError(f"{path}: {len(ids)} ids for vectors of shape {vectors.shape} (need one row per id)")
    return ids, vectors


def _list_column_matrix(column, path: Path) -> np.ndarray:
    """A parquet list column of equal-length float lists as a 2-d array, without Python lists."""
    import pyarrow.compute as pc

    column = column.combine_chunks()
    if column.null_count:
        raise UsageError(f"{path}: {column.null_count} rows have no vector")
    lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)
    if len(lengths) and (lengths != lengths[0]).any():
        raise UsageError(f"{path}: vectors of different lengths ({lengths.min()} to {lengths.max()} values)")
    values = pc.list_flatten(column).to_numpy(zero_copy_only=False)
    return values.reshape(len(lengths), int(lengths[0]) if len(lengths) else 0)


def match_vectors(snapshot: Snapshot, ids: list[str], vectors: np.ndarray, ignore_unknown: bool = False) -> np.ndarray:
    """The quantised vector of every document, found by its source id (its doc id when the corpus has none).

    ``DataError`` counting and naming ids given twice, ids of no document (unless ``ignore_unknown``)
    and documents without a vector."""
    doc_keys = [snapshot.source_id_of(doc_id) or str(doc_id) for doc_id in range(len(snapshot))]
    by_key = {key: doc_id for doc_id, key in enumerate(doc_keys)}
    if len(by_key) != len(doc_keys):
        raise DataError(f"snapshot {snapshot.path} has repeated source ids: vectors cannot be keyed by them")
    rows = {}
    repeated, unknown = [], []
    for row, key in enumerate(ids):
        if key not in by_key:
            unknown.append(key)
        elif by_key[key] in rows:
            repeated.append(key)
        else:
            rows[by_key[key]] = row
    missing = [key for doc_id, key in enumerate(doc_keys) if doc_id not in rows]
    problems = [f"{len(items)} {what}: {', '.join(map(repr, items[:_NAMED]))}{', ...' if len(items) > _NAMED else ''}"
                for items, what in ((repeated, "ids given twice"),
                                    ([] if ignore_unknown else unknown, "ids of no document in the snapshot"),
                                    (missing, "documents without a vector"))
                if items]
    if problems:
        hint = "" if ignore_unknown or not unknown else " (--ignore-unknown skips vectors of ids not in the snapshot)"
        raise DataError(f"vectors do not match snapshot {snapshot.path}: " + "; ".join(problems) + hint)
    order = np.fromiter((rows[doc_id] for doc_id in range(len(doc_keys))), dtype=np.int64, count=len(doc_keys))
    quantized = np.empty((len(order), vectors.shape[1]), dtype=np.int8)
    for start in range(0, len(order), _QUANTIZE_ROWS):  # in blocks: a float64 copy of every vector may not fit
        block = np.asarray(vectors[order[start : start + _QUANTIZE_ROWS]], dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(block).all(axis=1))
        if len(bad):
            raise DataError(f"the vector of id {ids[order[start + bad[0]]]!r} (row {order[start + bad[0]]} of the "
                            f"file) has NaN or infinite values")
        quantized[start : start + len(block)] = quantize_many(block)
    return quantized


def _write_atomically(path: Path, vectors: np.ndarray, norms: np.ndarray, info: dict) -> None:
    """The snapshot with ``dense/`` and the manifest's ``dense`` entry, swapped in whole."""
    kept = f"the snapshot at {path} is unchanged"
    with writing(path, "the dense index of", f"the temporary files were removed; {kept}"):
        remove_stale_builds(path)
        tmp = path.with_name(f"{BUILDING_PREFIX.format(name=path.name)}{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            shutil.copytree(path, tmp, copy_function=_link_or_copy,
                            ignore=lambda folder, names: [DENSE_DIR, MANIFEST_NAME] if Path(folder) == path else [])
            (tmp / DENSE_DIR).mkdir()
            np.save(tmp / DENSE_DIR / "vectors.npy", vectors)
            np.save(tmp / DENSE_DIR / "norms.npy", norms)
            manifest = dict(Snapshot.open(path).manifest)  # re-read: the snapshot may have been rebuilt meanwhile
            files = {name: digest for name, digest in manifest.get("files", {}).items()
                     if not name.startswith(DENSE_DIR + "/")}
            for name in ("vectors.npy", "norms.npy"):
                files[f"{DENSE_DIR}/{name}"] = hashlib.sha256((tmp / DENSE_DIR / name).read_bytes()).hexdigest()
            write_manifest_as_is(tmp, dict(manifest, dense=info, files=dict(sorted(files.items()))))
            exchange_into_place(tmp, path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _link_or_copy(source: str, destination: str) -> None:
    """Hard-link an immutable snapshot file (copy where the file system cannot link)."""
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)

