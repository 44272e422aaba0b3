"""The document tools: ``open`` (alias ``visit``) reads a document page by page,
``find`` locates a phrase in it.

Documents are split into pages of at most :data:`PAGE_CHARS` characters by
:func:`paginate`, always the same way for the same text: a page ends at the last
paragraph break (blank line) inside the window, else the last line break, else
the last space, else exactly at the limit. A ``doc`` argument is a doc id (int,
or a numeric string, see :func:`stillweb.sandboxes.tools.validation.doc_reference`) or
a title; redirects and case-insensitive titles resolve through the snapshot.

In a passage-level snapshot (wiki-18, BEIR, a ``--passages`` build) several
documents share a page title. Opening that title reads all of them, in source
order, each headed ``[passage <doc id> | id <source id>]``; ``find`` searches
them together. Opening a doc id reads that one passage.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.search.chinese import fold_to_simplified
from stillweb.sandboxes.tools.types import Tool, ToolInputError, ToolResult, example_call, preview
from stillweb.sandboxes.tools.validation import doc_reference

if TYPE_CHECKING:
    from stillweb.corpora.snapshot.reading import Document, Snapshot

__all__ = ["OpenTool", "FindTool", "paginate", "resolve_document", "DOC_SCHEMA", "PAGE_CHARS"]

PAGE_CHARS = 2000
MAX_FIND_MATCHES = 10
FIND_CONTEXT_CHARS = 120
NEAREST_TITLES = 5
MAX_TITLE_CHARS = 300
MAX_DOC_ID = 2**31 - 1

DOC_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 0, "maximum": MAX_DOC_ID},
        {"type": "string", "minLength": 1, "maxLength": MAX_TITLE_CHARS},
    ],
    "description": "The document: its doc id (as shown in search results, e.g. 123) or its exact title.",
}


def paginate(text: str, page_chars: int = PAGE_CHARS) -> list[int]:
    """Start offsets of the pages of ``text`` (always at least one page, starting at 0)."""
    check_positive_int("page_chars", page_chars)
    starts, start = [0], 0
    min_fill = max(1, page_chars // 4)  # a break must leave the page at least this full
    while len(text) - start > page_chars:
        window_end = start + page_chars
        cut = window_end
        for separator in ("\n\n", "\n", " "):
            position = text.rfind(separator, start + min_fill, window_end)
            if position != -1:
                cut = position + len(separator)
                break
        starts.append(cut)
        start = cut
    return starts


def resolve_document(snapshot: Snapshot, doc: int | str) -> Document:
    """The document ``doc`` names; raises a ``not_found`` :class:`ToolInputError` with the nearest titles."""
    reference = doc_reference(doc)
    document = snapshot.lookup(reference)
    if document is not None:
        return document
    if isinstance(reference, int):
        message = (
            f"No document has id {reference} (ids run from 0 to {len(snapshot) - 1}). "
            "Use the doc ids shown by search, or give an exact title."
        )
        raise ToolInputError("not_found", message, {"doc": reference, "nearest_titles": []})
    nearest = snapshot.nearest_titles(reference, NEAREST_TITLES)
    suggestions = "; ".join(f'"{title}"' for title in nearest) if nearest else "none"
    message = (
        f"No document is titled {preview(reference)}. Nearest titles: {suggestions}. "
        "Give an exact title or a doc id from search results."
    )
    raise ToolInputError("not_found", message, {"doc": reference, "nearest_titles": list(nearest)})


def _header(document: Document, doc: int | str, passages: list[int]) -> str:
    header = f"[doc {document.doc_id}] {document.title}"
    reference = doc_reference(doc)
    if len(passages) > 1 and isinstance(reference, str):
        header += f" ({len(passages)} passages)"
    elif len(passages) > 1:
        header += f" (passage {passages.index(document.doc_id) + 1} of {len(passages)} with this title; open the title to read all)"
    if isinstance(reference, str) and reference != document.title:
        header += f" (resolved from {preview(reference)})"
    return header


def _reading(snapshot: Snapshot, document: Document, doc: int | str) -> tuple[str, list[int]]:
    """The text to read for ``doc`` and the doc ids of its title's passages: a title
    names all its passages (joined in source order), a doc id only itself."""
    passages = snapshot.passages_of(document.doc_id)
    if len(passages) == 1 or not isinstance(doc_reference(doc), str):
        return document.text, passages
    parts = []
    for doc_id in passages:
        source_id = snapshot.source_id_of(doc_id)
        label = f"[passage {doc_id}" + (f" | id {source_id}]" if source_id else "]")
        parts.append(f"{label}\n{snapshot.get(doc_id).text}")
    return "\n\n".join(parts), passages


@dataclass(frozen=True)
class _Pages:
    """A document's text and page boundaries."""

    text: str
    starts: list[int]

    @classmethod
    def of(cls, text: str) -> _Pages:
        return cls(text, paginate(text))

    def __len__(self) -> int:
        return len(self.starts)

    def page(self, number: int) -> str:
        end = self.starts[number] if number < len(self.starts) else len(self.text)
        return self.text[self.starts[number - 1] : end]

    def locate(self, offset: int) -> tuple[int, int]:
        """(page number, offset within that page) of a character offset in the text."""
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index]


