"""How hybrid search fuses BM25's and the dense ranking: a recorded, versioned choice per dense index.

A dense index's manifest entry says how its hybrid search fuses (``dense.fusion``), so a snapshot
searches the same way for as long as it exists, whatever the code's default becomes:

- ``{"method": "rrf", "k": 60, "depth": 100, "weights": {...}}``: reciprocal-rank fusion
  (Cormack, Clarke and Buettcher, SIGIR 2009; :func:`stillweb.corpora.search.dense.fuse`). A
  manifest without ``fusion`` (every index built before it existed) means this, with its
  ``fusion_weights`` (the shipped model's indexes recorded 1:2) or 1:1.
- ``{"method": "zscore", "depth": D, "weights": {...}}``: a convex combination of z-scores
  (:func:`fuse_zscores`): each ranking's top ``D`` scores are standardised over that list
  (``(score - mean) / standard deviation``, the "z-score" normalisation of Montague and Aslam,
  CIKM 2001, that Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval",
  TOIS 2023, compare with RRF), and a document scores ``sum(weight * z)``. A document missing
  from one ranking takes that ranking's lowest z-score (its score is at most the list's last).

:data:`SHIPPED_FUSION` is what ``stillweb build dense --model default`` records. It was chosen on
``scripts/bench_collections.py``'s dev sets only (Cranfield, CISI, the HotpotQA-2Wiki tune half):
among RRF (k 10-100, weights 1:1 to 1:3, depth 100 or 1000) and convex combinations of
min-max, theoretical-min-max and z-score normalised scores (weights 0.3-0.8, depths 100-1000),
it had the best mean nDCG@10 ratio to BM25 of those at least as good as RRF 1:2 on every dev
set (BENCHMARKS.md "Hybrid fusions").

Every sum here is ``math.fsum`` (correctly rounded, so independent of order and machine) or a
fixed-order sum of two terms, and rankings are ordered by (-score, doc_id): the same bytes on
every machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from stillweb.corpora.errors import DataError
from stillweb.corpora.search.dense import FUSION_DEPTH, FUSION_WEIGHTS, RRF_K, fuse

__all__ = ["FUSION_METHODS", "SHIPPED_FUSION", "Fusion", "fusion_of", "fuse_zscores", "fuse_normalized", "zscores"]

FUSION_METHODS = ("rrf", "zscore")
SHIPPED_FUSION = {"method": "zscore", "depth": 500, "weights": {"bm25": 0.5, "dense": 0.5}}


@dataclass(frozen=True)
class Fusion:
    """One fusion of BM25's and the dense ranking, as a manifest records it (:func:`fusion_of`)."""

    method: str
    depth: int
    weights: dict[str, float] = field(default_factory=lambda: dict(FUSION_WEIGHTS))
    k: int = RRF_K  # RRF's constant (rrf only)

    def fuse(self, bm25: list[tuple[int, float]], dense: list[tuple[int, float]], k: int) -> list[tuple[int, float]]:
        """The top ``k`` ``(doc_id, fused score)`` of two rankings (best first, at least :attr:`depth` long
        where the collection allows; only their first :attr:`depth` are read), ordered by (-score, doc_id)."""
        lists = {"bm25": bm25[: self.depth], "dense": dense[: self.depth]}
        if self.method == "rrf":
            return fuse({name: [doc_id for doc_id, _ in hits] for name, hits in lists.items()}, k, self.weights, self.k)
        return fuse_zscores(lists, k, self.weights)


