"""The task record: one typed :class:`TaskRecord` for the generator, the task files,
the exports and the environments (docs/interfaces-tasks.md, "Task records").

A record carries the question, answer and aliases, the evidence in solving
order (each fact with the doc whose plaintext states it), the WebShaper
formalization and its canonical hash, and the difficulty descriptors (hops,
constraints, candidates per hop, level, shape). Generated records fill every
field; records from other sources (a jsonl file, a list of dicts) need only
``question`` and ``answer``, and keep their other keys in ``extra``.

In parquet every field is a typed column (:data:`TASKS_SCHEMA`, lists as
Arrow lists). Task sets written before the typed columns stored the list
fields as JSON strings; :meth:`TaskRecord.from_dict` reads both.

To add a field: add it to :class:`TaskRecord` with a default and its Arrow
type (``_column(pa.<type>, default)``); the schema, rows and dicts follow.

>>> task = TaskRecord.from_dict({"question": "Capital of France?", "answer": "Paris", "aliases": '["paris"]'})
>>> task.golds, len(task.task_id)
(('Paris', 'paris'), 16)
>>> TaskRecord.from_dict(task.to_row()) == task
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import pyarrow as pa

from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import stable_hash
from stillweb.corpora.tasks.answer_match import check_answer_match
from stillweb.corpora.tasks.prove.emptiness import EMPTINESS_PROOF_TYPE, EmptinessProof
from stillweb.corpora.tasks.store.import_check import IMPORT_CHECK_TYPE, ImportCheck

__all__ = ["EvidenceItem", "Obfuscation", "TaskRecord", "TASKS_SCHEMA", "TASK_FIELDS"]


def _column(arrow_type: pa.DataType, default: Any = None) -> Any:
    """A dataclass field stored as a parquet column of ``arrow_type``."""
    return field(default=default, metadata={"arrow": arrow_type})


@dataclass(frozen=True)
class EvidenceItem:
    """One fact on the solving path: ``subject --relation--> value``, stated in ``doc_id`` (-1: unknown)."""

    subject: str
    relation: str
    value: str
    doc_id: int = -1
    doc_title: str = ""

    @classmethod
    def from_dict(cls, item: Mapping[str, Any] | str) -> "EvidenceItem":
        """An evidence item from its dict (or the JSON of one)."""
        item = json.loads(item) if isinstance(item, str) else item
        doc_id = item.get("doc_id")
        return cls(
            subject=str(item.get("subject") or ""),
            relation=str(item.get("relation") or ""),
            value=str(item.get("value") or ""),
            doc_id=int(doc_id) if doc_id is not None else -1,
            doc_title=str(item.get("doc_title") or ""),
        )

    def to_dict(self) -> dict[str, Any]:
        """The item as a plain dict (the keys of the task files)."""
        return {"subject": self.subject, "relation": self.relation, "value": self.value,
                "doc_id": self.doc_id, "doc_title": self.doc_title}


@dataclass(frozen=True)
class Obfuscation:
    """How one constant was obfuscated (WebShaper-style): a value to a period or range,
    or an entity to a description; ``original`` can be restored from it."""

    kind: str
    relation: str
    original: str
    obfuscated: str
    variable: str | None = None  # entity_to_description: the variable that replaced the entity
    low: float | None = None  # date_to_period / number_to_range bounds (years are ints)
    high: float | None = None

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> "Obfuscation":
        """A transform from its dict (keys absent or None are left out)."""
        low, high = item.get("low"), item.get("high")
        if item.get("kind") == "date_to_period":  # years: ints whatever the storage
            low, high = (int(v) if v is not None else None for v in (low, high))
        return cls(str(item["kind"]), str(item["relation"]), str(item["original"]), str(item["obfuscated"]),
                   item.get("variable"), low, high)

    def to_dict(self) -> dict[str, Any]:
        """The transform as the dict the generator made (no None-valued keys)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


_EVIDENCE_TYPE = pa.struct([("subject", pa.string()), ("relation", pa.string()), ("value", pa.string()),
                            ("doc_id", pa.int32()), ("doc_title", pa.string())])
