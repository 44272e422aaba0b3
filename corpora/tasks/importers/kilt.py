"""KILT jsonl (``{task}-{split}-kilt.jsonl``): ``id``, ``input`` (the question), ``output`` (a list
of ``{"answer", "provenance": [{"wikipedia_id", "title", "start_paragraph_id", ...}]}``) and
``meta``. Every output's answer is a golden answer; every provenance is an evidence item, found
by ``wikipedia_id`` (a snapshot built from KILT's knowledge source keeps it as the source id),
else by title."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import EvidenceRef, FieldNames, QAFormat, SourceRow, answers_of, required_text

__all__ = ["KILT"]


def _parse(record: Mapping[str, Any], fields: FieldNames) -> SourceRow:
    outputs = list(record.get("output") or ())
    answers = answers_of([output.get("answer") for output in outputs], "output[].answer")
    evidence, seen = [], set()
    for output in outputs:
        for item in output.get("provenance") or ():
            key = (str(item.get("wikipedia_id") or ""), str(item.get("title") or ""))
            if key not in seen:
                seen.add(key)
                evidence.append(EvidenceRef(title=key[1], source_id=key[0], subject=key[1], relation="provenance",
                                            value=str(item.get("section") or "")))
    return SourceRow(source_id=str(record["id"]) if record.get("id") is not None else None,
                     question=required_text(record, "input"), answers=answers, evidence=evidence,
                     extra={"output": outputs, "meta": record.get("meta")})


KILT = QAFormat("kilt", "KILT jsonl: id, input, output[].answer, output[].provenance[] (wikipedia_id, title)",
                lambda keys, fields: {"input", "output"} <= keys, _parse)
