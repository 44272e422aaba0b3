"""SQuAD-style reading-comprehension files, one paragraph (or article) to several questions:

- ``squad``: SQuAD v1.1 / v2.0 as ``rajpurkar/SQuAD-explorer`` publishes it, and the CMRC 2018
  train / dev files (``ymcui/cmrc2018``), which use the same layout: ``{"version", "data": [article]}``
  with ``article = {"title", "paragraphs": [{"context", "id"?, "qas": [{"id", "question",
  "answers": [{"text", "answer_start"}], "is_impossible"?}]}]}``;
- ``cmrc2018``: the CMRC 2018 trial file (``data/cmrc2018_trial.json``): a json array of paragraphs
  ``{"context_id", "title", "context_text", "qas": [{"query_id", "query_text", "answers": [str]}]}``.

Each question's evidence is its paragraph: found by the paragraph's id as a source id (a snapshot
built from the file's paragraphs keeps it), else by the page title and the paragraph's text (a
Wikipedia snapshot: the passage holding it). SQuAD v2.0's ``is_impossible`` questions become
unanswerable tasks. A question without text or answers is skipped and counted
(:class:`~.base.SkippedQuestion`; two of the trial file's 1,002 have an empty ``query_text``), the rest
of its paragraph imported. The paragraph text is not copied into ``extra`` (the snapshot holds it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import (EvidenceRef, FieldNames, QAFormat, RowError, SkippedQuestion,
                                                   SourceRow, answers_of, required_text)

__all__ = ["CMRC2018", "SQUAD"]


def _squad_rows(article: Mapping[str, Any], fields: FieldNames) -> Iterator[SourceRow | SkippedQuestion]:
    """The questions of one SQuAD article, in file order."""
    title = str(article.get("title") or "").strip()
    paragraphs = article.get("paragraphs")
    if not isinstance(paragraphs, list):
        raise RowError(f"'paragraphs' is {type(paragraphs).__name__}, not a list of {{'context', 'qas'}}", "paragraphs")
    for number, paragraph in enumerate(paragraphs):
        context = _paragraph_text(paragraph, "context", number)
        paragraph_id = str(paragraph.get("id") or "")
        for qa in _questions(paragraph, number):
            impossible = bool(qa.get("is_impossible"))
            try:
                answers = [] if impossible else answers_of([_answer_text(a) for a in qa.get("answers") or ()],
                                                           "answers")
                yield _row(qa.get("id"), required_text(qa, "question"), answers, title, paragraph_id, context,
                           answerable=not impossible)
            except RowError as error:
                yield _skipped(error, qa.get("id"))


def _cmrc_rows(paragraph: Mapping[str, Any], fields: FieldNames) -> Iterator[SourceRow | SkippedQuestion]:
    """The questions of one CMRC 2018 trial paragraph, in file order."""
    context = _paragraph_text(paragraph, "context_text", None)
    title = str(paragraph.get("title") or "").strip()
    for qa in _questions(paragraph, None):
        try:
            yield _row(qa.get("query_id"), required_text(qa, "query_text"), answers_of(qa.get("answers"), "answers"),
                       title, str(paragraph.get("context_id") or ""), context)
        except RowError as error:
            yield _skipped(error, qa.get("query_id"))


def _skipped(error: RowError, question_id: Any) -> SkippedQuestion:
    return SkippedQuestion(f"no_{error.field}", f"question {question_id!r}: field {error.field!r}: {error}")


def _row(question_id: Any, question: str, answers: list[str], title: str, paragraph_id: str, context: str,
         answerable: bool = True) -> SourceRow:
    evidence = [EvidenceRef(title=title, source_id=paragraph_id, text=context, subject=title or paragraph_id,
                            relation="paragraph", value=paragraph_id)]
    extra = {"title": title, "paragraph_id": paragraph_id} if paragraph_id else {"title": title}
    return SourceRow(source_id=None if question_id in (None, "") else str(question_id), question=question,
                     answers=answers, evidence=evidence, answerable=answerable, extra=extra)


def _paragraph_text(paragraph: Any, key: str, number: int | None) -> str:
    where = f"paragraphs[{number}]." if number is not None else ""
    if not isinstance(paragraph, Mapping):
        raise RowError(f"{where.rstrip('.') or 'the row'} is {str(paragraph)[:80]!r}, not a paragraph object", key)
    text = paragraph.get(key)
    if not isinstance(text, str) or not text.strip():
        raise RowError(f"no {where}{key} (the paragraph text)", key)
    return text


def _questions(paragraph: Mapping[str, Any], number: int | None) -> list[Mapping[str, Any]]:
    qas = paragraph.get("qas")
    where = f"paragraphs[{number}].qas" if number is not None else "qas"
    if not isinstance(qas, list) or not all(isinstance(qa, Mapping) for qa in qas):
        raise RowError(f"{where} is {str(qas)[:80]!r}, not a list of question objects", "qas")
    return qas


def _answer_text(answer: Any) -> Any:
    """``{"text": ..., "answer_start": ...}`` (SQuAD) or a bare string."""
    return answer.get("text") if isinstance(answer, Mapping) else answer


SQUAD = QAFormat("squad", "SQuAD v1.1/v2.0 and CMRC 2018 train/dev json: data [title, paragraphs [context, qas "
                 "[id, question, answers [text]]]]", lambda keys, fields: {"paragraphs", "title"} <= keys,
                 rows=_squad_rows)
CMRC2018 = QAFormat("cmrc2018", "CMRC 2018 trial json: [context_id, title, context_text, qas [query_id, query_text, "
                    "answers]]", lambda keys, fields: {"context_text", "qas"} <= keys, rows=_cmrc_rows)
