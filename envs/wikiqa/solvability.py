"""The solvability proof: the reference agent, using only the tools, answers each task.

The task generator (``stillweb.corpora.tasks``) proves uniqueness over the
facts; this module proves the other half in the environment itself: a
:class:`~stillweb.envs.agents.scripted.ReferenceAgent` follows the task's evidence with
search/open/find in ``stillweb/WikiQA-v0`` and must end with a correct answer.
:class:`ReferenceVerifier` is the ``verifier`` the generator accepts: it returns
the agent's step count (recorded as ``oracle_steps``) or None (the task is
discarded as ``unsolvable``).

>>> # summary = generate_verified_tasks("snap/", "default", GenerationParams(count=200, verify_limit=VERIFY_SAMPLE))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stillweb.corpora.tasks.compose.generate import GenerationSummary, generate_tasks
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.agents.loop import PlayedEpisode, play_episode
from stillweb.envs.agents.scripted import ReferenceAgent
from stillweb.envs.core.turn_budget import CALLS_PER_EVIDENCE
from stillweb.envs.wikiqa.env import WikiQAEnv

__all__ = ["REFERENCE_TOOLS", "SolveResult", "ReferenceSolver", "ReferenceVerifier", "play_reference", "reference_budget",
           "reference_limits", "solve_with_reference", "generate_verified_tasks"]

REFERENCE_TOOLS = ("search", "open", "find")  # all the reference agent calls (cheaper envs than every tool)


@dataclass(frozen=True)
class SolveResult:
    """One reference-agent episode on a task."""

    task_id: str
    solved: bool
    steps: int
    outcome: float
    ending: str | None


def reference_budget(task: TaskRecord | Mapping[str, Any]) -> int:
    """The turns (and tool calls) the reference agent gets on ``task``: sized to its evidence."""
    return CALLS_PER_EVIDENCE * len(TaskRecord.from_dict(task).evidence) + 4


def reference_limits(task: TaskRecord | Mapping[str, Any]) -> dict[str, int]:
    """The environment kwargs of the solvability proof's budget on ``task`` (``max_turns``, ``max_tool_calls``)."""
    budget = reference_budget(task)
    return {"max_turns": budget, "max_tool_calls": budget}


def play_reference(env: Any, task: TaskRecord | Mapping[str, Any], tool_format: str = "tongyi",
                   options: dict[str, Any] | None = None) -> PlayedEpisode:
    """The reference agent's episode of ``task`` in ``env`` (reset with ``options``, default the task's id)."""
    return play_episode(env, ReferenceAgent(task, tool_format=tool_format), seed=0,
                        options=options if options is not None else {"task_id": TaskRecord.from_dict(task).task_id})


class ReferenceSolver:
    """The reference agent on any task of one snapshot, in ``stillweb/WikiQA-v0`` with limits sized to the
    task's evidence: one environment, made at the first task and reused for every task (``reset`` with the
    task itself and its budget, ``options={"task": ..., "limits": reference_limits(task)}``)."""

    def __init__(self, snapshot_path: str | Path, tool_format: str = "tongyi") -> None:
        self.snapshot_path = str(snapshot_path)
        self.tool_format = tool_format
        self.env: WikiQAEnv | None = None

    def solve(self, task: TaskRecord | Mapping[str, Any]) -> SolveResult:
        """Run the reference agent on ``task``."""
        task = TaskRecord.from_dict(task)
        limits = reference_limits(task)
        if self.env is None:
            self.env = WikiQAEnv(self.snapshot_path, tasks=[task], tool_format=self.tool_format,
                                 tools=list(REFERENCE_TOOLS), **limits)
        summary = play_reference(self.env, task, self.tool_format, options={"task": task, "limits": limits}).summary()
        solved = bool(summary["terminated"]) and float(summary["outcome"]) >= 1.0
        ending = summary["termination_reason"] or summary["truncation_reason"]
        return SolveResult(str(summary["task_id"]), solved, int(summary["turns"]), float(summary["outcome"]), ending)

    def close(self) -> None:
        """Close the environment (the shared snapshot stays open)."""
        if self.env is not None:
            self.env.close()
        self.env = None


def solve_with_reference(snapshot_path: str | Path, task: TaskRecord | Mapping[str, Any], tool_format: str = "tongyi") -> SolveResult:
    """Run the reference agent on ``task`` in WikiQA-v0 with limits sized to its evidence."""
    solver = ReferenceSolver(snapshot_path, tool_format)
    try:
        return solver.solve(task)
    finally:
        solver.close()


class ReferenceVerifier:
    """A generator ``verifier``: the reference agent's steps on a task, or None if it fails (one
    :class:`ReferenceSolver`, so one environment, for all the tasks it verifies)."""

    def __init__(self, snapshot_path: str | Path, tool_format: str = "tongyi") -> None:
        self.snapshot_path = str(snapshot_path)
        self.tool_format = tool_format
        self.solver = ReferenceSolver(snapshot_path, tool_format)

    def __call__(self, task: TaskRecord) -> int | None:
        result = self.solver.solve(task)
        return result.steps if result.solved else None


def generate_verified_tasks(
    snapshot_path: str | Path, name: str, params: GenerationParams, **options: Any,
) -> GenerationSummary:
    """:func:`stillweb.corpora.tasks.compose.generate.generate_tasks` with the first ``params.verify_limit`` kept
    tasks (None: all) solved by the reference agent; failures are discarded and counted as ``unsolvable``."""
    return generate_tasks(snapshot_path, name, params, verifier=ReferenceVerifier(snapshot_path), **options)
