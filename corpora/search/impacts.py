"""Pruned exact BM25: a snapshot's impact postings, searched with block-max MaxScore (issue 48).

tantivy prunes a top-k search with block-max WAND, but tantivy-py's ``Searcher.search`` always
collects through a ``MultiCollector`` (Count + TopDocs), which scores every matching document:
search cost grew with the corpus (7.76 ms a 3-word query at 1M passages, Lucene 3.02 ms). So
a snapshot also carries, beside its tantivy index, its postings with each posting's BM25
score (an "impact": Anh and Moffat, "Impact transformations", SIGIR 2002), computed at build
time with tantivy's own analyzer and tantivy's own BM25 in float32 (k1 = 1.2, b = 0.75, its
256-value field norms, ``ln(1 + (N - n + 0.5) / (n + 0.5))``), and the largest score of each
block of :data:`BLOCK` postings. A query is answered document at a time with MaxScore
(Turtle and Flood, "Query evaluation: strategies and optimizations", 1995) and block maxima
on the lists it does not iterate (Ding and Suel, "Faster top-k document retrieval using
block-max indexes", SIGIR 2011; the "block-max MaxScore" of PISA, Mallia et al., OSIRRC 2019):
a document is skipped only when even the upper bounds of its clauses cannot reach the k-th
best score, so the top k are those of exhaustive scoring (:func:`exhaustive_top`).

Exact: a clause's contribution is ``float32(score * boost)`` (tantivy's ``BoostQuery``) and a
unit's score sums its clauses in query order in float32, and the pruned top k are those of
scoring every posting so (:func:`exhaustive_top`; ``tests/corpora/test_impacts.py``). tantivy's
union scorer sums the same float32 values in an order that changes as its lists run out, so
a score may differ from tantivy's exhaustive one in the last bit (the tests check every score
within 1e-6 and the same documents wherever no two scores are that close). Ties are broken
by the unit's ordinal (a passage's doc_id; a page's passages in doc_id order). Format 5's
proximity clauses (phrases, which need positions) are bounded here and scored by tantivy on
the candidates only (:meth:`ImpactIndex.top`).

Format ``stillweb-impacts/2`` (``impacts_build.py``) stores a posting's term frequency, not its score,
and each unit's field norm code once: :func:`posting_score` computes the same float32 score at query
time that the build computed for the block maxima. Format ``stillweb-impacts/1`` stored the scores
and is read as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np

from stillweb.corpora.errors import DataError
from stillweb.corpora.search.impacts_keys import lookup_hashed, lookup_sorted, term_key

__all__ = ["BLOCK", "IMPACTS_DIR", "ImpactIndex", "exhaustive_top", "bm25_idf", "posting_score"]

BLOCK = 64  # postings per block maximum (PISA and Lucene use 64-128)
IMPACTS_DIR = "impacts"  # under the snapshot's index directory
IMPACTS_FORMAT = "stillweb-impacts/2"
IMPACTS_FORMAT_SCORES = "stillweb-impacts/1"  # scores stored, vocabulary sorted by bytes (read as before)


@numba.njit(cache=True, nogil=True, inline="always")
def posting_score(weight, tf, length_norm):
    """tantivy's BM25 of one posting in float32: ``weight * tf / (tf + length_norm)`` (``query/bm25.rs``), the
    weight ``idf * (1 + k1)``, ``length_norm`` ``k1 * (1 - b + b * length / average length)``."""
    t = np.float32(tf)
    return np.float32(weight) * (t / (t + np.float32(length_norm)))


def bm25_idf(doc_freq: np.ndarray, doc_count: int) -> np.ndarray:
    """tantivy's BM25 weight ``idf * (1 + k1)`` in float32 for each document frequency (``query/bm25.rs``)."""
    n = np.float32(doc_count)
    df = doc_freq.astype(np.float32)
    x = ((n - df) + np.float32(0.5)) / (df + np.float32(0.5))
    idf = np.log((np.float32(1.0) + x).astype(np.float64)).astype(np.float32)  # f32 ln, correctly rounded
    return idf * np.float32(2.2)