class OpenTool(Tool):
    """Read a document, one page of about 2,000 characters at a time."""

    name = "open"
    aliases = ("visit",)
    description = (
        "Open a document by doc id or exact title and read one page of it (about 2,000 characters). "
        "Long documents have several pages; the result says 'page i of n' and how to read the next one."
    )
    parameters = {
        "type": "object",
        "properties": {
            "doc": DOC_SCHEMA,
            "page": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 1, "description": "Page number, from 1."},
        },
        "required": ["doc"],
        "additionalProperties": False,
    }
    example = {"doc": 12, "page": 1}

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def run(self, arguments: dict) -> ToolResult:
        """The requested page of the document, with 'page i of n' and how to read on."""
        document = resolve_document(self.snapshot, arguments["doc"])
        text, passages = _reading(self.snapshot, document, arguments["doc"])
        pages = _Pages.of(text)
        number = arguments.get("page", 1)
        reopen = _reopen(passages, arguments["doc"], document)
        if number > len(pages):
            message = (
                f"page {number} is out of range: [doc {document.doc_id}] {document.title} has pages 1 to {len(pages)}. "
                f"Example: {example_call(self.name, {'doc': reopen, 'page': len(pages)})}"
            )
            raise ToolInputError("bad_arguments", message, {"doc_id": document.doc_id, "pages": len(pages)},
                                 shown_docs=_shown(passages, arguments["doc"], document))
        content = pages.page(number)
        position = f"Page {number} of {len(pages)}."
        if number < len(pages):
            following = example_call(self.name, {"doc": reopen, "page": number + 1})
            position += f" Next page: {following}"
        else:
            position += " End of document."
        text = f"{_header(document, arguments['doc'], passages)}\n{position}\n---\n{content.strip()}\n---\n{position}"
        data = {
            "doc_id": document.doc_id,
            "source_id": document.source_id,
            "passages": _passage_list(self.snapshot, passages),
            "title": document.title,
            "url": document.url,
            "page": number,
            "pages": len(pages),
            "content": content,
        }
        return self.result(text, data, shown_docs=_shown(passages, arguments["doc"], document), opened_doc=document.doc_id)


