"""Degenerate actions: per-step flags that show format collapse early.

Bespoke Labs and Tongyi DeepResearch both report RL runs whose outputs
degenerate into repeated garbage (``{"action": "searchsearchAAPL stockAAAAA"``)
and grow step after step while tool use stops; a trainer sees it late, in the
loss. The environment sees every action, so it flags it deterministically:

- ``repeated_chars``: one letter repeated ``letter_run`` times in a row, or any
  non-space character ``char_run`` times;
- ``repeated_ngrams``: a letter sequence of ``unit_chars`` or more written twice
  back to back (``searchsearch``), or a long action whose word trigrams are
  mostly repeats (fewer than ``min_distinct_trigrams`` of them distinct);
- ``non_text``: more than ``max_non_text_share`` of the characters are control,
  format, private-use, unassigned or replacement characters;
- ``near_miss_call``: the action broke the call format yet looks like a call
  (JSON braces, tool-call tags, a ``"name"``/``"arguments"``/``"action"`` key);
- ``over_long``: more than the limits' ``max_action_chars`` characters
  (:class:`~stillweb.envs.core.limits.EpisodeLimits`). Such an action is
  not parsed: it ends the episode as *truncated* (``action_too_long``), masked
  like other truncations, never a failure reward.

>>> checks = ActionChecks()
>>> checks.flags('{"action": "searchsearchAAPL stockAAAAA"', format_error=True)
('repeated_chars', 'repeated_ngrams', 'near_miss_call')
>>> checks.flags('<tool_call>{"name": "search", "arguments": {"query": "Ostra"}}</tool_call>', format_error=False)
()
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.envs.core.config import config_from

__all__ = ["ActionChecks", "ACTION_FLAGS", "ACTION_TOO_LONG"]

ACTION_FLAGS = ("repeated_chars", "repeated_ngrams", "non_text", "near_miss_call", "over_long")
ACTION_TOO_LONG = "action_too_long"  # the truncation reason of an over-long action
_CALL_MARKERS = ("<tool_call", "</tool_call", "<answer", "<abstain", "<search", '"name"', '"arguments"', '"action"', '"tool"')
_WHITESPACE = "\n\r\t "
_NO_WHITESPACE = str.maketrans("", "", _WHITESPACE)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ActionChecks:
    """Thresholds of the degenerate-action flags (see the module docstring; the action cap is the limits').

    Only the first ``scan_chars`` characters are scanned for repeats, so a check
    costs the same on any action.
    """

    letter_run: int = 5
    char_run: int = 40
    unit_chars: int = 5
    min_trigrams: int = 16
    min_distinct_trigrams: float = 0.5
    max_non_text_share: float = 0.1
    scan_chars: int = 20_000

    def __post_init__(self) -> None:
        for name in ("letter_run", "char_run", "unit_chars", "min_trigrams", "scan_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 2:
                raise UsageError(f"ActionChecks.{name} must be an integer >= 2, got {value!r}")
        for name in ("min_distinct_trigrams", "max_non_text_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise UsageError(f"ActionChecks.{name} must be in [0, 1], got {getattr(self, name)!r}")

    @functools.cached_property
    def _patterns(self) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
        """(letter run, character run, back-to-back letter sequence), compiled once per config.

        Every quantifier is bounded (a run of exactly ``letter_run`` / ``char_run``, a unit of at most 40
        letters), so a search tries a bounded number of characters at each position: linear time.
        An unbounded ``{k,}`` re-scanned each long run from every position in it."""
        return (
            re.compile(rf"([^\W\d_])\1{{{self.letter_run - 1}}}"),
            re.compile(rf"(\S)\1{{{self.char_run - 1}}}"),
            re.compile(rf"([^\W\d_]{{{self.unit_chars},40}})\1"),
        )

    @functools.cached_property
    def _prefilters(self) -> tuple[re.Pattern, re.Pattern]:
        """What the patterns of :attr:`_patterns` need, cheaper to search for: a run of ``min(letter_run, char_run)``
        equal characters (for a letter run or a character run) and ``2 * unit_chars`` characters in a row that
        are not ASCII non-letters (for a back-to-back letter sequence; a plain class, not a Unicode category,
        about 4x faster). Most actions have neither, and skip the costlier searches."""
        return (re.compile(rf"(.)\1{{{min(self.letter_run, self.char_run) - 1}}}"),
                re.compile(rf"[^\x00-\x40\x5b-\x60\x7b-\x7f]{{{2 * self.unit_chars}}}"))

    @classmethod
    def from_value(cls, value: "ActionChecks | Mapping[str, Any] | None") -> "ActionChecks":
        """Checks from themselves, a dict of their fields (unknown keys are an error), or None (defaults)."""
        return config_from(cls, value)

    def flags(self, action: str, format_error: bool, over_long: bool = False) -> tuple[str, ...]:
        """The degenerate-action flags of one action, in :data:`ACTION_FLAGS` order.

        ``format_error``: the action failed to parse in the env's call format; ``over_long``: it was
        longer than the limits' ``max_action_chars`` (:meth:`~stillweb.envs.core.limits.EpisodeLimits.over_long`).
        """
        text = action[: self.scan_chars]
        letters, chars, tandem = self._patterns
        equal_run, letter_run = self._prefilters
        raised = {
            "repeated_chars": bool(equal_run.search(text) and (letters.search(text) or chars.search(text))),
            "repeated_ngrams": bool(letter_run.search(text) and tandem.search(text)) or self._mostly_repeated_trigrams(text),
            "non_text": _non_text_share(text) > self.max_non_text_share,
            "near_miss_call": format_error and _looks_like_a_call(text),
            "over_long": over_long,
        }
        return tuple(name for name in ACTION_FLAGS if raised[name])

    def _mostly_repeated_trigrams(self, text: str) -> bool:
        words = _WORD.findall(text.casefold())
        trigrams = list(zip(words, words[1:], words[2:]))
        if len(trigrams) < self.min_trigrams:
            return False
        return len(set(trigrams)) / len(trigrams) < self.min_distinct_trigrams


def _non_text_share(text: str) -> float:
    """The share of characters that are not printable text (whitespace counts as text; U+FFFD does not)."""
    if not text:
        return 0.0
    if text.isprintable() or text.translate(_NO_WHITESPACE).isprintable():  # the common cases, at C speed
        return text.count("\ufffd") / len(text)
    non_text = sum(1 for ch in text if not ch.isprintable() and ch not in _WHITESPACE) + text.count("\ufffd")
    return non_text / len(text)


def _looks_like_a_call(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith(("{", "[")) or any(marker in text for marker in _CALL_MARKERS)