class ImpactIndex:
    """A snapshot's impact postings (``index/impacts``), memory-mapped, searched by :meth:`top`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        self.format = self.meta.get("format")
        if self.format not in (IMPACTS_FORMAT, IMPACTS_FORMAT_SCORES):
            raise DataError(f"impact index {directory} has format {self.format!r}, not {IMPACTS_FORMAT!r} or {IMPACTS_FORMAT_SCORES!r}")
        load = lambda name: np.load(directory / f"{name}.npy", mmap_mode="r")  # noqa: E731
        self.docs = load("docs")
        self.list_offsets, self.block_offsets = load("list_offsets"), load("block_offsets")
        self.block_max, self.block_last = load("block_max"), load("block_last")
        self._keys, self._key_offsets = load("keys"), load("key_offsets")
        if self.format == IMPACTS_FORMAT:  # term frequencies, each unit's field norm codes, lists by key hash
            self.scores = np.zeros(0, np.float32)
            self.tf, self.weights, self.list_field = load("tf"), load("weights"), load("list_field")
            self.norms, self.caches = load("norms"), np.load(directory / "norm_cache.npy")
            self._hashes, self._key_lists = load("hashes"), None
        else:
            self.scores, self._key_lists = load("scores"), load("key_lists")
            self.tf, self.weights, self.list_field = np.zeros(0, np.uint8), np.zeros(0, np.float32), np.zeros(0, np.uint8)
            self.norms, self.caches = np.zeros((0, 0), np.uint8), np.zeros((0, 256), np.float32)
        self._postings = (self.docs, self.scores, self.tf, self.weights, self.list_field, self.norms, self.caches)
        self.units = int(self.meta["units"])
        self.last_scored = 0  # units the last :meth:`top` scored in full (tests check that the bounds skip some)
        unit_docs = directory / "unit_doc_ids.npy"
        self.unit_doc_ids = np.load(unit_docs, mmap_mode="r") if unit_docs.exists() else None
        self.unit_starts = np.load(directory / "unit_starts.npy", mmap_mode="r") if unit_docs.exists() else None

    def clauses(self, clauses: list[tuple[str, str, float | None]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """List numbers and boosts (0: none) of the ``(field, term, boost)`` clauses that match anything, in
        order, and each clause's number among those (-1: matches nothing)."""
        keys = [term_key(field, term) for field, term, _boost in clauses]
        wanted = np.frombuffer(b"".join(keys), dtype=np.uint8)
        ends = np.cumsum([len(key) for key in keys], dtype=np.int64)
        if self._key_lists is None:
            found = lookup_hashed(self._hashes, self._keys, self._key_offsets, wanted, ends, np.uint64(self.meta["seed"]))
        else:
            found = lookup_sorted(self._keys, self._key_offsets, self._key_lists, wanted, ends)
        kept = found >= 0
        boosts = np.asarray([boost or 0.0 for _field, _term, boost in clauses], dtype=np.float32)
        return found[kept], boosts[kept], np.where(kept, np.cumsum(kept) - 1, -1)

    def top(self, clauses: list[tuple[str, str, float | None]], k: int, pairs: list[tuple[str, str]] = (),
            pair_scores: Callable[[np.ndarray], np.ndarray] | None = None, pair_field: str = "body",
            pair_boost: float = 0.0) -> list[tuple[int, float]]:
        """Top ``k`` ``(unit, score)`` by score, ties by unit, for the sum of ``clauses`` (each
        ``(field, term, boost)``, boost ``None`` for none), pruned with block-max MaxScore.

        ``pairs`` (format 5 proximity, ``row_ranking.py``) add clauses these postings cannot score: each
        adjacent pair of terms as a phrase in ``pair_field`` weighted ``pair_boost``; a unit can gain at most
        that boost times the pair's BM25 weight, and only if it has both terms. Units are ranked by that bound,
        ``pair_scores(units)`` (tantivy, on those units only) gives the pairs' float32 scores (one row a pair),
        and more are fetched until no unit left out can reach the k-th exact score.
        """
        lists, boosts, positions = self.clauses(clauses)
        pair_a, pair_b, pair_bound = self._pairs(clauses, positions, lists, pairs, pair_field, pair_boost)
        limit = k
        while True:
            if not len(lists):
                self.last_scored = 0
                return []
            units, sums, keys, self.last_scored = _maxscore(
                lists, boosts, self._postings, self.list_offsets, self.block_offsets, self.block_max,
                self.block_last, limit, pair_a, pair_b, pair_bound)
            if not len(pair_a):
                return sorted(((int(u), float(s)) for u, s in zip(units, sums)), key=lambda hit: (-hit[1], hit[0]))
            exact = sums.copy()
            for row in pair_scores(units):  # in clause order, float32: tantivy's sum
                exact += row
            ranked = sorted(((int(u), float(s)) for u, s in zip(units, exact)), key=lambda hit: (-hit[1], hit[0]))
            if len(units) < limit or (len(ranked) >= k and keys.min() * (1 + 1e-5) < ranked[k - 1][1]):
                return ranked[:k]
            limit *= 4

    def _pairs(self, clauses, positions, lists, pairs, field, boost) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Clause numbers (of the kept clauses) of each pair's two terms in ``field``, and the pair's bound."""
        where = {(clause_field, term): position for (clause_field, term, _boost), position in zip(clauses, positions)
                 if position >= 0}
        first, second, bound = [], [], []
        for one, two in pairs:
            if (field, one) in where and (field, two) in where:
                a, b = where[(field, one)], where[(field, two)]
                first.append(a)
                second.append(b)
                lengths = np.asarray([self.list_offsets[lists[c] + 1] - self.list_offsets[lists[c]] for c in (a, b)])
                bound.append(float(boost) * float(bm25_idf(lengths, self.units).astype(np.float64).sum()) * (1 + 1e-4))
        return np.asarray(first, np.int64), np.asarray(second, np.int64), np.asarray(bound, np.float64)

    def top_passages(self, clauses: list[tuple[str, str, float | None]], limit: int) -> list[tuple[float, int, int]]:
        """Format 4 pages: the best ``limit`` passages ``(score, doc_id, start)``, best first (for
        :func:`~stillweb.corpora.search.page_ranking.top_pages`)."""
        return [(score, int(self.unit_doc_ids[unit]), int(self.unit_starts[unit])) for unit, score in self.top(clauses, limit)]


def exhaustive_top(index: ImpactIndex, clauses: list[tuple[str, str, float | None]], k: int,
                   extra: list[tuple[np.ndarray, np.ndarray]] = ()) -> list[tuple[int, float]]:
    """Top ``k`` by scoring every posting of every clause (no pruning): the reference :meth:`ImpactIndex.top`
    must equal. Scores accumulate clause by clause in query order in float32, as the pruned path sums them,
    then each ``(units, float32 scores)`` of ``extra`` (format 5's proximity clauses, scored by tantivy)."""
    lists, boosts, _positions = index.clauses(clauses)
    total = np.zeros(index.units, dtype=np.float32)
    matched = np.zeros(index.units, dtype=bool)
    for number, boost in zip(lists, boosts):
        start, end = index.list_offsets[number], index.list_offsets[number + 1]
        docs, scores = np.asarray(index.docs[start:end]), _list_scores(number, start, end, index._postings)
        total[docs] += scores * boost if boost else scores
        matched[docs] = True
    for docs, scores in extra:
        total[docs] += scores
        matched[docs] = True
    units = np.flatnonzero(matched)
    order = np.lexsort((units, -total[units]))[:k]
    return [(int(units[i]), float(total[units[i]])) for i in order]


@numba.njit(cache=True, nogil=True, inline="always")
def _value(number, p, postings):
    """The score of posting ``p`` of list ``number``: stored (format 1) or computed (:func:`posting_score`)."""
    docs, scores, tf, weights, list_field, norms, caches = postings
    if len(scores):
        return scores[p]
    f = list_field[number]
    return posting_score(weights[number], tf[p], caches[f, norms[f, docs[p]]])


@numba.njit(cache=True, nogil=True)
def _list_scores(number, start, end, postings):
    out = np.empty(end - start, np.float32)
    for p in range(start, end):
        out[p - start] = _value(number, p, postings)
    return out


@numba.njit(cache=True, nogil=True)
def _worse(score_a, unit_a, score_b, unit_b):
    """True when hit a ranks below hit b (lower score, or the same score and a larger unit)."""
    return score_a < score_b or (score_a == score_b and unit_a > unit_b)


@numba.njit(cache=True, nogil=True)
def _sift_down(heap_scores, heap_sums, heap_units, size, at):
    while True:
        left, worst = 2 * at + 1, at
        if left < size and _worse(heap_scores[left], heap_units[left], heap_scores[worst], heap_units[worst]):
            worst = left
        right = left + 1
        if right < size and _worse(heap_scores[right], heap_units[right], heap_scores[worst], heap_units[worst]):
            worst = right
        if worst == at:
            return
        heap_scores[at], heap_scores[worst] = heap_scores[worst], heap_scores[at]
        heap_sums[at], heap_sums[worst] = heap_sums[worst], heap_sums[at]
        heap_units[at], heap_units[worst] = heap_units[worst], heap_units[at]
        at = worst


@numba.njit(cache=True, nogil=True)
def _maxscore(lists, boosts, postings, list_offsets, block_offsets, block_max, block_last, k, pair_a, pair_b, pair_bound):
    """Document-at-a-time block-max MaxScore over ``lists`` (see the module): the best ``k`` units by key,
    a unit's key being its float32 sum of clause contributions plus ``pair_bound[p]`` for each pair ``p``
    of clauses ``pair_a[p]``, ``pair_b[p]`` it matches both of (a bound of a proximity clause; no pairs:
    the key is the score). Returns the units, their float32 sums and their keys, unordered, and the
    number of units scored in full."""
    docs = postings[0]
    m = len(lists)
    attributed = np.zeros(m, np.float64)  # each pair's bound counts with its first clause
    for p in range(len(pair_a)):
        attributed[pair_a[p]] += pair_bound[p]
    end = np.empty(m, np.int64)
    position = np.empty(m, np.int64)
    block = np.empty(m, np.int64)
    bound = np.empty(m, np.float64)  # a clause's largest contribution
    for i in range(m):
        number = lists[i]
        position[i], end[i] = list_offsets[number], list_offsets[number + 1]
        block[i] = block_offsets[number]
        top = 0.0
        for b in range(block_offsets[number], block_offsets[number + 1]):
            top = max(top, block_max[b])
        bound[i] = (top * boosts[i] if boosts[i] != 0 else top) + attributed[i]
    order = np.argsort(bound, kind="mergesort")  # ascending: the first `essential_from` are non-essential
    prefix = np.empty(m, np.float64)  # bound of the clauses order[0..j]
    running = 0.0
    for j in range(m):
        running += bound[order[j]]
        prefix[j] = running
    margin = 1.0 + (m + 2) * 2.0 ** -22  # float32 sums in another order differ by at most m ulps
    heap_scores = np.empty(k, np.float64)
    heap_sums = np.empty(k, np.float32)
    heap_units = np.empty(k, np.int64)
    size = 0
    threshold = -1.0  # the k-th best score once k are held; a later unit must beat it strictly (ties: smaller unit)
    essential_from = 0
    scored = 0  # units scored in full (the rest were skipped by a bound)
    contribution = np.zeros(m, np.float32)
    sentinel = 1 << 62
    while essential_from < m:
        current = sentinel
        for j in range(essential_from, m):
            i = order[j]
            if position[i] < end[i] and docs[position[i]] < current:
                current = docs[position[i]]
        if current == sentinel:
            break
        partial = 0.0
        for j in range(essential_from, m):
            i = order[j]
            if position[i] < end[i] and docs[position[i]] == current:
                value = _value(lists[i], position[i], postings)
                contribution[i] = value * boosts[i] if boosts[i] != 0 else value
                partial += contribution[i] + attributed[i]
                position[i] += 1
        alive = True
        for j in range(essential_from - 1, -1, -1):
            if (partial + prefix[j]) * margin <= threshold:
                alive = False
                break
            i = order[j]
            b = block[i]
            last_block = block_offsets[lists[i] + 1]
            while b < last_block and block_last[b] < current:
                b += 1
            block[i] = b
            if b == last_block:
                continue
            top = (block_max[b] * boosts[i] if boosts[i] != 0 else block_max[b]) + attributed[i]
            if (partial + prefix[j] - bound[i] + top) * margin <= threshold:
                alive = False
                break
            start = max(position[i], list_offsets[lists[i]] + (b - block_offsets[lists[i]]) * BLOCK)
            stop = min(end[i], start + BLOCK)
            while start < stop and docs[start] < current:
                start += 1
            position[i] = start
            if start < end[i] and docs[start] == current:
                value = _value(lists[i], start, postings)
                contribution[i] = value * boosts[i] if boosts[i] != 0 else value
                partial += contribution[i] + attributed[i]
        if alive:
            scored += 1
            total = np.float32(0.0)
            for i in range(m):  # query order, float32: tantivy's sum
                total += contribution[i]
            key = np.float64(total)
            for p in range(len(pair_a)):
                if contribution[pair_a[p]] != 0 and contribution[pair_b[p]] != 0:
                    key += pair_bound[p]
            if size < k:
                heap_scores[size], heap_sums[size], heap_units[size] = key, total, current
                size += 1
                if size == k:
                    for at in range(k // 2 - 1, -1, -1):
                        _sift_down(heap_scores, heap_sums, heap_units, size, at)
                    threshold = heap_scores[0]
            elif key > heap_scores[0]:
                heap_scores[0], heap_sums[0], heap_units[0] = key, total, current
                _sift_down(heap_scores, heap_sums, heap_units, size, 0)
                threshold = heap_scores[0]
            if size == k:
                while essential_from < m and prefix[essential_from] * margin <= threshold:
                    essential_from += 1
        for i in range(m):
            contribution[i] = 0.0
    return heap_units[:size], heap_sums[:size], heap_scores[:size], scored
