"""The ``search`` tool: BM25 search over the snapshot, one query or several.

The model sees a numbered list per query::

    Results for "marie curie":
    1. [doc 123] Marie Curie
       Marie Curie was a physicist and chemist ...

and ``data`` holds the same results structured. ``query`` may be a list of up to
:data:`MAX_QUERIES` queries (Tongyi DeepResearch's ``query: array``); results come
back per query, in the order given.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from stillweb.sandboxes.tools.types import Tool, ToolInputError, ToolResult, example_call

if TYPE_CHECKING:
    from stillweb.corpora.records import SearchResult
    from stillweb.corpora.snapshot import Snapshot

__all__ = ["SearchTool", "MAX_QUERIES", "TOOL_MAX_K", "TOOL_MAX_QUERY_CHARS", "DEFAULT_K"]

# What a policy's call may ask for: less than the engine allows (corpora.index MAX_K = 100 results,
# MAX_QUERY_CHARS = 2,000 characters read), so a page of results fits in a model's context.
MAX_QUERIES = 5
TOOL_MAX_K = 10
DEFAULT_K = 5
TOOL_MAX_QUERY_CHARS = 500

_QUERY_STRING = {"type": "string", "minLength": 1, "maxLength": TOOL_MAX_QUERY_CHARS}


class SearchTool(Tool):
    """Ranked full-text search returning doc ids, titles and snippets."""

    name = "search"
    description = (
        "Search the document collection (keyword/BM25 ranking). Returns up to k results per query, each with "
        "its doc id, title and a snippet; open a result with the open tool. "
        f"'query' can be one string or a list of up to {MAX_QUERIES} strings."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {
                "anyOf": [_QUERY_STRING, {"type": "array", "items": _QUERY_STRING, "minItems": 1, "maxItems": MAX_QUERIES}],
                "description": "Keywords to search for, or a list of such queries.",
            },
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": TOOL_MAX_K,
                "default": DEFAULT_K,
                "description": "Number of results per query.",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    example = {"query": "Marie Curie birthplace", "k": DEFAULT_K}

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def run(self, arguments: dict, presearched: Mapping[tuple[str, int], list[SearchResult]] | None = None) -> ToolResult:
        """Results for each query, as a numbered list (text) and as dicts (data).

        ``presearched`` holds results already searched for ``(query, k)`` pairs (see
        :meth:`searches`); other queries are searched here.
        """
        queries, k = _queries(arguments)
        if any(not q.strip() for q in queries):
            message = f"every query must contain a word. Example: {example_call(self.name, self.example)}"
            raise ToolInputError("bad_arguments", message)
        sections, data = [], []
        for q in queries:
            results = presearched[q, k] if presearched is not None and (q, k) in presearched else self.snapshot.search(q, k)
            sections.append(_render(q, results))
            data.append({"query": q, "results": [_as_dict(result) for result in results]})
        shown = tuple(dict.fromkeys(hit["doc_id"] for query in data for hit in query["results"]))
        return self.result("\n\n".join(sections), {"queries": data}, shown_docs=shown)


    def search_many(self, calls_arguments: Sequence[dict]) -> dict[tuple[str, int], list[SearchResult]]:
        """The results of every query of many (validated) calls, searched as one batch on every core
        (:meth:`Snapshot.search_many`), keyed by ``(query, k)`` for :meth:`run`."""
        by_k: dict[int, dict[str, None]] = {}
        for arguments in calls_arguments:
            queries, k = _queries(arguments)
            by_k.setdefault(k, {}).update((q, None) for q in queries if q.strip())
        presearched: dict[tuple[str, int], list[SearchResult]] = {}
        for k, queries in by_k.items():
            presearched.update(zip(((q, k) for q in queries), self.snapshot.search_many(list(queries), k)))
        return presearched


def _queries(arguments: dict) -> tuple[list[str], int]:
    query = arguments["query"]
    return ([query] if isinstance(query, str) else list(query)), arguments.get("k", DEFAULT_K)


def _render(query: str, results: list[SearchResult]) -> str:
    quoted = json.dumps(query, ensure_ascii=False)
    if not results:
        return f"No results for {quoted}. Try other or fewer keywords."
    lines = [f"Results for {quoted}:"]
    for rank, result in enumerate(results, 1):
        lines.append(f"{rank}. [doc {result.doc_id}] {result.title}")
        snippet = " ".join(result.snippet.split())
        if snippet:
            lines.append(f"   {snippet}")
    return "\n".join(lines)


def _as_dict(result: SearchResult) -> dict:
    return {"doc_id": result.doc_id, "source_id": result.source_id, "title": result.title, "score": result.score,
            "snippet": result.snippet}
