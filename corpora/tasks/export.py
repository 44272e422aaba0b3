"""Exporting a task set: jsonl, a Hugging Face ``datasets`` dataset, or the verl/Search-R1 layout.

- ``jsonl``: one task per line, nested fields as JSON (``{split}.jsonl`` in ``out``).
- ``hf``: a ``datasets.DatasetDict`` (train/dev/test) saved with ``save_to_disk``.
- ``verl``: ``{split}.parquet`` with the columns Search-R1's ``nq_search.py``
  writes (``data_source``, ``prompt`` as chat messages, ``ability``,
  ``reward_model`` with ``style`` and ``ground_truth.target``, ``extra_info``),
  so existing trainer scripts load it unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.errors import UsageError
from stillweb.corpora.manifest import read_manifest
from stillweb.corpora.tasks.record import TASK_FIELDS, TaskRecord
from stillweb.corpora.tasks.splits import SPLITS
from stillweb.corpora.tasks.store import read_tasks

__all__ = ["EXPORT_FORMATS", "SEARCH_R1_PREFIX", "export_tasks", "search_r1_prompt", "verl_row"]

EXPORT_FORMATS = ("jsonl", "hf", "verl")
SEARCH_R1_PREFIX = (
    "Answer the given question. You must conduct reasoning inside <think> and </think> first every time you get "
    "new information. After reasoning, if you find you lack some knowledge, you can call a search engine by "
    "<search> query </search> and it will return the top searched results between <information> and "
    "</information>. You can search as many times as your want. If you find no further external knowledge needed, "
    "you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. "
    "For example, <answer> Beijing </answer>. Question: "
)


# Search-R1's reward manager picks its scorer by data_source (qa_em for these): imported sets keep theirs.
_DATA_SOURCES = {"hotpotqa": "hotpotqa", "2wikimultihopqa": "2wikimultihopqa", "musique": "musique"}


def search_r1_prompt(question: str) -> str:
    """Search-R1's user prompt for ``question``: ``nq_search.py`` strips it, ends it with ``?`` and
    puts it in the ``base`` template of ``make_prefix``.

    >>> search_r1_prompt(" who wrote hamlet ").endswith("Question: who wrote hamlet?\\n")
    True
    """
    question = question.strip()
    if question[-1:] != "?":
        question += "?"
    return SEARCH_R1_PREFIX + question + "\n"


def export_tasks(snapshot_path: str | Path, name: str, fmt: str, out: str | Path) -> list[Path]:
    """Export every split of task set ``name``; returns the files or directories written."""
    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; expected one of {EXPORT_FORMATS}")
    splits = {split: read_tasks(snapshot_path, name, split) for split in SPLITS}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "hf":
        from datasets import Dataset, DatasetDict

        made = {s: Dataset.from_list([_flat(t.to_dict()) for t in tasks]) for s, tasks in splits.items() if tasks}
        empty = next(iter(made.values())).select([]) if made else Dataset.from_dict({})  # loadable empty splits
        DatasetDict({s: made.get(s, empty) for s in splits}).save_to_disk(str(out / name),
                                                                         num_shards={s: 1 for s in splits})
        return [out / name]
    written = []
    for split, tasks in splits.items():
        if fmt == "jsonl":
            path = out / f"{split}.jsonl"
            path.write_text("".join(json.dumps(t.to_dict(), ensure_ascii=False, sort_keys=True) + "\n" for t in tasks), encoding="utf-8")
        else:
            path = out / f"{split}.parquet"
            fingerprint = read_manifest(Path(snapshot_path))["fingerprint"]
            rows = [verl_row(t, name, index, fingerprint) for index, t in enumerate(tasks)]
            pq.write_table(pa.Table.from_pylist(rows) if rows else _empty_verl_table(), path)
        written.append(path)
    return written


def verl_row(task: TaskRecord, name: str, index: int, fingerprint: str | None = None) -> dict:
    """One task in the verl/Search-R1 parquet layout (an imported task keeps its source's ``data_source``);
    ``fingerprint``: the snapshot's, recorded so that ``evidence_docs`` are read back only over it."""
    data_source = task.extra.get("data_source") or _DATA_SOURCES.get(task.source or "") or f"stillweb/{name}"
    return {
        "data_source": str(data_source),
        "prompt": [{"role": "user", "content": search_r1_prompt(task.question)}],
        "ability": "fact-reasoning",
        "reward_model": {"style": "rule", "ground_truth": {"target": list(task.golds)}},
        "extra_info": {
            "split": task.split,
            "index": index,
            "task_id": task.task_id,
            "question": task.question,  # as stored (the prompt's copy ends with '?', as Search-R1 writes it)
            "level": task.level,
            "hops": task.hops,
            "evidence_docs": list(task.evidence_docs),
            "snapshot_fingerprint": fingerprint,
            "answer_match": task.answer_match,
        },
    }


def _flat(task: dict) -> dict:
    """A task for ``datasets``: nested fields of mixed types as JSON strings (and so every list or
    dict of a source's own fields, e.g. HotpotQA's ``supporting_facts`` of [title, index] pairs)."""
    flat = dict(task)
    for key, value in flat.items():
        if key in ("evidence", "formalization", "obfuscations", "solvability") or (
                key not in TASK_FIELDS and isinstance(value, (list, dict))):
            flat[key] = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return flat


def _empty_verl_table() -> pa.Table:
    blank = TaskRecord(task_id="", question="", answer="", split="", level=0, hops=0)
    return pa.Table.from_pylist([verl_row(blank, "", 0)]).slice(0, 0)
