"""Exporting a task set: jsonl, a Hugging Face ``datasets`` dataset, or the verl/Search-R1 layout.

- ``jsonl``: one task per line, nested fields as JSON (``{split}.jsonl`` in ``out``).
- ``hf``: a ``datasets.DatasetDict`` (train/dev/test) saved with ``save_to_disk``.
- ``verl``: ``{split}.parquet`` with the columns Search-R1's ``nq_search.py``
  writes (``id``, ``question`` as it rewrites it, ``golden_answers``, ``data_source``,
  ``prompt`` as chat messages, ``ability``, ``reward_model`` with ``style`` and
  ``ground_truth.target``, ``extra_info`` with ``split`` and ``index``; stillweb adds keys to
  ``extra_info``), so existing trainer scripts load it unchanged.

``data_source`` is the name Search-R1's reward selector accepts (``_select_rm_score_fn`` in its
``verl/trainer/main_ppo.py``, :data:`SEARCH_R1_DATA_SOURCES`) whenever the source is known: the
export's ``data_source`` argument (``--data-source``), else the task's own (a Search-R1 parquet's, or
the one its import found in the file's name or was given), else its import format's (HotpotQA,
2WikiMultihopQA, MuSiQue); other sets get ``stillweb/<name>``, which Search-R1's selector refuses.

The export formats are one registry, :data:`EXPORT_FORMATS`: to add one, add its name there and its branch in
:func:`export_tasks`; the CLI's ``--format`` choices and the docs' lists (tests/test_registries.py) read it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.manifest import read_manifest
from stillweb.corpora.tasks.store.record import TASK_FIELDS, TaskRecord
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks

__all__ = ["EXPORT_FORMATS", "SEARCH_R1_DATA_SOURCES", "SEARCH_R1_PREFIX", "data_source_of", "export_tasks",
           "search_r1_prompt", "search_r1_question", "verl_row"]

EXPORT_FORMATS = ("jsonl", "hf", "verl")
SEARCH_R1_PREFIX = (
    "Answer the given question. You must conduct reasoning inside <think> and </think> first every time you get "
    "new information. After reasoning, if you find you lack some knowledge, you can call a search engine by "
    "<search> query </search> and it will return the top searched results between <information> and "
    "</information>. You can search as many times as your want. If you find no further external knowledge needed, "
    "you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. "
    "For example, <answer> Beijing </answer>. Question: "
)


# Search-R1's reward manager picks its scorer by data_source (verl/trainer/main_ppo.py, _select_rm_score_fn: qa_em
# for these seven, NotImplementedError for any other name)
SEARCH_R1_DATA_SOURCES = ("nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle")
# Words of file names and import formats that name one of them (FlashRAG's folders are the names themselves)
_DATA_SOURCE_WORDS = {**{name: name for name in SEARCH_R1_DATA_SOURCES}, "naturalquestions": "nq",
                      "natural_questions": "nq", "trivia_qa": "triviaqa", "hotpot": "hotpotqa", "2wiki": "2wikimultihopqa",
                      "2wikimqa": "2wikimultihopqa", "musique_ans": "musique", "musique_full": "musique"}


def data_source_of(name: str | Path) -> str | None:
    """The Search-R1 data source a file path (its name first, then its folders) or an import format names.

    >>> data_source_of("FlashRAG_datasets/nq/test.jsonl"), data_source_of("hotpot_dev_distractor_v1.json")
    ('nq', 'hotpotqa')
    >>> data_source_of("musique_full_v1.0_dev.jsonl"), data_source_of("mine/qa.jsonl") is None
    ('musique', True)
    """
    for part in reversed(Path(str(name)).parts):
        stem = part.lower()
        for key in sorted(_DATA_SOURCE_WORDS, key=len, reverse=True):  # musique_full before musique
            if re.search(rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])", stem):
                return _DATA_SOURCE_WORDS[key]
    return None


def check_data_source(name: str | None) -> str | None:
    """``name`` if it is ``None`` or one of :data:`SEARCH_R1_DATA_SOURCES`; ``UsageError`` naming them otherwise."""
    if name is not None and name not in SEARCH_R1_DATA_SOURCES:
        raise UsageError(f"unknown data source {name!r}: Search-R1's reward selector accepts "
                         f"{', '.join(SEARCH_R1_DATA_SOURCES)}")
    return name


def search_r1_question(question: str) -> str:
    """The question as ``nq_search.py`` rewrites it: stripped, ending with ``?``.

    >>> search_r1_question(" who wrote hamlet ")
    'who wrote hamlet?'
    """
    question = question.strip()
    return question if question[-1:] == "?" else question + "?"


def search_r1_prompt(question: str) -> str:
    """Search-R1's user prompt for ``question``: ``nq_search.py`` strips it, ends it with ``?`` and
    puts it in the ``base`` template of ``make_prefix``.

    >>> search_r1_prompt(" who wrote hamlet ").endswith("Question: who wrote hamlet?\\n")
    True
    """
    return SEARCH_R1_PREFIX + search_r1_question(question) + "\n"


def export_tasks(snapshot_path: str | Path, name: str, fmt: str, out: str | Path,
                 data_source: str | None = None) -> list[Path]:
    """Export every split of task set ``name``; returns the files or directories written. ``data_source``
    (verl): the Search-R1 data source every row gets (one of :data:`SEARCH_R1_DATA_SOURCES`)."""
    check_data_source(data_source)
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
            rows = [verl_row(t, name, index, fingerprint, data_source) for index, t in enumerate(tasks)]
            pq.write_table(pa.Table.from_pylist(rows) if rows else _empty_verl_table(), path)
        written.append(path)
    return written


def verl_row(task: TaskRecord, name: str, index: int, fingerprint: str | None = None,
             data_source: str | None = None) -> dict:
    """One task in the verl/Search-R1 parquet layout (``data_source``: see the module docstring);
    ``fingerprint``: the snapshot's, recorded so that ``evidence_docs`` are read back only over it."""
    own = task.source if task.source in SEARCH_R1_DATA_SOURCES else None  # an import format that is a data source
    data_source = data_source or task.extra.get("data_source") or own or f"stillweb/{name}"
    return {
        "id": task.task_id,
        "question": search_r1_question(task.question),
        "golden_answers": list(task.golds),
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
