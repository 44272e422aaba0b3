"""Recordings made before a deliberate change of ``info`` still replay: the replayed info is shown as
the recorded version's code wrote it.

A recording's header names its ``info_version`` (:data:`INFO_VERSION`; none: version 1). Version 2
(the counters that tell the truth, issue 33) changed three fields and added others:

- a call refused because the episode's call budget was spent is flagged ``budget_exhausted`` in
  ``tool_flags`` (version 1: ``bad_arguments``);
- ``episode_stats["tool_calls"]`` counts the calls that ran; the refused ones are
  ``episode_stats["refused_calls"]`` (version 1 counted both as ``tool_calls``);
- the last step's ``hallucination_counts`` are the scored ones, equal to ``reward_parts["counts"]``
  (version 1 showed them before scoring, so ``bad_citation`` and ``unsupported_answer`` were 0);
- added: ``refused_calls`` in every info and in ``episode_stats``.

Version 3 added ``info["retrieval"]`` (the episode's retrieval ablation and search noise,
:mod:`~stillweb.sandboxes.tools.retrieval`); a version-2 recording is compared without it.

Version 4 (Search-R1 parity, issue 41) changed the ``search_r1`` tool format's defaults: Search-R1's
rollout parser and its whole-passage observation. A recording made before names neither, so
:func:`replay_kwargs` re-creates its env with the format options its code had (``parser="strict"``,
``results="snippets"``), and it replays as it was.

Version 5 (one outcome scorer, issue 44) added to ``Apps-v0``'s and ``BFCL-v0``'s ``reward_parts`` the
scorer's parts (``f1``, ``gamma_decay``, ``abstained``, ``fabricated_answer``, ``penalty``, ``total``,
``gamma_credits``, ``counts``) after their checks; no recorded value changed, so an older recording
is compared without them.

:func:`as_recorded` maps a replayed info back, field by field, and keeps only the keys the recorded
info has (at every depth), so every value a version-1 recording holds is still checked.

>>> replayed = {"tool_flags": ["budget_exhausted"], "refused_calls": 1,
...             "hallucination_counts": {"bad_citation": 2, "unsupported_answer": 1, "format_error": 0}}
>>> recorded = {"tool_flags": ["bad_arguments"], "hallucination_counts": {"bad_citation": 0, "unsupported_answer": 0,
...             "format_error": 0}}
>>> as_recorded(replayed, recorded, version=1) == recorded
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["INFO_VERSION", "as_recorded", "info_version", "replay_kwargs"]

INFO_VERSION = 5
# The search_r1 format's options before version 4 (stillweb's own parser and snippet view)
SEARCH_R1_BEFORE_V4 = {"parser": "strict", "results": "snippets"}


def info_version(header: Mapping[str, Any]) -> int:
    """The info version a recording's header names (1 when it names none)."""
    version = header.get("info_version", 1)
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def replay_kwargs(header: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor kwargs that re-create a recording's env as its version's code made it.

    >>> replay_kwargs({"kwargs": {"tool_format": "search_r1"}, "info_version": 3})["format_options"]
    {'parser': 'strict', 'results': 'snippets'}
    >>> replay_kwargs({"kwargs": {"tool_format": "search_r1"}, "info_version": 4})
    {'tool_format': 'search_r1'}
    """
    kwargs = dict(header.get("kwargs") or {})
    if info_version(header) < 4 and kwargs.get("tool_format") == "search_r1":
        kwargs["format_options"] = {**SEARCH_R1_BEFORE_V4, **dict(kwargs.get("format_options") or {})}
    return kwargs


def as_recorded(info: Mapping[str, Any], recorded: Any, version: int) -> Any:
    """``info`` (replayed now) as a recording of ``version`` holds it, for comparison with ``recorded``."""
    if version >= 5:
        return dict(info)
    if version >= 2:  # versions 3 and 4 changed no info field; 3 and 5 added some
        return _only_recorded_keys(dict(info), recorded)
    info = dict(info)
    if isinstance(info.get("tool_flags"), list):
        info["tool_flags"] = ["bad_arguments" if flag == "budget_exhausted" else flag for flag in info["tool_flags"]]
    stats = info.get("episode_stats")
    if isinstance(stats, Mapping) and "refused_calls" in stats:
        info["episode_stats"] = {**stats, "tool_calls": stats["tool_calls"] + stats["refused_calls"]}
    counts = info.get("hallucination_counts")
    if isinstance(counts, Mapping):
        info["hallucination_counts"] = {**counts, **{name: 0 for name in ("bad_citation", "unsupported_answer")
                                                     if name in counts}}
    return _only_recorded_keys(info, recorded)


def _only_recorded_keys(value: Any, recorded: Any) -> Any:
    """``value`` with, in every dict, only the keys ``recorded`` has there (added fields are not compared)."""
    if isinstance(value, Mapping) and isinstance(recorded, Mapping):
        return {key: _only_recorded_keys(item, recorded[key]) for key, item in value.items() if key in recorded}
    return value
