"""Episode-length defaults that fit the task set: enough turns for the reference agent, with room.

A task's *reference steps* are the steps the reference agent took to solve it
(``oracle_steps``, recorded when the generator verified it) or, for a task not
verified, the budget :mod:`stillweb.envs.wikiqa.solvability` gives it (three calls per
evidence fact plus four). The default ``max_turns`` of an environment is
``ceil(1.5 * p99)`` of its task set's reference steps (never below
:data:`MIN_TURNS`), and the default tool-call budget is ``max_turns *
max_calls_per_turn``; both are reported in ``info["limits"]``. An explicit
``max_turns`` below a task's reference steps logs one warning naming both
numbers, so a low reward is not read as the policy's failure.

>>> from stillweb.corpora.tasks.store.record import TaskRecord
>>> budget = turn_budget([TaskRecord.from_dict({"question": "q", "answer": "a", "oracle_steps": 30})])
>>> budget.max_turns, budget.p99_reference_steps
(45, 30)
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from stillweb.corpora.tasks.store.record import TaskRecord

__all__ = ["CALLS_PER_EVIDENCE", "MIN_TURNS", "TurnBudget", "reference_steps", "turn_budget", "warn_if_short"]

CALLS_PER_EVIDENCE = 3  # the reference agent searches, opens and finds for each fact
MIN_TURNS = 16  # the floor of the default (tasks without evidence or recorded steps)
HEADROOM = 1.5  # default max_turns = HEADROOM x the p99 of the reference steps

logger = logging.getLogger("stillweb.envs")


def reference_steps(task: TaskRecord) -> int:
    """The reference agent's steps on ``task``: recorded, or the budget its evidence implies."""
    if task.oracle_steps is not None:
        return int(task.oracle_steps)
    return CALLS_PER_EVIDENCE * len(task.evidence) + 4


@dataclass(frozen=True)
class TurnBudget:
    """The default limits of a task set and where they come from (``info["limits"]``)."""

    max_turns: int
    p99_reference_steps: int
    most_reference_steps: int
    longest_task_id: str

    def tool_calls(self, max_calls_per_turn: int) -> int:
        """The default tool-call budget: every turn may use its whole call allowance."""
        return self.max_turns * max_calls_per_turn


def turn_budget(tasks: Sequence[TaskRecord]) -> TurnBudget:
    """The default ``max_turns`` of ``tasks``: ``max(MIN_TURNS, ceil(1.5 * p99 reference steps))``."""
    steps = sorted((reference_steps(task), task.task_id) for task in tasks)
    p99 = steps[min(len(steps) - 1, math.ceil(0.99 * len(steps)) - 1)][0]
    most, longest = steps[-1]
    return TurnBudget(max(MIN_TURNS, math.ceil(HEADROOM * p99)), p99, most, longest)


def warn_if_short(max_turns: int, budget: TurnBudget) -> None:
    """One warning when an explicit ``max_turns`` is below the longest reference episode."""
    if max_turns < budget.most_reference_steps:
        logger.warning(
            "max_turns=%d is below the %d steps the reference agent needs on task %s (p99 of the task set: %d; "
            "the default would be %d): such episodes truncate before they can be solved",
            max_turns, budget.most_reference_steps, budget.longest_task_id, budget.p99_reference_steps, budget.max_turns)
