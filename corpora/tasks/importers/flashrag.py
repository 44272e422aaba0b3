"""FlashRAG / Search-R1 jsonl: ``{"id", "question", "golden_answers": [...], "metadata": {...}}``
(FlashRAG's ``datasets`` layout, which Search-R1's ``nq_search.py`` reads). No evidence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import FieldNames, QAFormat, SourceRow, answers_of, required_text

__all__ = ["FLASHRAG"]


def _parse(record: Mapping[str, Any], fields: FieldNames) -> SourceRow:
    extra = {key: value for key, value in record.items() if key not in ("id", "question", "golden_answers")}
    return SourceRow(source_id=_text_or_none(record.get("id")), question=required_text(record, "question"),
                     answers=answers_of(record.get("golden_answers"), "golden_answers"), extra=extra)


def _text_or_none(value: Any) -> str | None:
    return None if value is None or str(value) == "" else str(value)


FLASHRAG = QAFormat("flashrag", "FlashRAG / Search-R1 jsonl: id, question, golden_answers, metadata",
                    lambda keys, fields: {"question", "golden_answers"} <= keys, _parse)
