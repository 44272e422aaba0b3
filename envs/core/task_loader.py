"""Task loading: question/answer records for the environments, from any source.

A task set comes from a task-set name inside a snapshot
(``SNAPSHOT/tasks/<name>/<split>.parquet``), a ``.jsonl``/``.parquet`` file, or
a list of dicts (or :class:`~stillweb.corpora.tasks.store.record.TaskRecord` objects).
Every record needs ``question`` and ``answer``; ``task_id`` defaults to a
stable hash of both, and the optional ``aliases``, ``evidence`` and
``evidence_docs`` enable citation rewards and the reference agent. A task is
a :class:`~stillweb.corpora.tasks.store.record.TaskRecord`, the type the generator writes.

>>> tasks = load_tasks([{"question": "Capital of France?", "answer": "Paris"}])
>>> tasks[0].answer, len(tasks[0].task_id)
('Paris', 16)
>>> tasks.by_id(tasks[0].task_id).question
'Capital of France?'
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.store.files import read_task_file, task_file

__all__ = ["TaskSet", "TaskSource", "load_tasks"]

TaskSource = str | Path | Sequence[Mapping[str, Any] | TaskRecord]


class TaskSet(Sequence[TaskRecord]):
    """An ordered, indexable collection of tasks with lookup by ``task_id``."""

    def __init__(self, tasks: Iterable[TaskRecord], source: str) -> None:
        self._tasks = tuple(tasks)
        self.source = source
        self._by_id = {task.task_id: task for task in self._tasks}
        if not self._tasks:
            raise UsageError(f"no tasks in {source}")
        if len(self._by_id) != len(self._tasks):
            raise UsageError(f"duplicate task_id values in {source}")

    def __len__(self) -> int:
        return len(self._tasks)

    def __getitem__(self, index):  # type: ignore[override]
        return self._tasks[index]

    def by_id(self, task_id: str) -> TaskRecord:
        """The task with this id; ``ValueError`` naming the id (and the source) if absent."""
        try:
            return self._by_id[task_id]
        except KeyError:
            raise UsageError(f"unknown task_id {task_id!r} in {self.source} ({len(self)} tasks)") from None


class TaskPicker:
    """Which task each ``reset`` plays: ``options["task_id"]``, or ``options["task"]`` (a task record, in the
    set or not: how one environment verifies many new tasks), else a keyed draw from the seed.

    The n-th reset since the last seeded one draws ``KeyedRng(last_seed,
    namespace, "episode", n)``, so a run of unseeded resets is reproducible too.
    """

    def __init__(self, tasks: TaskSet, namespace: str) -> None:
        self.tasks = tasks
        self.namespace = namespace
        self._seed_base = 0
        self._episode_number = -1

    def pick(self, seed: int | None, options: dict[str, Any] | None) -> TaskRecord:
        """The task for this reset (``ValueError`` for an unknown ``task_id``)."""
        if seed is not None:
            self._seed_base, self._episode_number = int(seed), -1
        self._episode_number += 1
        record = (options or {}).get("task")
        if record is not None:
            if not isinstance(record, (Mapping, TaskRecord)):
                raise UsageError(f'options["task"] must be a task record (a dict), got {type(record).__name__}: '
                                 f"{str(record)[:80]!r}")
            return TaskRecord.from_dict(record)
        task_id = (options or {}).get("task_id")
        if task_id is not None:
            return self.tasks.by_id(str(task_id))
        rng = KeyedRng(self._seed_base, self.namespace, "episode", self._episode_number)
        return self.tasks[rng.integer(0, len(self.tasks) - 1)]


def load_tasks(tasks: TaskSource, snapshot_path: str | Path | None = None, split: str = "train") -> TaskSet:
    """Load a task set from a name inside the snapshot, a jsonl/parquet path, or records.

    A string that is neither an existing file nor a ``.jsonl``/``.parquet`` path is
    read as a task-set name: ``<snapshot_path>/tasks/<name>/<split>.parquet``
    (:func:`~stillweb.corpora.tasks.store.files.task_file`: the name and split are checked).
    Files are read once per process (keyed by resolved path, size and mtime), so
    many environments on one task set share it.

    >>> load_tasks([{"question": "q", "answer": "a", "task_id": "t1"}]).by_id("t1").answer
    'a'
    """
    if not isinstance(tasks, (str, Path)):
        if isinstance(tasks, Mapping):
            raise TypeError("tasks must be a list of dicts, a path or a task-set name, not a single dict")
        return TaskSet((TaskRecord.from_dict(record) for record in tasks), source="a list of task records")
    path = Path(tasks)
    if not path.is_file() and path.suffix not in (".jsonl", ".parquet") and snapshot_path is not None:
        path = task_file(snapshot_path, str(tasks), split)
    if not path.is_file():
        raise FileNotFoundError(f"task file not found: {path} (tasks={str(tasks)!r}, split={split!r})")
    stat = path.stat()
    return _load_file(path.resolve(), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _load_file(path: Path, size: int, mtime_ns: int) -> TaskSet:
    """The task set of a file; the size and mtime in the cache key reload a changed file."""
    if path.suffix == ".parquet":
        return TaskSet(read_task_file(path), source=str(path))
    return TaskSet((TaskRecord.from_dict(record) for record in _read_jsonl(path)), source=str(path))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise UsageError(f"{path}:{number}: not a JSON object: {error}") from None
    return records
