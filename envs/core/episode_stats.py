"""One episode's health figures: ``info["episode_stats"]`` at the end of a WikiQA episode.

Turns, action characters (total and longest), tool calls that ran, calls refused
(the budget was spent), repeated identical calls (same tool and arguments as an
earlier call of the episode, run or refused), format errors (the episode's
``counts.format_error``: counted once, by the step), degenerate steps (any flag of :mod:`stillweb.envs.core.degenerate`) and
the count of each flag. :class:`~stillweb.envs.runs.health.RunHealth` rolls them up
across episodes.

>>> stats = EpisodeStats()
>>> call = ToolCall("search", {"query": "Ostra"})
>>> stats.add_step(40, [call], refused=0, flags=())
>>> stats.add_step(40, [call], refused=1, flags=("repeated_ngrams",))
>>> figures = stats.as_dict(format_errors=0)
>>> figures["tool_calls"], figures["refused_calls"], figures["repeated_calls"], figures["degenerate_steps"]
(1, 1, 1, 1)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from stillweb.envs.core.degenerate import ACTION_FLAGS
from stillweb.sandboxes import ToolCall

__all__ = ["EpisodeStats", "STAT_FIELDS", "MAX_COUNT", "countable", "is_count"]

STAT_FIELDS = ("turns", "action_chars", "longest_action", "tool_calls", "refused_calls", "repeated_calls", "format_errors",
               "degenerate_steps")
MAX_COUNT = 2 ** 53  # a larger count is no run's (and its per-turn rates would overflow a float)


def is_count(value: Any) -> bool:
    """Whether a recorded value (file input) is a whole count from 0 to :data:`MAX_COUNT` (a bool is not one).

    >>> is_count(3), is_count(True), is_count(-1), is_count(10 ** 400), is_count(2.0)
    (True, False, False, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def countable(stats: Mapping[str, Any] | None) -> bool:
    """Whether recorded ``episode_stats`` (file input) are ones RunHealth can add: whole counts from 0 to
    :data:`MAX_COUNT` (missing ones are 0) and a dict of flag counts. Other stats (text, negative or huge
    numbers) make the episode one without stats, never an error.

    >>> countable({"turns": 2, "flags": {"repeated_ngrams": 1}}), countable({"turns": "2"}), countable({"turns": 10 ** 400})
    (True, False, False)
    """
    if not isinstance(stats, Mapping):
        return False
    flags = stats.get("flags", {})
    counts = [stats.get(name, 0) for name in STAT_FIELDS] + (list(flags.values()) if isinstance(flags, dict) else [None])
    return all(is_count(count) for count in counts)


@dataclass
class EpisodeStats:
    """Running figures of the episode in progress (see the module docstring)."""

    turns: int = 0
    action_chars: int = 0
    longest_action: int = 0
    tool_calls: int = 0
    refused_calls: int = 0
    repeated_calls: int = 0
    degenerate_steps: int = 0
    flags: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ACTION_FLAGS, 0))
    _calls_seen: set[str] = field(default_factory=set, repr=False)

    def add_step(self, action_chars: int, calls: list[ToolCall], refused: int, flags: tuple[str, ...]) -> None:
        """Count one step: its action length, the calls it asked for (the last ``refused`` of them were
        not run: the budget was spent), its flags."""
        self.turns += 1
        self.action_chars += action_chars
        self.longest_action = max(self.longest_action, action_chars)
        self.tool_calls += len(calls) - refused
        self.refused_calls += refused
        self.degenerate_steps += int(bool(flags))
        for name in flags:
            self.flags[name] += 1
        for call in calls:
            key = json.dumps([call.name, call.arguments], sort_keys=True, ensure_ascii=True, default=str)
            self.repeated_calls += int(key in self._calls_seen)
            self._calls_seen.add(key)

    def as_dict(self, format_errors: int) -> dict[str, Any]:
        """The figures as plain JSON (flag counts in :data:`ACTION_FLAGS` order), with the episode's
        ``format_errors`` (its counts' ``format_error``)."""
        figures: dict[str, Any] = {name: format_errors if name == "format_errors" else getattr(self, name)
                                   for name in STAT_FIELDS}
        figures["flags"] = {name: self.flags[name] for name in ACTION_FLAGS}
        return figures
