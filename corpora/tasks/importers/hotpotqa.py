"""HotpotQA and 2WikiMultihopQA (their original json): ``_id``, ``question``, ``answer``,
``supporting_facts`` as ``[title, sentence index]`` and ``context`` as ``[title, [sentences]]``;
2WikiMultihopQA adds ``evidences``, ``[subject, relation, object]`` triples.

Each supporting fact becomes an evidence item on its page, carrying the sentence (when the
index is inside the context paragraph) so it can be found in a passage snapshot. For
2WikiMultihopQA a fact is described by the evidence triple whose subject is its page.
The ``context`` paragraphs (distractors included) are not kept in ``extra``: they are corpus
text, which the snapshot holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import (EvidenceRef, FieldNames, QAFormat, RowError, SourceRow, answers_of,
                                                   required_text)

__all__ = ["HOTPOTQA", "TWOWIKI"]

_HOTPOT_KEYS = ("_id", "question", "answer", "supporting_facts", "context")


def _parse(record: Mapping[str, Any], fields: FieldNames) -> SourceRow:
    paragraphs = {title: sentences for title, sentences in record.get("context") or ()}
    triples = [tuple(str(part) for part in triple) for triple in record.get("evidences") or ()]
    facts = record.get("supporting_facts")
    if facts is None:
        raise RowError("no 'supporting_facts'", "supporting_facts")
    evidence = []
    for title, index in facts:
        title, sentences = str(title), paragraphs.get(title) or ()
        sentence = str(sentences[index]).strip() if isinstance(index, int) and 0 <= index < len(sentences) else ""
        triple = next((t for t in triples if t[0] == title), None)
        subject, relation, value = triple if triple else (title, "supporting_fact", sentence)
        evidence.append(EvidenceRef(title=title, text=sentence, subject=subject, relation=relation, value=value))
    extra = {key: value for key, value in record.items() if key not in _HOTPOT_KEYS}
    return SourceRow(source_id=str(record["_id"]) if record.get("_id") is not None else None,
                     question=required_text(record, "question"), answers=answers_of(record.get("answer"), "answer"),
                     evidence=evidence, extra={"supporting_facts": [list(f) for f in facts], **extra})


HOTPOTQA = QAFormat("hotpotqa", "HotpotQA json: _id, question, answer, supporting_facts [title, sentence], context",
                    lambda keys, fields: {"supporting_facts", "context", "question"} <= keys and "evidences" not in keys,
                    _parse)
TWOWIKI = QAFormat("2wikimultihopqa", "2WikiMultihopQA json: HotpotQA's fields plus evidences [subject, relation, object]",
                   lambda keys, fields: {"supporting_facts", "context", "evidences"} <= keys, _parse)
