"""Evidence at a glance: in a replayed or hand-played episode, which documents the agent
was shown or opened are evidence for its task, and the gold answer beside the given one.

A task's evidence documents are the documents that state its facts (``evidence_docs``
and each evidence fact's ``doc_id``), the provenance KILT attaches to every answer
(Petroni et al., "KILT: a Benchmark for Knowledge Intensive Language Tasks", 2021):
the pages an agent has to find, not only the answer string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.sandboxes.formats.base import ParsedAction
from stillweb.sandboxes.tools.validation import doc_reference
from stillweb.server.viewer.pages import DOC_REFERENCE
from stillweb.server.viewer.tasks import TaskSetView

__all__ = ["TaskEvidence", "step_evidence", "OPEN_TOOLS"]

OPEN_TOOLS = ("open", "visit")  # the open tool and its alias: a successful call opens the document it names


@dataclass(frozen=True)
class TaskEvidence:
    """The evidence documents (doc id -> title) and gold answer of a recording's task, or
    ``problem`` saying why there are none (the task is not in the viewer's task set)."""

    snapshot: Snapshot
    task_id: str | None
    task: dict | None = None
    documents: dict[int, str] = field(default_factory=dict)
    problem: str | None = None

    @classmethod
    def of(cls, task_set: TaskSetView, task_id: str | None) -> TaskEvidence:
        """The evidence of ``task_id`` in ``task_set`` (never raises: an unknown task gets a ``problem``)."""
        task = task_set.by_id(task_id) if isinstance(task_id, str) else None
        if task is None:
            where = f"the viewer's task set {task_set.name!r}" if task_set.name else "the viewer (it has no task set)"
            return cls(task_set.snapshot, task_id, problem=f"task {task_id!r} is not in {where}: no evidence or gold answer to show "
                                        "(start the viewer with the --tasks set the recording used)")
        documents: dict[int, str] = {}
        for fact in task.get("evidence") or ():
            if isinstance(fact, dict) and type(fact.get("doc_id")) is int:
                documents.setdefault(fact["doc_id"], str(fact.get("doc_title") or ""))
        for doc_id in task.get("evidence_docs") or ():
            if type(doc_id) is int:
                documents.setdefault(doc_id, "")
        titled = {doc_id: title or _title(task_set.snapshot, doc_id) for doc_id, title in documents.items()}
        return cls(task_set.snapshot, task_id, task, dict(sorted(titled.items())))

    @property
    def ids(self) -> frozenset[int]:
        """The evidence doc ids."""
        return frozenset(self.documents)

    @property
    def gold(self) -> dict[str, Any] | None:
        """``{"answer", "aliases", "answerable"}`` of the task, or ``None`` when it is unknown."""
        if self.task is None:
            return None
        return {"answer": self.task.get("answer"), "aliases": list(self.task.get("aliases") or ()),
                "answerable": self.task.get("answerable", True) is not False}


def step_evidence(evidence: TaskEvidence, record: dict[str, Any], parsed: ParsedAction | None) -> dict[str, list]:
    """The evidence documents one recorded step ``shown`` (its ``info["shown_docs"]`` and the
    ``[doc N]`` its observation names) and ``opened`` (its successful ``open`` calls), as
    ``(doc_id, title)`` lists in the order the step met them."""
    info = record.get("info") if isinstance(record.get("info"), dict) else {}
    shown: dict[int, None] = {}
    listed = info.get("shown_docs")
    for item in listed if isinstance(listed, list) else ():
        doc_id = item.get("doc_id") if isinstance(item, dict) else item
        if type(doc_id) is int:
            shown.setdefault(doc_id)
    observation = record.get("observation")
    if isinstance(observation, str):
        shown.update((int(number), None) for number in DOC_REFERENCE.findall(observation))
    opened: dict[int, None] = {}
    flags = info.get("tool_flags") if isinstance(info.get("tool_flags"), list) else []
    for position, call in enumerate(parsed.calls if parsed is not None and parsed.error is None else ()):
        succeeded = position < len(flags) and flags[position] is None
        if call.name in OPEN_TOOLS and succeeded and isinstance(call.arguments, dict):
            document = _lookup(evidence.snapshot, call.arguments.get("doc"))
            if document is not None:
                opened.setdefault(document)
    return {kind: [(doc_id, evidence.documents[doc_id]) for doc_id in found if doc_id in evidence.documents]
            for kind, found in (("shown", shown), ("opened", opened))}


def _lookup(snapshot: Snapshot, doc: Any) -> int | None:
    """The doc id an ``open`` call's ``doc`` argument names (as the tool resolves it), or ``None``."""
    if not isinstance(doc, (int, str)) or isinstance(doc, bool):
        return None
    document = snapshot.lookup(doc_reference(doc))
    return document.doc_id if document is not None else None


def _title(snapshot: Snapshot, doc_id: int) -> str:
    return snapshot.title_of(doc_id) if 0 <= doc_id < len(snapshot) else f"(no doc {doc_id} in this snapshot)"
