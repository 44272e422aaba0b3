"""The ``search`` tool: BM25 search over the snapshot, one query or several.

The model sees a numbered list per query::

    Results for "marie curie":
    1. [doc 123] Marie Curie
       Marie Curie was a physicist and chemist ...

and ``data`` holds the same results structured. ``query`` may be a list of up to
:data:`MAX_QUERIES` queries (Tongyi DeepResearch's ``query: array``); results come
back per query, in the order given.

On a snapshot with a dense index (``stillweb build dense``) the tool also takes
``retriever``: ``"bm25"`` (the default), ``"dense"`` or ``"hybrid"``
(:meth:`Snapshot.search`'s modes). Elsewhere its schema and description are
exactly those of a BM25-only tool, so existing prompts stay byte-identical.

An environment may set :attr:`SearchTool.settings` for an episode
(:mod:`~stillweb.sandboxes.tools.retrieval`): a retrieval ablation (``golden``, ``none``, a fixed
ranking) and seeded noise, applied to every query's page of results.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from stillweb.corpora.search.dense import SEARCH_MODES
from stillweb.corpora.search.embeddings import EmbeddingsError, QueryNotRecorded
from stillweb.corpora.errors import DataError
from stillweb.sandboxes.tools.retrieval import SearchSettings, add_noise, golden_first
from stillweb.sandboxes.tools.types import Tool, ToolInputError, ToolResult, example_call

if TYPE_CHECKING:
    from stillweb.corpora.snapshot.records import SearchResult
    from stillweb.corpora.snapshot.reading import Snapshot

__all__ = ["SearchTool", "MAX_QUERIES", "TOOL_MAX_K", "TOOL_MAX_QUERY_CHARS", "DEFAULT_K"]

# What a policy's call may ask for: less than the engine allows (corpora.search.index MAX_K = 100 results,
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
        self.settings = SearchSettings()  # the episode's ablation and noise (an environment sets them)
        if snapshot.dense_info is not None:  # offered only where it can work: other schemas stay as they were
            self.description = self.description + DENSE_DESCRIPTION
            self.parameters = {**self.parameters, "properties": {**self.parameters["properties"], "retriever": RETRIEVER}}

    def run(self, arguments: dict, presearched: Mapping[tuple[str, int, str], list[SearchResult]] | None = None) -> ToolResult:
        """Results for each query, as a numbered list (text) and as dicts (data).

        ``presearched`` holds results already searched for ``(query, k, retriever)``
        (see :meth:`search_many`); other queries are searched here.
        """
        queries, k, mode = _queries(arguments)
        if any(not q.strip() for q in queries):
            message = f"every query must contain a word. Example: {example_call(self.name, self.example)}"
            raise ToolInputError("bad_arguments", message)
        settings = self.settings
        mode = _ranking(settings.retrieval, mode)
        sections, data = [], []
        for q in queries:
            if settings.retrieval == "none":
                results = []
            elif presearched is not None and (q, k, mode) in presearched:
                results = presearched[q, k, mode]
            else:
                results = self._search(q, k, mode)
            if settings.retrieval == "golden":
                results = golden_first(self.snapshot, q, k, settings.golden_docs, results)
            results = add_noise(self.snapshot, q, results, settings)
            sections.append(_render(q, results))
            data.append({"query": q, "results": [_as_dict(result) for result in results]})
        shown = tuple(dict.fromkeys(hit["doc_id"] for query in data for hit in query["results"]))
        return self.result("\n\n".join(sections), {"queries": data}, shown_docs=shown)


    def _search(self, query: str, k: int, mode: str) -> list[SearchResult]:
        """One search; a query embedding that cannot be had is an error observation, never another ranking."""
        try:
            return self.snapshot.search(query, k, mode)
        except QueryNotRecorded as error:
            raise ToolInputError("not_recorded", f"{error} (query {json.dumps(query, ensure_ascii=False)})") from None
        except EmbeddingsError as error:
            raise ToolInputError("unavailable", f"the {mode} retriever is unavailable: {error}; "
                                                "retry, or search with retriever='bm25'") from None
        except DataError as error:
            raise ToolInputError("tool_error", f"the {mode} retriever failed: {error}") from None

    def search_many(self, calls_arguments: Sequence[dict]) -> dict[tuple[str, int, str], list[SearchResult]]:
        """The results of every BM25 query of many (validated) calls, searched as one batch on every core
        (:meth:`Snapshot.search_many`), keyed by ``(query, k, retriever)`` for :meth:`run` (dense and hybrid
        queries are searched by :meth:`run`, where a missing embedding becomes that call's observation)."""
        by_k: dict[int, dict[str, None]] = {}
        if self.settings.retrieval == "none":  # nothing is searched
            return {}
        for arguments in calls_arguments:
            queries, k, mode = _queries(arguments)
            if _ranking(self.settings.retrieval, mode) == "bm25":
                by_k.setdefault(k, {}).update((q, None) for q in queries if q.strip())
        presearched: dict[tuple[str, int, str], list[SearchResult]] = {}
        for k, queries in by_k.items():
            presearched.update(zip(((q, k, "bm25") for q in queries), self.snapshot.search_many(list(queries), k)))
        return presearched


DENSE_DESCRIPTION = (" 'retriever' chooses the ranking: 'bm25' (keywords, the default), 'dense' (embeddings: meaning "
                     "over exact words) or 'hybrid' (both fused).")
RETRIEVER = {"type": "string", "enum": list(SEARCH_MODES), "default": "bm25",
             "description": "Ranking: bm25 (keywords), dense (embeddings) or hybrid (both fused)."}


def _ranking(retrieval: str | None, asked: str) -> str:
    """The ranking a search runs: a fixed one of the episode's ablation, else what the call asked
    (``golden`` puts the evidence before the BM25 ranking)."""
    if retrieval in SEARCH_MODES:
        return retrieval
    return "bm25" if retrieval == "golden" else asked


def _queries(arguments: dict) -> tuple[list[str], int, str]:
    query = arguments["query"]
    return ([query] if isinstance(query, str) else list(query)), arguments.get("k", DEFAULT_K), \
        arguments.get("retriever", "bm25")


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
