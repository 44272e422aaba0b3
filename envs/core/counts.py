"""The typed counts of one episode: what went wrong, each concept counted once.

:class:`EpisodeCounts` counts what every tool environment sees: unknown tools, bad
arguments and format errors. Each environment extends it with its own signals:
``WikiQA-v0`` the answer's (:class:`WikiQACounts`: citations that name no document
shown, an answer no observation showed), ``Apps-v0`` the app world's (:class:`AppCounts`:
an id that does not exist, a write the user did not ask for). A result's flag is counted by
:meth:`EpisodeCounts.count_result`; ``info["hallucination_counts"]`` is :meth:`as_dict`.

>>> counts = AppCounts()
>>> counts.count_result("not_found"); counts.count_result("unknown_tool"); counts.count_result(None)
>>> counts.as_dict()
{'unknown_tool': 1, 'bad_arguments': 0, 'format_error': 0, 'fabricated_id': 1, 'write_after_answer': 0}
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Any, ClassVar

__all__ = ["EpisodeCounts", "WikiQACounts", "AppCounts"]


@dataclass
class EpisodeCounts:
    """Unknown tools called, calls with bad arguments and format errors of one episode."""

    unknown_tool: int = 0
    bad_arguments: int = 0
    format_error: int = 0

    # the result flag -> the count it raises
    RESULT_FLAGS: ClassVar[dict[str, str]] = {"unknown_tool": "unknown_tool", "bad_arguments": "bad_arguments"}

    def count_result(self, flag: str | None) -> None:
        """Count a tool result's flag (``None``: the call went fine; flags not counted here are ignored)."""
        name = self.RESULT_FLAGS.get(flag) if flag is not None else None
        if name is not None:
            setattr(self, name, getattr(self, name) + 1)

    def as_dict(self) -> dict[str, Any]:
        """The counts as plain JSON, in field order (every step's ``info`` has them: no deep copy needed, they are ints)."""
        return {name: getattr(self, name) for name in _field_names(type(self))}


@dataclass
class WikiQACounts(EpisodeCounts):
    """``WikiQA-v0``'s counts: plus cited ids that name no document shown (``bad_citation``) and an
    answer that no observation showed (``unsupported_answer``); both are counted when the episode is scored."""

    bad_citation: int = 0
    unsupported_answer: int = 0


@dataclass
class AppCounts(EpisodeCounts):
    """``Apps-v0``'s counts: plus ids that do not exist (``fabricated_id``: a ``not_found`` result) and
    writes in a follow-up turn that asked for no change (``write_after_answer``)."""

    fabricated_id: int = 0
    write_after_answer: int = 0

    RESULT_FLAGS: ClassVar[dict[str, str]] = {**EpisodeCounts.RESULT_FLAGS, "not_found": "fabricated_id"}


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    """The dataclass fields of ``cls`` in order (``dataclasses.asdict`` deep-copies: 8x slower on every step)."""
    return tuple(item.name for item in fields(cls))
