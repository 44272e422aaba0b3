"""Search-R1's verl parquet (``scripts/data_process/nq_search.py``): ``data_source``, ``prompt``
(chat messages whose user turn is the instruction template ending ``Question: {question}\\n``),
``ability``, ``reward_model.ground_truth.target`` (the golden answers) and ``extra_info``
(``split``, ``index``; stillweb's own export adds ``task_id``, ``question`` as stored, ``evidence_docs``
with the ``snapshot_fingerprint`` they belong to, and ``answer_match``).

The question is ``extra_info.question`` when present, else recovered from the prompt: the text
after the template's ``Question: ``, without the final newline (the template is :data:`~stillweb.corpora.tasks.store.export.SEARCH_R1_PREFIX`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import EvidenceRef, FieldNames, QAFormat, RowError, SourceRow, answers_of

__all__ = ["SEARCH_R1", "question_of_prompt"]

_MARK = "Question: "


def question_of_prompt(prompt: Any) -> str:
    """The question inside a Search-R1 prompt (a list of chat messages, or the user text itself).

    >>> question_of_prompt([{"role": "user", "content": "Answer the given question. ... Question: who?\\n"}])
    'who?'
    """
    if isinstance(prompt, str):
        text = prompt
    else:
        users = [message.get("content") or "" for message in list(prompt or ()) if message.get("role") == "user"]
        text = users[-1] if users else ""
    start = text.find(_MARK)
    question = (text[start + len(_MARK):] if start >= 0 else text).rstrip("\n").strip()
    if not question:
        raise RowError("no question in 'prompt' (expected Search-R1's template ending 'Question: ...')", "prompt")
    return question


def _parse(record: Mapping[str, Any], fields: FieldNames) -> SourceRow:
    reward_model = record.get("reward_model") or {}
    target = (reward_model.get("ground_truth") or {}).get("target")
    info = dict(record.get("extra_info") or {})
    split, index = info.get("split"), info.get("index")
    source_id = info.get("task_id")
    if source_id is None and index is not None:
        source_id = f"{record.get('data_source') or 'search_r1'}-{split or 'all'}-{index}"
    evidence = [EvidenceRef(doc_id=int(doc), snapshot=str(info.get("snapshot_fingerprint") or ""))
                for doc in info.get("evidence_docs") or ()]
    extra = {"data_source": record.get("data_source"), "ability": record.get("ability"), "extra_info": info}
    return SourceRow(source_id=None if source_id is None else str(source_id),
                     question=str(info.get("question") or question_of_prompt(record.get("prompt"))).strip(),
                     answers=answers_of(target, "reward_model.ground_truth.target"),
                     split=None if split is None else str(split), evidence=evidence,
                     answer_match=info.get("answer_match"), extra=extra)


SEARCH_R1 = QAFormat("search_r1", "Search-R1's verl parquet: data_source, prompt, ability, reward_model, extra_info",
                     lambda keys, fields: {"prompt", "reward_model"} <= keys, _parse)