def fusion_of(info: dict | None) -> Fusion:
    """The fusion a dense index's manifest entry records (``fusion``), or the RRF of entries made before
    it existed (their ``fusion_weights``, else 1:1, top :data:`~stillweb.corpora.search.dense.FUSION_DEPTH`).
    ``DataError`` naming the value for a fusion this version does not know.

    >>> fusion_of({"fusion_weights": {"bm25": 1.0, "dense": 2.0}})
    Fusion(method='rrf', depth=100, weights={'bm25': 1.0, 'dense': 2.0}, k=60)
    >>> fusion_of({"fusion": SHIPPED_FUSION}).method
    'zscore'
    """
    info = info or {}
    recorded = info.get("fusion")
    if recorded is None:
        return Fusion("rrf", FUSION_DEPTH, dict(info.get("fusion_weights") or FUSION_WEIGHTS))
    method, depth, weights = (recorded.get(key) if isinstance(recorded, dict) else None
                              for key in ("method", "depth", "weights"))
    if method not in FUSION_METHODS or isinstance(depth, bool) or not isinstance(depth, int) or depth < 1 \
            or not isinstance(weights, dict) or sorted(weights) != sorted(FUSION_WEIGHTS):
        raise DataError(f"the dense index's fusion {recorded!r} is not one this stillweb knows (methods "
                        f"{', '.join(FUSION_METHODS)}, a positive depth, weights for {' and '.join(FUSION_WEIGHTS)}); "
                        f"was it made by a newer version?")
    return Fusion(method, depth, {name: float(weights[name]) for name in FUSION_WEIGHTS}, int(recorded.get("k", RRF_K)))


def zscores(values: list[float]) -> tuple[list[float], float]:
    """``(z-scores, the lowest)`` of a list's scores over that list (population standard deviation); all
    zeros when the scores are equal, ``([], 0.0)`` for none.

    >>> zscores([3.0, 1.0, 2.0])
    ([1.224744871391589, -1.224744871391589, 0.0], -1.224744871391589)
    """
    if not values:
        return [], 0.0
    mean = math.fsum(values) / len(values)
    deviation = math.sqrt(math.fsum((value - mean) ** 2 for value in values) / len(values))
    if deviation == 0.0:
        return [0.0] * len(values), 0.0
    normalized = [(value - mean) / deviation for value in values]
    return normalized, min(normalized)


def fuse_zscores(rankings: dict[str, list[tuple[int, float]]], k: int,
                 weights: dict[str, float]) -> list[tuple[int, float]]:
    """Convex combination of z-scores: :func:`fuse_normalized` with :func:`zscores` for every ranking.

    >>> fuse_zscores({"bm25": [(7, 9.0), (3, 5.0)], "dense": [(3, 0.75), (9, 0.25)]}, 3, {"bm25": 0.5, "dense": 0.5})
    [(3, 0.0), (7, 0.0), (9, -1.0)]
    """
    return fuse_normalized(rankings, k, weights, {name: zscores for name in FUSION_WEIGHTS})


def fuse_normalized(rankings: dict[str, list[tuple[int, float]]], k: int, weights: dict[str, float],
                    normalizers: dict[str, Callable[[list[float]], tuple[list[float], float]]]) -> list[tuple[int, float]]:
    """Convex combination of normalised scores (Bruch, Gai and Ingber's CC): each ranking's ``(doc_id, score)``
    list normalised over itself by its normaliser (``scores -> (normalised, floor)``, as :func:`zscores`), a
    document missing from a list given that list's floor, fused as ``sum(weight * normalised)`` in
    :data:`~stillweb.corpora.search.dense.FUSION_WEIGHTS` order; the top ``k`` ``(doc_id, fused score)``
    ordered by (-score, doc_id)."""
    tables = []
    for name in FUSION_WEIGHTS:
        hits = rankings.get(name, [])
        normalized, floor = normalizers[name]([float(score) for _, score in hits])
        tables.append((weights[name], dict(zip((doc_id for doc_id, _ in hits), normalized)), floor))
    fused = {}
    for doc_id in sorted({doc_id for _, table, _ in tables for doc_id in table}):
        total = 0.0
        for weight, table, floor in tables:  # a fixed order of additions
            total += weight * table.get(doc_id, floor)
        fused[doc_id] = total
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]
