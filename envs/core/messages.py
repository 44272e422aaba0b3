"""A step's new messages, and the conversation rebuilt from them.

An environment's ``info["messages"]`` carries only what the step changed in its message history:
the messages added, after the first ``info["messages_kept"]`` messages of the history the previous
info described (usually all of them; fewer when context management condensed older turns). So a
step costs O(1) bytes through vector-env pipes, HTTP and recordings, not O(turns).
:func:`message_delta` computes it; :class:`Conversation` rebuilds the whole history from the infos
(an info without ``messages_kept`` holds a whole history, as before this change).

>>> conversation = Conversation()
>>> conversation.update({"messages": ["system", "question"], "messages_kept": 0})
['system', 'question']
>>> conversation.update({"messages": ["action", "result"], "messages_kept": 2})
['system', 'question', 'action', 'result']
>>> message_delta(["system", "question", "action", "result"], ["system", "question (condensed)", "next"])
(['question (condensed)', 'next'], 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stillweb.corpora.errors import DataError

__all__ = ["Conversation", "message_delta", "messages_info"]


def message_delta(previous: Sequence[Any], current: Sequence[Any]) -> tuple[list[Any], int]:
    """(the messages of ``current`` after its longest common prefix with ``previous``, that prefix's length)."""
    kept = min(len(previous), len(current))
    for index in range(kept):
        if previous[index] is not current[index] and previous[index] != current[index]:
            kept = index
            break
    return list(current[kept:]), kept


def messages_info(episode: Any) -> dict[str, Any]:
    """``{"messages": the new messages, "messages_kept": n}`` of an episode (anything with ``messages``, its
    history, and ``shown``, the history its last info described, which this updates)."""
    new, kept = message_delta(episode.shown, episode.messages)
    episode.shown = list(episode.messages)
    return {"messages": new, "messages_kept": kept}


class Conversation:
    """The whole message history of an episode, rebuilt from its infos' deltas (see the module docstring)."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def update(self, info: Mapping[str, Any]) -> list[Any]:
        """Apply one reset's or step's info; the history so far. ``DataError`` for a delta that does not fit."""
        new = info.get("messages")
        if not isinstance(new, list):
            return self.messages
        kept = info.get("messages_kept")
        if kept is None:
            self.messages = list(new)
        elif isinstance(kept, int) and 0 <= kept <= len(self.messages):
            del self.messages[kept:]
            self.messages.extend(new)
        else:
            raise DataError(f"info['messages_kept'] is {kept!r}, but the history has {len(self.messages)} messages")
        return self.messages