class FindTool(Tool):
    """Find the lines of a document that contain a phrase (case-insensitive; on a Chinese snapshot,
    traditional and simplified characters alike)."""

    name = "find"
    description = (
        "Find where a phrase occurs in a document (plain text, case-insensitive). Returns the matching lines "
        f"with their page number and character offset in that page, at most {MAX_FIND_MATCHES}."
    )
    parameters = {
        "type": "object",
        "properties": {
            "doc": DOC_SCHEMA,
            "pattern": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The phrase to look for."},
        },
        "required": ["doc", "pattern"],
        "additionalProperties": False,
    }
    example = {"doc": 12, "pattern": "born"}

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def run(self, arguments: dict) -> ToolResult:
        """The matching lines with (page, offset) positions, capped with a note."""
        document = resolve_document(self.snapshot, arguments["doc"])
        pattern = arguments["pattern"]
        if not pattern.strip():
            raise ToolInputError(
                "bad_arguments",
                f"argument 'pattern' must contain a non-space character. Example: {example_call(self.name, self.example)}",
            )
        text, passages = _reading(self.snapshot, document, arguments["doc"])
        pages = _Pages.of(text)
        # A snapshot of a CJK language finds 中国 in 中國 too, as its search does (one character for one: same offsets).
        shown, total = _matching_lines(pages, pattern, MAX_FIND_MATCHES, fold=self.snapshot.analyzer is not None)
        header = _header(document, arguments["doc"], passages)
        if not shown:
            text = f"No line of {header} ({len(pages)} pages) contains {json.dumps(pattern, ensure_ascii=False)}."
        else:
            lines = [f"{i}. page {m['page']}, char {m['offset']}: {m['line']}" for i, m in enumerate(shown, 1)]
            text = f"{total} line(s) of {header} ({len(pages)} pages) contain {json.dumps(pattern, ensure_ascii=False)}:\n"
            text += "\n".join(lines)
            if total > len(shown):
                text += f"\n(showing the first {len(shown)} of {total}; use a longer phrase to narrow down)"
            reopen = _reopen(passages, arguments["doc"], document)
            text += f"\nRead around a match with {example_call('open', {'doc': reopen, 'page': shown[0]['page']})}"
        data = {"doc_id": document.doc_id, "source_id": document.source_id, "title": document.title,
                "pattern": pattern, "total": total, "matches": shown}
        return self.result(text, data, shown_docs=_shown(passages, arguments["doc"], document))


def _combined(passages: list[int], doc: int | str) -> bool:
    """Whether ``doc`` (a title) reads several passages as one document."""
    return len(passages) > 1 and isinstance(doc_reference(doc), str)


def _shown(passages: list[int], doc: int | str, document: Document) -> tuple[int, ...]:
    """The doc ids a page of ``open``/``find`` names: every passage of a title read whole, else the one document."""
    return tuple(passages) if _combined(passages, doc) else (document.doc_id,)


def _reopen(passages: list[int], doc: int | str, document: Document) -> int | str:
    """The ``doc`` argument that reads the same text again: the title for passages read whole, else the doc id."""
    return document.title if _combined(passages, doc) else document.doc_id


def _passage_list(snapshot: Snapshot, passages: list[int]) -> list[dict]:
    """``[{"doc_id", "source_id"}]`` of a title's passages (empty for a single document)."""
    if len(passages) == 1:
        return []
    return [{"doc_id": doc_id, "source_id": snapshot.source_id_of(doc_id)} for doc_id in passages]


def _matching_lines(pages: _Pages, pattern: str, limit: int, fold: bool = False) -> tuple[list[dict], int]:
    """The first ``limit`` lines containing ``pattern`` (page, offset of the first match, excerpt), and the total count;
    ``fold``: traditional Chinese characters match their simplified forms."""
    text, shown, total, line_end = pages.text, [], 0, -1
    haystack, needle = (fold_to_simplified(text), fold_to_simplified(pattern)) if fold else (text, pattern)
    for match in re.finditer(re.escape(needle), haystack, flags=re.IGNORECASE):
        if match.start() < line_end:
            continue
        line_end = text.find("\n", match.end())
        line_end = len(text) if line_end == -1 else line_end
        total += 1
        if len(shown) < limit:
            line_start = text.rfind("\n", 0, match.start()) + 1
            page, offset = pages.locate(match.start())
            excerpt = _excerpt(text, line_start, line_end, match.start(), match.end())
            shown.append({"page": page, "offset": offset, "line": excerpt})
    return shown, total


def _excerpt(text: str, line_start: int, line_end: int, match_start: int, match_end: int) -> str:
    start = max(line_start, match_start - FIND_CONTEXT_CHARS)
    end = min(line_end, match_end + FIND_CONTEXT_CHARS)
    prefix = "..." if start > line_start else ""
    suffix = "..." if end < line_end else ""
    return prefix + text[start:end].strip() + suffix
