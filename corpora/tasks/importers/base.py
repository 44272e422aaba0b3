"""What every importer returns: one :class:`SourceRow` per question of a public QA file, with
its gold evidence as the source names it (:class:`EvidenceRef`), before any snapshot is read.

A format is a :class:`QAFormat`: a name, a test on a row's keys (used to detect it and to say
what a file looks like), and ``parse(record, fields) -> SourceRow``, or, for a record holding several
questions (a SQuAD paragraph), ``rows(record, fields)`` yielding them. A row without a question
or any answer raises :class:`RowError`, which the reader completes with the file and line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stillweb.corpora.errors import DataError

__all__ = ["EvidenceRef", "FieldNames", "QAFormat", "RowError", "SkippedQuestion", "SourceRow", "answers_of",
           "required_text"]


class RowError(DataError):
    """A row that cannot be imported; ``field`` names the missing or bad field."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class EvidenceRef:
    """One gold evidence item as the source names it: a corpus id, a page title, the supporting
    text (a sentence or paragraph), or a snapshot doc id (stillweb's own exports); ``subject``,
    ``relation`` and ``value`` describe it in the task's evidence list."""

    title: str = ""
    source_id: str = ""
    text: str = ""
    doc_id: int = -1
    snapshot: str = ""  # the fingerprint of the snapshot ``doc_id`` belongs to ("" unknown)
    subject: str = ""
    relation: str = ""
    value: str = ""


@dataclass
class SourceRow:
    """One question of a source file (``answers[0]`` the answer, the rest aliases)."""

    source_id: str | None
    question: str
    answers: list[str]
    split: str | None = None
    evidence: list[EvidenceRef] = field(default_factory=list)
    sub_questions: list[str] = field(default_factory=list)
    answerable: bool = True
    answer_match: str | None = None  # a rule the source itself states (stillweb's verl export)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SkippedQuestion:
    """One question of a several-question record that cannot be imported (an empty question text in
    CMRC 2018's trial file): counted by ``reason`` (the field) and skipped, an error with ``--strict``."""

    reason: str
    detail: str


@dataclass(frozen=True)
class FieldNames:
    """Columns of a plain file (``--question-field`` / ``--answer-field`` / ``--id-field``)."""

    question: str = "question"
    answer: str = "answer"
    id: str | None = None


@dataclass(frozen=True)
class QAFormat:
    """A public QA file format: ``matches(keys, fields)`` tells it from a row's keys; ``parse`` reads a
    record holding one question, ``rows`` one holding several."""

    name: str
    description: str
    matches: Callable[[frozenset[str], FieldNames], bool]
    parse: Callable[[Mapping[str, Any], FieldNames], SourceRow] | None = None
    rows: Callable[[Mapping[str, Any], FieldNames], Iterable[SourceRow | SkippedQuestion]] | None = None

    def read(self, record: Mapping[str, Any], fields: FieldNames) -> Iterable[SourceRow | SkippedQuestion]:
        """The questions of one record, in order."""
        return self.rows(record, fields) if self.rows is not None else (self.parse(record, fields),)


def required_text(record: Mapping[str, Any], key: str) -> str:
    """The non-empty text of ``record[key]``; :class:`RowError` naming the field otherwise."""
    value = record.get(key)
    if value is None or not str(value).strip():
        raise RowError(f"no {key!r} (the question)", key)
    return str(value).strip()


def answers_of(value: Any, key: str) -> list[str]:
    """The non-empty answers in ``value`` (a string or a list of them), in order without repeats;
    :class:`RowError` naming ``key`` when there is none."""
    items = [value] if isinstance(value, str) else list(value) if value is not None else []
    answers = list(dict.fromkeys(str(item).strip() for item in items if item is not None and str(item).strip()))
    if not answers:
        raise RowError(f"no answer in {key!r}", key)
    return answers
