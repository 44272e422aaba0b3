"""The ``answer`` tool: the agent's final answer, with the documents it cites, or an abstention.

Calling it ends the episode (``terminal=True``). ``{"abstain": true, "text": "<what
the sources lack>"}`` abstains: the agent says the snapshot does not hold the
answer (the right move on an unanswerable task, and only there: see
``stillweb.envs.scoring.rewards``); ``text`` is then the reason, never scored as an answer. Citations are doc ids or
titles; each is resolved against the snapshot and reported with its doc id and
title, or marked ``found: false`` when nothing matches (an unknown citation is
not an error: the reward decides what it costs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stillweb.sandboxes.tools.types import Tool, ToolResult, preview
from stillweb.sandboxes.tools.validation import doc_reference

if TYPE_CHECKING:
    from stillweb.corpora.snapshot.reading import Snapshot

__all__ = ["AnswerTool", "resolve_citations", "MAX_CITATIONS"]

MAX_ANSWER_CHARS = 5_000
MAX_CITATIONS = 20


def resolve_citations(snapshot: Snapshot, citations: list[int | str]) -> list[dict]:
    """``{"ref", "doc_id", "title", "found"}`` for each citation, in the order given."""
    resolved = []
    for ref in citations:
        document = snapshot.lookup(doc_reference(ref))
        if document is None:
            resolved.append({"ref": ref, "doc_id": None, "title": None, "found": False})
        else:
            resolved.append({"ref": ref, "doc_id": document.doc_id, "title": document.title, "found": True})
    return resolved


class AnswerTool(Tool):
    """Give the final answer (ends the episode), optionally citing documents."""

    name = "answer"
    description = (
        "Give your final answer and end the task. Keep it short (a name, number, date...). "
        "Optionally cite the documents that support it by doc id or title. If, after searching, the "
        'documents do not contain the answer, abstain instead: {"abstain": true, "text": "<what is missing>"}.'
    )
    parameters = {
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "maxLength": MAX_ANSWER_CHARS,
                "description": "The final answer (when abstaining: what the documents do not say).",
            },
            "abstain": {
                "type": "boolean",
                "default": False,
                "description": "true: the documents do not contain the answer, so none is given.",
            },
            "citations": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"type": "integer", "minimum": 0, "maximum": 2**31 - 1},
                        {"type": "string", "minLength": 1, "maxLength": 300},
                    ]
                },
                "maxItems": MAX_CITATIONS,
                "default": [],
                "description": "Doc ids or titles of the supporting documents.",
            },
        },
        "required": ["text"],
        "additionalProperties": False,
    }
    example = {"text": "1867", "citations": [12]}

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def run(self, arguments: dict) -> ToolResult:
        """Record the answer; ``data`` = ``{"answer", "abstained", "citations": [resolved...]}``."""
        citations = resolve_citations(self.snapshot, arguments.get("citations", []))
        abstained = bool(arguments.get("abstain", False))
        text = f"Abstained: {arguments['text']}" if abstained else f"Final answer: {arguments['text']}"
        if citations:
            shown = [f"[doc {c['doc_id']}] {c['title']}" if c["found"] else f"{preview(c['ref'])} (not found)" for c in citations]
            text += "\nCitations: " + "; ".join(shown)
        return ToolResult(
            name=self.name, text=text, data={"answer": arguments["text"], "abstained": abstained, "citations": citations}, terminal=True
        )
