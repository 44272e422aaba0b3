"""Task pages: a task set with filters (hops, level, shape, split), and one task's
question, answers, formalization graph, evidence and the reference agent's tool calls."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.wikiqa.solvability import play_reference, reference_limits
from stillweb.sandboxes.formats import get_format
from stillweb.server.tools import SnapshotCatalog
from stillweb.server.viewer.formal_svg import formalization_svg
from stillweb.server.viewer.pages import error_page, render

__all__ = ["TaskSetView", "router", "oracle_steps"]

PAGE_ROWS = 100
ORACLE_CACHE = 64
FILTERS = ("split", "hops", "level", "shape")


@dataclass(frozen=True)
class TaskSetView:
    """The tasks of one task set of the snapshot (every split), in split then file order,
    as plain dicts (:meth:`~stillweb.corpora.tasks.store.record.TaskRecord.to_row`) for the templates."""

    snapshot: Snapshot
    name: str | None
    tasks: tuple[dict, ...]
    problem: str | None = None

    @classmethod
    def open(cls, snapshot: Snapshot, name: str | None) -> "TaskSetView":
        """Read task set ``name`` (``None``: the first under ``tasks/``, if any).

        Raises ``FileNotFoundError`` naming the set when a named set does not exist.
        """
        available = sorted(path.name for path in (snapshot.path / "tasks").glob("*") if path.is_dir())
        if name is None:
            if not available:
                return cls(snapshot, None, (), f"snapshot {snapshot.path} has no task sets: make one with `stillweb tasks generate`")
            name = available[0]
        elif name not in available:
            raise FileNotFoundError(f"no task set {name!r} in {snapshot.path / 'tasks'}; available: {available}")
        rows = [task.to_row() for split in SPLITS if (snapshot.path / "tasks" / name / f"{split}.parquet").is_file()
                for task in read_tasks(snapshot.path, name, split)]
        return cls(snapshot, name, tuple(rows))

    def by_id(self, task_id: str) -> dict | None:
        """The task ``task_id`` or ``None``."""
        return next((task for task in self.tasks if task.get("task_id") == task_id), None)

    def choices(self) -> dict[str, list[str]]:
        """The distinct values of every filter field, sorted (numbers numerically)."""
        return {name: sorted({str(task.get(name)) for task in self.tasks if task.get(name) is not None},
                             key=lambda value: (not value.isdigit(), int(value) if value.isdigit() else 0, value))
                for name in FILTERS}

    def select(self, filters: dict[str, str]) -> list[dict]:
        """The tasks whose fields equal every non-empty filter (compared as text)."""
        wanted = {name: value for name, value in filters.items() if value}
        return [task for task in self.tasks if all(str(task.get(name)) == value for name, value in wanted.items())]


class OracleRuns:
    """The reference agent's episode on a task (deterministic, so kept in a small cache)."""

    def __init__(self, task_set: TaskSetView) -> None:
        self.task_set = task_set
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def run(self, task: dict) -> dict[str, Any]:
        """``{"steps": [...], "reward": .., "info": ..}`` of the reference agent on ``task``."""
        with self._lock:
            if task["task_id"] not in self._cache:
                self._cache[task["task_id"]] = oracle_steps(self.task_set, task)
                while len(self._cache) > ORACLE_CACHE:
                    self._cache.popitem(last=False)
            return self._cache[task["task_id"]]


def oracle_steps(task_set: TaskSetView, task: dict, tool_format: str = "tongyi") -> dict[str, Any]:
    """Play ``task`` with :class:`~stillweb.envs.ReferenceAgent` in a WikiQA env (with the
    solvability proof's budget and play, :func:`~stillweb.envs.wikiqa.solvability.play_reference`): each
    step's action, its parsed calls and the observation, then the reward and its parts."""
    env = gym.make("stillweb/WikiQA-v0", snapshot=str(task_set.snapshot.path), tasks=task_set.name,
                   split=task.get("split") or "train", tool_format=tool_format, **reference_limits(task))
    parser = get_format(tool_format)
    try:
        played = play_reference(env, task, tool_format)
    finally:
        env.close()
    steps = [{"action": step.action, "parsed": parser.parse(step.action), "observation": step.observation}
             for step in played.steps]
    reward = played.steps[-1].reward if played.steps else 0.0
    return {"steps": steps, "reward": reward, "info": {key: value for key, value in played.info.items() if key != "messages"}}


def router(catalog: SnapshotCatalog, task_set: TaskSetView) -> APIRouter:
    """The task list and task pages."""
    oracle = OracleRuns(task_set)
    pages = APIRouter(include_in_schema=False)

    @pages.get("/tasks", response_class=HTMLResponse)
    def task_list(
        split: str = Query(default="", max_length=20),
        hops: str = Query(default="", max_length=10),
        level: str = Query(default="", max_length=10),
        shape: str = Query(default="", max_length=200),
        page: int = Query(default=0, ge=0),
    ) -> HTMLResponse:
        if task_set.name is None:
            return error_page(404, "No task set", str(task_set.problem))
        filters = {"split": split, "hops": hops, "level": level, "shape": shape}
        selected = task_set.select(filters)
        rows = selected[page * PAGE_ROWS:(page + 1) * PAGE_ROWS]
        return render("tasks.html", task_set=task_set, filters=filters, choices=task_set.choices(), rows=rows,
                      total=len(selected), page=page, pages=max(1, -(-len(selected) // PAGE_ROWS)))

    @pages.get("/tasks/{task_id}", response_class=HTMLResponse)
    def task_page(task_id: str) -> HTMLResponse:
        task = task_set.by_id(task_id)
        if task is None:
            return error_page(404, "No such task", f"Task set {task_set.name!r} has no task {task_id!r}.")
        return render("task.html", task=task, task_set=task_set, graph=formalization_svg(task.get("formalization") or []),
                      oracle=oracle.run(task))

    return pages
