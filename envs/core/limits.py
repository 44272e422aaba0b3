"""The one limits object of an episode: what ends it and how long its texts may be.

:class:`EpisodeLimits` holds every cap a text environment enforces: turns, tool calls (in
all, and per turn), context tokens and format errors end the episode; the action,
observation and answer caps bound its texts. The action space, the call formats, the
degenerate-action checks and the observation clip all read them from here, so an action
the environment accepts is always in its action space (Gymnasium's rule).

The text caps' defaults live in the lowest layer that enforces them: the action and answer
caps in :mod:`stillweb.sandboxes.formats` and :mod:`stillweb.sandboxes.tools.answer`.

>>> limits = EpisodeLimits(max_action_chars=1_000)
>>> limits.action_space().contains("x" * 1_000), limits.over_long("x" * 1_001)
(True, True)
>>> EpisodeLimits(max_turns=0)  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
UsageError: max_turns must be a positive integer, got 0

One episode may get its own budget (``reset(options={"limits": {...}})``, :meth:`EpisodeLimits.for_episode`):
its turns, tool calls and format errors (:data:`RESET_LIMITS`); the text caps and ``max_calls_per_turn``
define the spaces and the prompt, so they stay the environment's.

>>> EpisodeLimits(max_turns=16).for_episode({"max_turns": 4, "max_tool_calls": 4}).max_turns
4
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.errors import UsageError
from stillweb.envs.core.spaces import OBSERVATION_MAX_CHARS, UnicodeText, unicode_text_space
from stillweb.sandboxes.formats import MAX_ACTION_CHARS
from stillweb.sandboxes.tools.answer import MAX_ANSWER_CHARS

__all__ = ["EpisodeLimits", "RESET_LIMITS", "pop_action_cap"]

_POSITIVE = ("max_turns", "max_tool_calls", "max_calls_per_turn", "max_context_tokens",
             "max_action_chars", "max_observation_chars", "max_answer_chars")
# The budget fields one episode may override at reset (options["limits"]); the others shape the spaces and the prompt.
RESET_LIMITS = ("max_turns", "max_tool_calls", "max_format_errors")


@dataclass(frozen=True)
class EpisodeLimits:
    """Limits of one episode (every field a positive integer).

    ``max_turns``, ``max_tool_calls`` and ``max_context_tokens`` truncate the episode;
    ``max_format_errors`` format errors (``None``: unlimited) terminate it with outcome 0;
    ``max_calls_per_turn`` more calls in one action is a format error. An action over
    ``max_action_chars`` is not parsed (the episode ends, truncated), an observation over
    ``max_observation_chars`` is clipped, an answer over ``max_answer_chars`` is a format error.
    """

    max_turns: int = 16
    max_tool_calls: int = 64
    max_calls_per_turn: int = 4
    max_context_tokens: int = 32768
    max_format_errors: int | None = 3
    max_action_chars: int = MAX_ACTION_CHARS
    max_observation_chars: int = OBSERVATION_MAX_CHARS
    max_answer_chars: int = MAX_ANSWER_CHARS

    def __post_init__(self) -> None:
        for name in _POSITIVE:
            check_positive_int(name, getattr(self, name))
        if self.max_format_errors is not None:
            check_positive_int("max_format_errors (or None)", self.max_format_errors)

    def over_long(self, action: str) -> bool:
        """Whether ``action`` is longer than the action cap (it is then not parsed)."""
        return len(action) > self.max_action_chars

    def action_space(self) -> UnicodeText:
        """The text space of every action the environment parses: up to ``max_action_chars`` characters."""
        return unicode_text_space(self.max_action_chars)

    def observation_space(self) -> UnicodeText:
        """The text space of every observation: up to ``max_observation_chars`` characters."""
        return unicode_text_space(self.max_observation_chars)

    def for_episode(self, overrides: Any) -> EpisodeLimits:
        """These limits with one episode's budget (``reset(options={"limits": overrides})``): ``self`` itself
        when ``overrides`` is ``None`` or empty, else a copy with the :data:`RESET_LIMITS` it names (each a
        positive integer; ``max_format_errors`` may be ``None``). ``UsageError`` names a bad key or value.

        >>> EpisodeLimits().for_episode({"max_action_chars": 10})  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        UsageError: reset options["limits"] cannot set 'max_action_chars': ...
        """
        if overrides is None:
            return self
        if not isinstance(overrides, Mapping):
            raise UsageError(f'reset options["limits"] must be a dict of {", ".join(RESET_LIMITS)}, '
                             f"got {type(overrides).__name__} {overrides!r}")
        if not overrides:
            return self
        for key, value in overrides.items():
            if key not in RESET_LIMITS:
                raise UsageError(f'reset options["limits"] cannot set {key!r}: an episode may override only '
                                 f"{', '.join(RESET_LIMITS)} (the action, observation and answer caps and "
                                 "max_calls_per_turn define the spaces and the prompt: pass them when making the environment)")
            if not (key == "max_format_errors" and value is None):
                check_positive_int(f'reset options["limits"]["{key}"]', value)
        return replace(self, **dict(overrides))

    def format_options(self) -> dict[str, int]:
        """The caps a call format enforces (:func:`~stillweb.sandboxes.formats.get_format` options)."""
        return {"max_calls_per_turn": self.max_calls_per_turn, "max_action_chars": self.max_action_chars,
                "max_answer_chars": self.max_answer_chars}


def pop_action_cap(actions: Any, max_action_chars: int | None) -> tuple[Any, dict[str, int]]:
    """``(actions without "max_action_chars", {"max_action_chars": cap} or {})``: an environment's
    ``max_action_chars`` argument, or the cap an ``actions`` dict still names (where it lived before
    the limits object; recordings keep such kwargs), for :class:`EpisodeLimits`.

    >>> pop_action_cap({"letter_run": 6, "max_action_chars": 900}, None)
    ({'letter_run': 6}, {'max_action_chars': 900})
    """
    if isinstance(actions, Mapping) and "max_action_chars" in actions:
        actions = dict(actions)
        cap = actions.pop("max_action_chars")
        max_action_chars = cap if max_action_chars is None else max_action_chars
    return actions, ({} if max_action_chars is None else {"max_action_chars": max_action_chars})