_OBFUSCATION_TYPE = pa.struct([("kind", pa.string()), ("relation", pa.string()), ("original", pa.string()),
                               ("obfuscated", pa.string()), ("variable", pa.string()),
                               ("low", pa.float64()), ("high", pa.float64())])


@dataclass(frozen=True)
class TaskRecord:
    """A question with its gold answer(s), the evidence that proves it, and how it was made."""

    task_id: str = _column(pa.string(), "")
    question: str = _column(pa.string(), "")
    answer: str = _column(pa.string(), "")
    aliases: tuple[str, ...] = _column(pa.list_(pa.string()), ())
    evidence: tuple[EvidenceItem, ...] = _column(pa.list_(_EVIDENCE_TYPE), ())
    evidence_docs: tuple[int, ...] = _column(pa.list_(pa.int32()), ())
    formalization: tuple[tuple[str, ...], ...] = _column(pa.list_(pa.list_(pa.string())), ())
    hops: int | None = _column(pa.int32())
    constraints: int | None = _column(pa.int32())
    candidates_per_hop: tuple[int, ...] = _column(pa.list_(pa.int32()), ())
    level: int | None = _column(pa.int32())
    shape: str | None = _column(pa.string())
    obfuscations: tuple[Obfuscation, ...] = _column(pa.list_(_OBFUSCATION_TYPE), ())
    oracle_steps: int | None = _column(pa.int32())  # the reference agent's steps, once verified
    split: str | None = _column(pa.string())
    canonical_hash: str | None = _column(pa.string())
    answer_doc: int | None = _column(pa.int32())
    answerable: bool = _column(pa.bool_(), True)  # False: no document answers it; the right move is to abstain
    emptiness_proof: EmptinessProof | None = _column(EMPTINESS_PROOF_TYPE)  # why an unanswerable task has no answer
    source: str | None = _column(pa.string())  # imported tasks: the source format (``tasks import``)
    answer_match: str | None = _column(pa.string())  # the outcome's match rule (None: stillweb's own)
    solvability: ImportCheck | None = _column(IMPORT_CHECK_TYPE)  # imported tasks: what was checked
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # keys of other sources

    @property
    def golds(self) -> tuple[str, ...]:
        """The answer followed by its aliases (none for an unanswerable task)."""
        return (self.answer, *self.aliases) if self.answerable else ()

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> "TaskRecord":
        """A record from a dict: a parquet row (typed or JSON-string lists), a jsonl line, or user input.

        ``question`` and ``answer`` are required (``ValueError`` naming what is
        missing), except that an unanswerable task (``"answerable": false``) has
        an empty answer; ``task_id`` defaults to a stable hash of both; ``evidence_docs``
        to the evidence's documents; unknown keys go to ``extra``.

        >>> TaskRecord.from_dict({"question": "q", "answer": "a", "evidence": '[{"doc_id": 4}]'}).evidence_docs
        (4,)
        """
        if isinstance(record, TaskRecord):
            return record
        answerable = record.get("answerable") is not False  # absent (older sets): answerable
        missing = [key for key in ("question", "answer") if not record.get(key) and (answerable or key == "question")]
        if missing:
            raise UsageError(f"task record lacks {missing}: {dict(record)!r:.200}")
        if not answerable and record.get("answer"):
            raise UsageError(f"an unanswerable task has no answer, got {record['answer']!r}: {dict(record)!r:.200}")
        question, answer = str(record["question"]), str(record.get("answer") or "")
        evidence = tuple(EvidenceItem.from_dict(item) for item in _as_list(record.get("evidence")))
        evidence_docs = tuple(int(doc) for doc in _as_list(record.get("evidence_docs")))
        if not evidence_docs:
            evidence_docs = tuple(dict.fromkeys(item.doc_id for item in evidence if item.doc_id >= 0))
        return cls(
            task_id=str(record.get("task_id") or stable_hash(question + "\x1f" + answer)),
            question=question,
            answer=answer,
            aliases=tuple(str(alias) for alias in _as_list(record.get("aliases"))),
            evidence=evidence,
            evidence_docs=evidence_docs,
            formalization=tuple(tuple(triple) for triple in _as_list(record.get("formalization"))),
            hops=_int_or_none(record.get("hops")),
            constraints=_int_or_none(record.get("constraints")),
            candidates_per_hop=tuple(int(n) for n in _as_list(record.get("candidates_per_hop"))),
            level=_int_or_none(record.get("level")),
            shape=record.get("shape"),
            obfuscations=tuple(Obfuscation.from_dict(item) for item in _as_list(record.get("obfuscations"))),
            oracle_steps=_int_or_none(record.get("oracle_steps")),
            split=record.get("split"),
            canonical_hash=record.get("canonical_hash"),
            answer_doc=_int_or_none(record.get("answer_doc")),
            answerable=answerable,
            emptiness_proof=_emptiness_proof(record.get("emptiness_proof")),
            source=record.get("source"),
            answer_match=None if record.get("answer_match") is None else check_answer_match(record["answer_match"]),
            solvability=_import_check(record.get("solvability")),
            extra=_extra(record),
        )

    def to_row(self) -> dict[str, Any]:
        """The record's typed fields as plain values (one parquet row of :data:`TASKS_SCHEMA`)."""
        return {
            "task_id": self.task_id,
            "question": self.question,
            "answer": self.answer,
            "aliases": list(self.aliases),
            "evidence": [item.to_dict() for item in self.evidence],
            "evidence_docs": list(self.evidence_docs),
            "formalization": [list(triple) for triple in self.formalization],
            "hops": self.hops,
            "constraints": self.constraints,
            "candidates_per_hop": list(self.candidates_per_hop),
            "level": self.level,
            "shape": self.shape,
            "obfuscations": [item.to_dict() for item in self.obfuscations],
            "oracle_steps": self.oracle_steps,
            "split": self.split,
            "canonical_hash": self.canonical_hash,
            "answer_doc": self.answer_doc,
            "answerable": self.answerable,
            "emptiness_proof": self.emptiness_proof.to_dict() if self.emptiness_proof is not None else None,
            "source": self.source,
            "answer_match": self.answer_match,
            "solvability": self.solvability.to_dict() if self.solvability is not None else None,
            "extra": json.dumps(dict(self.extra), ensure_ascii=False, sort_keys=True) if self.extra else None,
        }

    def to_dict(self) -> dict[str, Any]:
        """The whole record as plain JSON values: ``extra`` keys, then the typed fields."""
        row = self.to_row()
        del row["extra"]
        return {**self.extra, **row}


