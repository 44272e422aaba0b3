"""Plain jsonl / json / csv / parquet: the question, answer(s) and id columns named by
``--question-field`` / ``--answer-field`` / ``--id-field`` (defaults ``question``, ``answer``,
none). An answer column may hold one answer or a list; every other column goes to ``extra``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import FieldNames, QAFormat, RowError, SourceRow, answers_of, required_text

__all__ = ["PLAIN"]


def _parse(record: Mapping[str, Any], fields: FieldNames) -> SourceRow:
    answers = record.get(fields.answer)
    if isinstance(answers, str) and answers.startswith("["):  # a list written as JSON text (csv)
        try:
            answers = json.loads(answers)
        except json.JSONDecodeError:
            pass
    used = {fields.question, fields.answer, fields.id}
    source_id = record.get(fields.id) if fields.id else None
    if fields.id and (source_id is None or str(source_id) == ""):
        raise RowError(f"no {fields.id!r} (the id)", fields.id)
    return SourceRow(source_id=None if source_id is None else str(source_id),
                     question=required_text(record, fields.question), answers=answers_of(answers, fields.answer),
                     extra={key: value for key, value in record.items() if key not in used})


PLAIN = QAFormat("plain", "any jsonl / json / csv / parquet: --question-field, --answer-field, --id-field",
                 lambda keys, fields: fields.question in keys and fields.answer in keys, _parse)
