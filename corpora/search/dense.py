"""A snapshot's optional dense index: your own embeddings, searched exactly and identically everywhere.

``stillweb build dense`` (:mod:`stillweb.corpora.search.dense_build`) adds ``dense/`` to a built snapshot::

    dense/vectors.npy   int8 (docs x dimensions): each document's vector scaled so its largest
                        component is +-127 and rounded (symmetric int8, one scale per vector)
    dense/norms.npy     float64 (docs): the Euclidean norm of each int8 vector (0 for a zero vector)

and a ``"dense"`` entry in the manifest (model, dimensions, prefixes, where the vectors came from,
the sha256 of the vectors). The text fingerprint is unchanged: the dense index is an addition.

Scoring is the cosine of the quantised vectors, ``dot(q, d) / (|q| |d|)``, and it is exact: the
int8 dot products are summed as float32 (float64 past :data:`EXACT_FLOAT32_DIMENSIONS`), where
every partial sum is an integer small enough to be represented exactly, so BLAS may add them in
any order, on any CPU and any thread count, and get the same integer. The one division per
document and the one square root per vector are IEEE-rounded. The top ``k`` is ordered by
``(-score, doc_id)``, ties included, so a ranking is identical on every machine.

Hybrid search (:mod:`stillweb.corpora.search.fusion`, as the manifest records) is, for every index without a
recorded ``fusion``, reciprocal-rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009, the fusion
Pyserini's and Elasticsearch's hybrid search use): each document scores
``sum(weight / (RRF_K + rank))`` over the BM25 and the dense top :data:`FUSION_DEPTH`, ranks
from 1, with :data:`FUSION_WEIGHTS`.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from stillweb.corpora.errors import DataError, UsageError

__all__ = [
    "DENSE_DIR", "SEARCH_MODES", "RRF_K", "FUSION_DEPTH", "FUSION_WEIGHTS", "EXACT_FLOAT32_DIMENSIONS",
    "DenseIndex", "quantize", "quantize_many", "vector_norms", "top_k", "fuse", "check_mode", "no_dense_index",
]

DENSE_DIR = "dense"
SEARCH_MODES = ("bm25", "dense", "hybrid")
RRF_K = 60  # Cormack et al.'s constant
FUSION_DEPTH = 100  # each ranking contributes its top 100 (corpora.search.index MAX_K)
FUSION_WEIGHTS = {"bm25": 1.0, "dense": 1.0}
# 127 * 127 * d < 2**24: every partial sum of an int8 dot product is an exact float32 integer.
EXACT_FLOAT32_DIMENSIONS = (1 << 24) // (127 * 127)
_BLOCK_ROWS = 4096  # rows converted to float per matrix-vector product (fits in L2 with its float copy)
QUERY_CHUNK = 8  # queries of a batch scored per pass over the rows (their dot products: 8 x docs floats)


def check_mode(mode: object, name: str = "mode") -> str:
    """``mode`` if it is one of :data:`SEARCH_MODES`, else ``UsageError`` naming the choices."""
    if mode not in SEARCH_MODES:
        raise UsageError(f"unknown {name} {mode!r}: choose one of {', '.join(SEARCH_MODES)}")
    return mode


def no_dense_index(path: Path) -> str:
    """The message for dense or hybrid search on a snapshot without ``dense/``: how to add one."""
    return (f"snapshot {path} has no dense index, so only bm25 search is available; add one with "
            f"`stillweb build dense {path} --endpoint URL --model NAME` (an OpenAI-compatible /v1/embeddings "
            f"server) or `stillweb build dense {path} --vectors FILE` (precomputed vectors keyed by source id)")


def quantize(vector) -> np.ndarray:
    """One vector as int8: scaled so its largest component is +-127, rounded half to even.

    Elementwise IEEE arithmetic only (no sums), so every machine gets the same bytes.
    A zero vector stays zero. ``DataError`` for a vector with NaN or infinite values.

    >>> quantize([0.5, -1.0, 0.25]).tolist()
    [64, -127, 32]
    """
    return quantize_many(np.asarray(vector, dtype=np.float64)[None, :])[0]


def quantize_many(vectors) -> np.ndarray:
    """Each row of a 2-d array quantised as :func:`quantize` does."""
    values = np.asarray(vectors, dtype=np.float64)
    if values.ndim != 2:
        raise DataError(f"vectors must be a 2-d array (rows x dimensions), got shape {values.shape}")
    if not np.isfinite(values).all():
        row = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
        raise DataError(f"vector {row} has NaN or infinite values")
    peaks = np.abs(values).max(axis=1, keepdims=True) if values.shape[1] else np.zeros((len(values), 1))
    scaled = np.divide(values * 127.0, peaks, out=np.zeros_like(values), where=peaks > 0)
    return np.clip(np.rint(scaled), -127, 127).astype(np.int8)


def vector_norms(vectors: np.ndarray) -> np.ndarray:
    """The Euclidean norm of each int8 row: an exact integer sum of squares, then one IEEE square root."""
    squares = np.einsum("ij,ij->i", vectors, vectors, dtype=np.int64)
    return np.sqrt(squares.astype(np.float64))


@functools.cache
def _blas():
    """The process's BLAS libraries (threadpoolctl), looked up once."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _dots(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``vectors @ queries.T`` for int8 rows and int8 queries (one per row), exact integers held as
    float32 or float64 (see the module doc); a 1-d query gives a 1-d result. Each block of rows is converted to
    float once for all the queries, so a batch pays the conversion once."""
    # One BLAS thread: each product is small (4,096 rows by 1-8 queries) and OpenBLAS's threads cost more than they
    # save (one query over 11,426 vectors of 384 dimensions: 15.3 ms of CPU with them, 0.7 ms without, on the busy
    # 2-core machine; BENCHMARKS.md "Dense"). The sums are exact integers either way.
    with _blas().limit(limits=1, user_api="blas"):
        return _exact_dots(vectors, queries)


def _exact_dots(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    dtype = np.float32 if vectors.shape[1] <= EXACT_FLOAT32_DIMENSIONS else np.float64
    q = queries.astype(dtype).T
    out = np.empty((len(vectors), *q.shape[1:]), dtype=dtype)
    block = np.empty((min(_BLOCK_ROWS, len(vectors)), vectors.shape[1]), dtype=dtype)
    for start in range(0, len(vectors), _BLOCK_ROWS):
        end = min(start + _BLOCK_ROWS, len(vectors))
        rows = block[: end - start]
        np.copyto(rows, vectors[start:end], casting="unsafe")
        np.matmul(rows, q, out=out[start:end])
    return out


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` highest ``scores``, ordered by (-score, index): ties at the cut all compete."""
    if k >= len(scores):
        candidates = np.arange(len(scores))
    else:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        candidates = np.flatnonzero(scores >= kth)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order[:k]].tolist()


