"""Task loading: question/answer records for the environments, from any source.

A task set comes from a task-set name inside a snapshot
(``SNAPSHOT/tasks/<name>/<split>.parquet``), a ``.jsonl``/``.parquet`` file, or
a list of dicts. Every record needs ``question`` and ``answer`` (an unanswerable
task, ``"answerable": false``, has an empty answer: the right move is to abstain); ``task_id``
defaults to a stable hash of both, and the optional ``aliases``, ``evidence``
and ``evidence_docs`` (lists, or JSON strings of lists as parquet writers may
store them) enable citation rewards and the reference agent.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from stillweb.corpora.keyed import KeyedRng, stable_hash

__all__ = ["EvidenceItem", "Task", "TaskSet", "TaskSource", "load_tasks"]

TaskSource = str | Path | Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class EvidenceItem:
    """One fact on the solving path: ``subject --relation--> value``, stated in ``doc_id``."""

    subject: str
    relation: str
    value: str
    doc_id: int
    doc_title: str


@dataclass(frozen=True)
class Task:
    """A question with its gold answer(s) and, optionally, the evidence that proves it."""

    task_id: str
    question: str
    answer: str
    aliases: tuple[str, ...] = ()
    evidence: tuple[EvidenceItem, ...] = ()
    evidence_docs: tuple[int, ...] = ()
    answerable: bool = True
    record: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def golds(self) -> tuple[str, ...]:
        """The answer followed by its aliases (none for an unanswerable task)."""
        return (self.answer, *self.aliases) if self.answerable else ()

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "Task":
        """Build a task from a record dict, raising ``ValueError`` naming what is wrong.

        >>> Task.from_record({"question": "q", "answer": "a", "aliases": '["A"]'}).golds
        ('a', 'A')
        """
        answerable = record.get("answerable") is not False  # absent (older sets): answerable
        missing = [key for key in ("question", "answer") if not record.get(key) and (answerable or key == "question")]
        if missing:
            raise ValueError(f"task record lacks {missing}: {dict(record)!r:.200}")
        if not answerable and record.get("answer"):
            raise ValueError(f"an unanswerable task has no answer, got {record['answer']!r}: {dict(record)!r:.200}")
        question, answer = str(record["question"]), str(record.get("answer") or "")
        evidence = tuple(_evidence_item(item) for item in _as_list(record.get("evidence")))
        evidence_docs = tuple(int(doc) for doc in _as_list(record.get("evidence_docs")))
        if not evidence_docs:
            evidence_docs = tuple(dict.fromkeys(item.doc_id for item in evidence if item.doc_id >= 0))
        plain = {key: _json_ready(value) for key, value in record.items()}
        task_id = str(record.get("task_id") or stable_hash(question + "\x1f" + answer))
        plain["task_id"] = task_id
        return cls(
            task_id=task_id,
            question=question,
            answer=answer,
            aliases=tuple(str(alias) for alias in _as_list(record.get("aliases"))),
            evidence=evidence,
            evidence_docs=evidence_docs,
            answerable=answerable,
            record=plain,
        )


class TaskSet(Sequence[Task]):
    """An ordered, indexable collection of tasks with lookup by ``task_id``."""

    def __init__(self, tasks: Iterable[Task], source: str) -> None:
        self._tasks = tuple(tasks)
        self.source = source
        self._by_id = {task.task_id: task for task in self._tasks}
        if not self._tasks:
            raise ValueError(f"no tasks in {source}")
        if len(self._by_id) != len(self._tasks):
            raise ValueError(f"duplicate task_id values in {source}")

    def __len__(self) -> int:
        return len(self._tasks)

    def __getitem__(self, index):  # type: ignore[override]
        return self._tasks[index]

    def by_id(self, task_id: str) -> Task:
        """The task with this id; ``ValueError`` naming the id (and the source) if absent."""
        try:
            return self._by_id[task_id]
        except KeyError:
            raise ValueError(f"unknown task_id {task_id!r} in {self.source} ({len(self)} tasks)") from None


class TaskPicker:
    """Which task each ``reset`` plays: ``options["task_id"]``, else a keyed draw from the seed.

    The n-th reset since the last seeded one draws ``KeyedRng(last_seed,
    namespace, "episode", n)``, so a run of unseeded resets is reproducible too.
    """

    def __init__(self, tasks: TaskSet, namespace: str) -> None:
        self.tasks = tasks
        self.namespace = namespace
        self._seed_base = 0
        self._episode_number = -1

    def pick(self, seed: int | None, options: dict[str, Any] | None) -> Task:
        """The task for this reset (``ValueError`` for an unknown ``task_id``)."""
        if seed is not None:
            self._seed_base, self._episode_number = int(seed), -1
        self._episode_number += 1
        task_id = (options or {}).get("task_id")
        if task_id is not None:
            return self.tasks.by_id(str(task_id))
        rng = KeyedRng(self._seed_base, self.namespace, "episode", self._episode_number)
        return self.tasks[rng.integer(0, len(self.tasks) - 1)]


def load_tasks(tasks: TaskSource, snapshot_path: str | Path | None = None, split: str = "train") -> TaskSet:
    """Load a task set from a name inside the snapshot, a jsonl/parquet path, or records.

    A string that is neither an existing file nor a ``.jsonl``/``.parquet`` path is
    read as a task-set name: ``<snapshot_path>/tasks/<name>/<split>.parquet``.
    Files are read once per process (keyed by resolved path, size and mtime), so
    many environments on one task set share it.

    >>> load_tasks([{"question": "q", "answer": "a", "task_id": "t1"}]).by_id("t1").answer
    'a'
    """
    if not isinstance(tasks, (str, Path)):
        if isinstance(tasks, Mapping):
            raise TypeError("tasks must be a list of dicts, a path or a task-set name, not a single dict")
        return TaskSet((Task.from_record(record) for record in tasks), source="a list of task records")
    path = Path(tasks)
    if not path.is_file() and path.suffix not in (".jsonl", ".parquet") and snapshot_path is not None:
        path = Path(snapshot_path) / "tasks" / str(tasks) / f"{split}.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"task file not found: {path} (tasks={str(tasks)!r}, split={split!r})")
    stat = path.stat()
    return _load_file(path.resolve(), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _load_file(path: Path, size: int, mtime_ns: int) -> TaskSet:
    """The task set of a file; the size and mtime in the cache key reload a changed file."""
    return TaskSet((Task.from_record(record) for record in _read_records(path)), source=str(path))


def _read_records(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    records = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}:{number}: not a JSON object: {error}") from None
    return records


def _as_list(value: Any) -> list:
    """A list from a list/tuple/array, a JSON string of a list, or nothing."""
    if value is None:
        return []
    if isinstance(value, str):
        return list(json.loads(value)) if value.strip() else []
    return list(value)


def _evidence_item(item: Any) -> EvidenceItem:
    item = json.loads(item) if isinstance(item, str) else item
    doc_id = item.get("doc_id")
    return EvidenceItem(
        subject=str(item.get("subject", "")),
        relation=str(item.get("relation", "")),
        value=str(item.get("value", "")),
        doc_id=int(doc_id) if doc_id is not None else -1,
        doc_title=str(item.get("doc_title", "")),
    )


def _json_ready(value: Any) -> Any:
    """Record values as plain JSON types (numpy arrays from parquet become lists)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    return value
