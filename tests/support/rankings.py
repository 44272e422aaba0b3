"""Comparing rankings that score alike up to float32 summation order (impact postings against tantivy)."""

from __future__ import annotations


def same_as_tantivy(ours: list[tuple[int, float]], theirs: list[tuple[int, float]]) -> bool:
    """The same scores (within 1e-6: tantivy sums the same float32 values in another order) and the same
    documents wherever neighbouring scores are further apart than that."""
    if len(ours) != len(theirs) or any(abs(a[1] - b[1]) > 1e-6 * max(1.0, b[1]) for a, b in zip(ours, theirs)):
        return False
    scores = [score for _doc, score in theirs]
    return all(a[0] == b[0] for i, (a, b) in enumerate(zip(ours, theirs))
               if all(abs(scores[i] - scores[j]) > 1e-6 * max(1.0, scores[i]) for j in (i - 1, i + 1) if 0 <= j < len(scores)))