def fuse(rankings: dict[str, list[int]], k: int, weights: dict[str, float] | None = None,
         constant: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of doc-id rankings (best first) named as in :data:`FUSION_WEIGHTS`:
    the top ``k`` ``(doc_id, fused score)``, ordered by (-score, doc_id). ``weights`` (default
    :data:`FUSION_WEIGHTS`) is what a dense index's manifest entry records as ``fusion_weights``; ``constant``
    is RRF's k (:data:`RRF_K`).

    >>> fuse({"bm25": [7, 3], "dense": [3, 9]}, 3)
    [(3, 0.03252247488101534), (7, 0.01639344262295082), (9, 0.016129032258064516)]
    >>> fuse({"bm25": [7, 3], "dense": [3, 9]}, 3, {"bm25": 1.0, "dense": 2.0})
    [(3, 0.04891591750396616), (9, 0.03225806451612903), (7, 0.01639344262295082)]
    """
    weights = FUSION_WEIGHTS if weights is None else weights
    fused: dict[int, float] = {}
    for name in FUSION_WEIGHTS:  # a fixed order of additions: the same float on every machine
        for rank, doc_id in enumerate(rankings.get(name, ()), 1):
            fused[doc_id] = fused.get(doc_id, 0.0) + weights[name] / (constant + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]


class DenseIndex:
    """A snapshot's ``dense/`` opened read-only (memory-mapped, so processes share its pages)."""

    def __init__(self, directory: Path, info: dict, num_docs: int) -> None:
        self.info = info
        try:
            self.vectors = np.load(directory / "vectors.npy", mmap_mode="r")
            self.norms = np.load(directory / "norms.npy", mmap_mode="r")
        except (OSError, ValueError) as error:
            raise DataError(f"cannot read the dense index {directory}: {error} (damaged or truncated; "
                            f"rebuild it with `stillweb build dense {directory.parent} ...`)") from None
        if self.vectors.dtype != np.int8 or self.vectors.shape != (num_docs, info["dimensions"]) \
                or self.norms.shape != (num_docs,):
            raise DataError(f"dense index {directory} has vectors {self.vectors.dtype} {self.vectors.shape} and "
                            f"norms {self.norms.shape}; the snapshot has {num_docs} documents of "
                            f"{info['dimensions']} dimensions (rebuild it with `stillweb build dense`)")

    @property
    def dimensions(self) -> int:
        """Dimensions of every vector."""
        return self.vectors.shape[1]

    def search(self, query_vector, k: int) -> list[tuple[int, float]]:
        """Top ``k`` ``(doc_id, cosine)`` for a query embedding (floats), ordered by (-score, doc_id)."""
        return self.search_many([query_vector], k)[0]

    def search_many(self, query_vectors, k: int) -> list[list[tuple[int, float]]]:
        """:meth:`search` for each query embedding, the rows read once per :data:`QUERY_CHUNK` queries
        (exact sums: the same results as one by one)."""
        queries = np.asarray(query_vectors, dtype=np.float64)
        if queries.ndim != 2 or queries.shape[1] != self.dimensions:
            raise DataError(f"query embedding has shape {queries.shape[1:]}; the dense index has "
                            f"{self.dimensions} dimensions (was it made by model {self.info.get('model')!r}?)")
        quantized = quantize_many(queries)
        ranked = []
        for start in range(0, len(quantized), QUERY_CHUNK):
            chunk = quantized[start : start + QUERY_CHUNK]
            dots = _dots(self.vectors, chunk)
            for column, query in enumerate(chunk):
                query_norm = math.sqrt(int(np.dot(query.astype(np.int64), query.astype(np.int64))))
                if query_norm == 0:
                    ranked.append([(doc_id, 0.0) for doc_id in range(min(k, len(self.vectors)))])
                    continue
                keys = np.divide(dots[:, column], self.norms, out=np.zeros(len(self.norms)),
                                 where=np.asarray(self.norms) > 0)
                ranked.append([(doc_id, float(keys[doc_id] / query_norm)) for doc_id in top_k(keys, k)])
        return ranked
