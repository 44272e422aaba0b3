"""Deterministic train/dev/test splits by hash of the answer, without leakage.

A task's split is a function of its answer key only (the answer entity's doc
title, or the normalized literal answer), so no answer entity is ever shared
between splits, and adding tasks never moves another task. One exception keeps
small sets usable: a set of :data:`MIN_TASKS_FOR_ALL_SPLITS` tasks or more whose
hashes left dev or test empty gets whole answer groups moved there
(:func:`fill_empty_splits`; still no answer shared between splits).

>>> split_of("entity:Paris") == split_of("entity:Paris")
True
"""

from __future__ import annotations

from collections.abc import Sequence

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import stable_hash

__all__ = ["SPLITS", "DEFAULT_RATIOS", "MIN_TASKS_FOR_ALL_SPLITS", "split_of", "fill_empty_splits"]

SPLITS = ("train", "dev", "test")
DEFAULT_RATIOS = (0.8, 0.1, 0.1)
MIN_TASKS_FOR_ALL_SPLITS = 10  # issue 35 asks for 20; small test sets need dev and test too


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


def fill_empty_splits(splits: Sequence[str], keys: Sequence[str | None]) -> list[str]:
    """``splits`` (one per task) with dev and test made non-empty when there are at least
    :data:`MIN_TASKS_FOR_ALL_SPLITS` tasks: an empty split takes the whole answer group (tasks
    sharing a key; ``None`` never moves) of the largest split whose ``stable_hash`` comes first,
    as long as that split keeps another group.

    >>> sorted(set(fill_empty_splits(["train"] * 21, ["a", "b", "c"] * 7)))
    ['dev', 'test', 'train']
    """
    out = list(splits)
    if len(out) < MIN_TASKS_FOR_ALL_SPLITS:
        return out
    for wanted in ("dev", "test"):
        if wanted in out:
            continue
        groups: dict[str, dict[str, list[int]]] = {split: {} for split in SPLITS}
        for position, (split, key) in enumerate(zip(out, keys)):
            if key is not None:
                groups[split].setdefault(key, []).append(position)
        donor = max((s for s in SPLITS if s != wanted), key=lambda s: (len(groups[s]), s == "train"))
        if len(groups[donor]) < 2:
            continue
        key = min(groups[donor], key=lambda k: (stable_hash("fill:" + k), k))
        for position in groups[donor][key]:
            out[position] = wanted
    return out
