"""Scripted policies for ``BFCL-v0``: the reference agent (BFCL's ground-truth calls, turn by turn)
and the text-only baseline the soundness tests measure.

>>> agent = BfclTextAgent()
>>> agent.act("What is in my home folder?")
'<answer>I cannot do that.</answer>'
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from stillweb.envs.bfcl.api import method_names, named_arguments
from stillweb.envs.bfcl.check import ground_truth_calls
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.sandboxes.formats import get_format

__all__ = ["BfclReferenceAgent", "BfclTextAgent", "is_bfcl_task", "write_reply"]


def is_bfcl_task(task: TaskRecord | Mapping[str, Any]) -> bool:
    """Whether a task (record or dict) is a BFCL task (it has BFCL's ``ground_truth`` and ``initial_config``)."""
    extra = task.extra if isinstance(task, TaskRecord) else task
    return "ground_truth" in extra and "initial_config" in extra


def write_reply(tool_format: str, text: str) -> str:
    """The action that replies ``text`` to the user and ends the agent's part of the turn."""
    if tool_format == "tongyi":
        return get_format("tongyi").write_answer(text, [])
    return get_format(tool_format).write_call("answer", {"text": text})


class BfclReferenceAgent:
    """Plays the task's ground truth: each turn's calls one per step (positional arguments named by
    the method's signature), then a reply; a turn whose ground truth is empty (a miss_func or
    miss_param turn) gets the reply at once."""

    def __init__(self, task: TaskRecord | Mapping[str, Any], tool_format: str = "tongyi") -> None:
        self.task = TaskRecord.from_dict(task) if not isinstance(task, TaskRecord) else task
        self.tool_format = tool_format
        self._script = self._solve()

    def act(self, observation: str) -> str:
        """The next action (the observation is not needed: the ground truth is fixed)."""
        try:
            return next(self._script)
        except StopIteration:
            return write_reply(self.tool_format, "Done.")

    def _solve(self) -> Generator[str, None, None]:
        owner = {name: cls for cls in self.task.extra["involved_classes"] for name in method_names(cls)}
        write = get_format(self.tool_format).write_call
        for turn in ground_truth_calls(self.task):
            for name, arguments in turn:
                yield write(name, named_arguments(owner[name], name, arguments) if name in owner else dict(arguments))
            yield write_reply(self.tool_format, "Done." if turn else "I need more information to do that.")


class BfclTextAgent:
    """Answers every turn in text and never calls a function: BFCL's checker fails it on any task
    whose ground truth calls a function."""

    def __init__(self, task: Any = None, tool_format: str = "tongyi") -> None:
        self.tool_format = tool_format

    def act(self, observation: str) -> str:
        """A reply, whatever the observation."""
        return write_reply(self.tool_format, "I cannot do that.")