# ``extra`` (the source's other keys) is one JSON-string column, null when empty.
TASKS_SCHEMA = pa.schema([*((f.name, f.metadata["arrow"]) for f in fields(TaskRecord) if "arrow" in f.metadata),
                          ("extra", pa.string())])
TASK_FIELDS = tuple(TASKS_SCHEMA.names)
_FIELD_NAMES = frozenset(TASK_FIELDS)


def _as_list(value: Any) -> list:
    """A list from a list/tuple/array, a JSON string of a list (task sets before typed columns), or nothing."""
    if value is None:
        return []
    if isinstance(value, str):
        return list(json.loads(value)) if value.strip() else []
    return list(value)


def _emptiness_proof(value: Any) -> EmptinessProof | None:
    if value is None or isinstance(value, EmptinessProof):
        return value
    return EmptinessProof.from_dict(json.loads(value) if isinstance(value, str) else value)


def _import_check(value: Any) -> ImportCheck | None:
    if value is None or isinstance(value, ImportCheck):
        return value
    return ImportCheck.from_dict(json.loads(value) if isinstance(value, str) else value)


def _extra(record: Mapping[str, Any]) -> dict[str, Any]:
    """The keys that are no field, and those stored in the ``extra`` column (a JSON string or a dict)."""
    stored = record.get("extra")
    stored = json.loads(stored) if isinstance(stored, str) else dict(stored or {})
    others = {key: _json_ready(value) for key, value in record.items() if key not in _FIELD_NAMES}
    return {**stored, **others}


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _json_ready(value: Any) -> Any:
    """Values as plain JSON types (numpy arrays from parquet become lists)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    return value
