"""Which BFCL tasks ``BFCL-v0`` plays: the default split leaves out, by name and with the reason,
the tasks whose ground truth cannot earn 1 when played through the environment.

:func:`excluded_tasks` checks each task's ground truth as the reference agent
(:class:`~stillweb.envs.bfcl.agents.BfclReferenceAgent`) plays it, one call per step: every call
must be offered at its turn (a miss_func task's held-back functions only from the turn that adds
them), pass the argument guard, fit the default limits, and the whole must pass BFCL's checker.
The tests play the reference agent through the environment on every task of the default split;
the card (``docs/bfcl.md``) lists the excluded tasks of the pinned version.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from stillweb.corpora.errors import UsageError
from stillweb.envs.bfcl.api import guard_arguments, method_names, named_arguments
from stillweb.envs.bfcl.check import ground_truth_calls, score_bfcl_episode
from stillweb.envs.bfcl.data import DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_TURNS, category_tasks, function_docs
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.core.task_loader import TaskSet

__all__ = ["BFCL_SPLITS", "bfcl_tasks", "excluded_tasks"]

BFCL_SPLITS = ("default", "all")


def bfcl_tasks(category: str, split: str = "default", task_ids: Sequence[str] | None = None) -> TaskSet:
    """The tasks of a category and split, in BFCL's order (``task_ids``: only these, each checked)."""
    if split not in BFCL_SPLITS:
        raise UsageError(f"split must be one of {BFCL_SPLITS} for BFCL-v0, got {split!r}")
    tasks = category_tasks(category)
    if task_ids is not None:
        if isinstance(task_ids, str):
            raise UsageError(f"tasks must be a list of task ids, got the string {task_ids!r}")
        wanted = [tasks.by_id(str(task_id)) for task_id in task_ids]
        tasks = TaskSet(wanted, source=f"{tasks.source} ({len(wanted)} chosen)")
    if split == "all":
        return tasks
    excluded = excluded_tasks(category)
    return TaskSet([task for task in tasks if task.task_id not in excluded], source=f"{tasks.source} default split")


@functools.lru_cache(maxsize=None)
def excluded_tasks(category: str) -> dict[str, str]:
    """``{task_id: reason}`` for the tasks of ``category`` whose ground truth cannot earn 1 here."""
    excluded = {}
    for task in category_tasks(category):
        reason = _unplayable(task)
        if reason is not None:
            excluded[task.task_id] = reason
    return excluded


def _unplayable(task: TaskRecord) -> str | None:
    """Why the reference agent cannot earn 1 on ``task`` (``None``: it can)."""
    extra = task.extra
    missed = extra["missed_function"]
    held_back = {name for names in missed.values() for name in names}
    owner = {name: cls for cls in extra["involved_classes"] for name in method_names(cls)}
    offered = {doc["name"] for cls in extra["involved_classes"] for doc in function_docs(cls)} - held_back
    truth = ground_truth_calls(task)
    for turn, calls in enumerate(truth):
        offered |= set(missed.get(turn, ()))
        for name, arguments in calls:
            if name not in offered or name not in owner:
                later = next((f" (held back until turn {at})" for at, names in missed.items() if name in names), "")
                return f"its ground truth calls {name} at turn {turn}, where it is not offered{later}"
            refused = guard_arguments(name, named_arguments(owner[name], name, arguments))
            if refused is not None:
                return f"its ground truth's {name} at turn {turn} is refused: {refused}"
    calls = sum(len(turn) for turn in truth)
    if calls > DEFAULT_MAX_TOOL_CALLS or calls + len(truth) > DEFAULT_MAX_TURNS:
        return f"its ground truth needs {calls} calls and {calls + len(truth)} steps, over the default limits"
    checks = score_bfcl_episode(task, [[[call] for call in turn] for turn in truth], len(truth), 0)
    if checks.outcome != 1.0:
        return f"BFCL's checker fails its own ground truth: {checks.failed_check} (turn {checks.failed_turn})"
    return None
