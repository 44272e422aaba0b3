"""Deterministic train/dev/test splits by hash of the answer, without leakage.

A task's split is a function of its answer key only (the answer entity's doc
title, or the normalized literal answer), so no answer entity is ever shared
between splits, and adding tasks never moves another task.

>>> split_of("entity:Paris") == split_of("entity:Paris")
True
"""

from __future__ import annotations

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import stable_hash

__all__ = ["SPLITS", "DEFAULT_RATIOS", "split_of"]

SPLITS = ("train", "dev", "test")
DEFAULT_RATIOS = (0.8, 0.1, 0.1)


def split_of(answer_key: str, ratios: tuple[float, float, float] = DEFAULT_RATIOS) -> str:
    """The split of every task whose answer key is ``answer_key``."""
    if len(ratios) != 3 or any(r < 0 for r in ratios) or sum(ratios) <= 0:
        raise UsageError(f"split ratios must be three non-negative numbers, got {ratios!r}")
    position = int(stable_hash("split:" + answer_key), 16) / float(1 << 64) * sum(ratios)
    if position < ratios[0]:
        return "train"
    if position < ratios[0] + ratios[1]:
        return "dev"
    return "test"
