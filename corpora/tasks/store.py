"""Task files: ``<snapshot>/tasks/<name>/{train,dev,test}.parquet`` and ``card.md``.

Nested fields (``aliases``, ``evidence``, ``evidence_docs``, ``formalization``,
``candidates_per_hop``, ``obfuscations``) are stored as JSON strings (sorted
keys, no ASCII escaping) so the files stay flat and byte-stable;
:func:`read_tasks` decodes them back to Python values. A task set is written
into a temporary directory and renamed into place, so an interrupted run
never leaves a partial set.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.tasks.record import TASK_FIELDS
from stillweb.corpora.tasks.splits import SPLITS

__all__ = ["TASKS_SCHEMA", "JSON_FIELDS", "task_set_dir", "read_tasks", "write_task_set", "encode_task", "decode_task"]

JSON_FIELDS = ("aliases", "evidence", "evidence_docs", "formalization", "candidates_per_hop", "obfuscations")
_INT_FIELDS = ("hops", "constraints", "level", "oracle_steps", "answer_doc")
TASKS_SCHEMA = pa.schema(
    [(name, pa.int32() if name in _INT_FIELDS else pa.string()) for name in TASK_FIELDS]
)


def task_set_dir(snapshot_path: str | Path, name: str) -> Path:
    """Where the task set ``name`` of a snapshot lives."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"bad task set name {name!r}: use a plain, non-hidden directory name")
    return Path(snapshot_path) / "tasks" / name


def encode_task(task: dict) -> dict:
    """A task with its nested fields as JSON strings (one parquet row)."""
    row = {name: task.get(name) for name in TASK_FIELDS}
    for name in JSON_FIELDS:
        row[name] = json.dumps(row[name], ensure_ascii=False, sort_keys=True)
    return row


def decode_task(row: dict) -> dict:
    """A parquet row with its JSON fields decoded."""
    task = dict(row)
    for name in JSON_FIELDS:
        if isinstance(task.get(name), str):
            task[name] = json.loads(task[name])
    return task


def read_tasks(snapshot_path: str | Path, name: str, split: str = "train") -> list[dict]:
    """The tasks of one split of a task set, decoded, in file order."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    path = task_set_dir(snapshot_path, name) / f"{split}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"no task file {path} (generate it with `stillweb tasks generate`)")
    return [decode_task(row) for row in pq.read_table(path).to_pylist()]


def write_task_set(
    snapshot_path: str | Path, name: str, tasks: Sequence[dict], card: Callable[[Path], None]
) -> Path:
    """Write the split files and the card (``card(dir)`` writes it) atomically; returns the set dir."""
    final = task_set_dir(snapshot_path, name)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=final.parent))
    try:
        for split in SPLITS:
            rows = [encode_task(t) for t in tasks if t["split"] == split]
            table = pa.Table.from_pylist(rows, schema=TASKS_SCHEMA)
            pq.write_table(table, staging / f"{split}.parquet", compression="zstd")
        card(staging)
        if final.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{name}.old.", dir=final.parent))
            final.rename(retired / name)
            staging.rename(final)
            shutil.rmtree(retired)
        else:
            staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final
