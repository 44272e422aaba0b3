"""Where two recorded episodes part: the first record (the reset is 0, step k is k) whose
compared fields differ, and which fields.

The compared fields of a record are its ``action``, ``observation``, ``reward``,
``terminated`` and ``truncated``, and of its ``info`` the flags (what
:func:`~stillweb.server.viewer.trajectories.flags_of` shows) and the reward parts;
two values are equal when their :func:`~stillweb.envs.runs.recording.canonical_json` is.
Bookkeeping in ``info`` (context tokens, the snapshot fingerprint, turn counters)
is not compared. When one episode is a prefix of the other, its first missing
record is the difference.

>>> reset = (2, {"type": "reset", "observation": "q", "info": {}})
>>> step = lambda action, reward: (3, {"type": "step", "action": action, "observation": "", "reward": reward, "info": {}})
>>> a = EpisodeRecord(0, reset, (step("x", 0.0), step("y", 1.0)))
>>> first_difference(a, EpisodeRecord(0, reset, (step("x", 0.0), step("z", 0.5))))
Divergence(index=2, fields=('action', 'reward'), only_in=None)
>>> first_difference(a, EpisodeRecord(0, reset, (step("x", 0.0),)))
Divergence(index=2, fields=(), only_in='a')
>>> first_difference(a, a).identical
True
>>> first_difference(a, EpisodeRecord(0, reset, (step("x", 0.0), step("z", 0.5)))).what
'action, reward differ'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from stillweb.corpora.canonical import canonical_json
from stillweb.server.viewer.trajectories import EpisodeRecord, flags_of

__all__ = ["COMPARED_FIELDS", "Divergence", "compared_fields", "first_difference"]

COMPARED_FIELDS = ("action", "observation", "reward", "terminated", "truncated", "flags", "reward_parts")


@dataclass(frozen=True)
class Divergence:
    """The first record where two episodes differ (``index``: 0 the reset, k step k;
    ``None``: identical), the compared fields that differ there, and, when only one
    episode has that record, which one (``"a"`` or ``"b"``)."""

    index: int | None
    fields: tuple[str, ...] = ()
    only_in: Literal["a", "b"] | None = None

    @property
    def identical(self) -> bool:
        """Whether no compared field of any record differs (and the lengths agree)."""
        return self.index is None

    @property
    def where(self) -> str:
        """``the reset``, ``step 3`` or ``nowhere``."""
        return "nowhere" if self.index is None else "the reset" if self.index == 0 else f"step {self.index}"

    @property
    def what(self) -> str:
        """What differs there, for a page: ``action, observation differ``, ``only A has it`` or ``identical``."""
        if self.index is None:
            return "identical"
        if self.only_in is not None:
            return f"only {self.only_in.upper()} has it"
        return ", ".join(self.fields) + (" differ" if len(self.fields) > 1 else " differs")


def compared_fields(record: dict[str, Any]) -> dict[str, str]:
    """The canonical JSON of each compared field of one recorded reset or step (absent: ``null``)."""
    info = record.get("info") if isinstance(record.get("info"), dict) else {}
    values = {field: record.get(field) for field in ("action", "observation", "reward", "terminated", "truncated")}
    values["flags"] = flags_of(info)
    values["reward_parts"] = info.get("reward_parts")
    return {field: _canonical(values[field]) for field in COMPARED_FIELDS}


def _canonical(value: Any) -> str:
    try:
        return canonical_json(value)
    except ValueError:  # NaN or infinity read from a file: compared by their repr
        return repr(value)


def first_difference(a: EpisodeRecord, b: EpisodeRecord) -> Divergence:
    """Where episodes ``a`` and ``b`` first differ (see the module docs for what is compared)."""
    lines_a, lines_b = (a.reset, *a.steps), (b.reset, *b.steps)
    for index, ((_, left), (_, right)) in enumerate(zip(lines_a, lines_b)):
        fields_a, fields_b = compared_fields(left), compared_fields(right)
        differing = tuple(field for field in COMPARED_FIELDS if fields_a[field] != fields_b[field])
        if differing:
            return Divergence(index, differing)
    if len(lines_a) != len(lines_b):
        return Divergence(min(len(lines_a), len(lines_b)), (), "a" if len(lines_a) > len(lines_b) else "b")
    return Divergence(None)
