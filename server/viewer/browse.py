"""Snapshot pages: the home page, search with the agent's own tool, and documents
with their facts, links, redirects and source id."""

from __future__ import annotations

import copy
from functools import cached_property
from urllib.parse import urlencode

import pyarrow as pa
import pyarrow.compute as pc
from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse

from stillweb.corpora.snapshot.manifest import read_snapshot_table
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.search.index import MAX_K, MAX_QUERY_CHARS, matching_spans
from stillweb.sandboxes import ToolRegistry
from stillweb.sandboxes.tools.search import DEFAULT_K, TOOL_MAX_K
from stillweb.sandboxes.tools.validation import doc_reference
from stillweb.sandboxes.tools.types import ToolCall, ToolResult
from stillweb.server.tools import SnapshotCatalog
from stillweb.server.viewer.pages import FIRST_MATCH, error_page, render

__all__ = ["router", "DocumentGraph", "PageSearch", "is_synthetic"]

MAX_LISTED_LINKS = 200


class DocumentGraph:
    """The link and redirect neighbourhood of documents (tables read once, filtered with Arrow)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    @cached_property
    def _links(self) -> pa.Table:
        path = self.snapshot.path / "links.parquet"
        return read_snapshot_table(path) if path.is_file() else pa.table({"source": pa.array([], pa.int32()), "target": pa.array([], pa.int32())})

    def links(self, doc_id: int, column: str, other: str) -> list[int]:
        """Doc ids at ``other`` of links whose ``column`` is ``doc_id``, ascending and distinct."""
        table = self._links.filter(pc.equal(self._links.column(column), doc_id))
        return sorted(set(table.column(other).to_pylist()))

    def aliases(self, doc_id: int) -> list[str]:
        """The redirect titles that lead to ``doc_id``, sorted."""
        return sorted(alias for alias, target in self.snapshot.redirects.items() if target == doc_id)


class PageSearch:
    """The agent's ``search`` tool for the search page, with ``k`` up to the engine's ``MAX_K``.

    While ``k`` is one a policy may ask for (``TOOL_MAX_K``) the call goes through the
    agent's registry unchanged; past it, through a registry offering a copy of that tool
    (sharing its snapshot) under the same schema but for ``k``'s maximum, so validation,
    ranking, snippets and text stay the tool's own (the registry only wraps
    :meth:`SearchTool.run` in validation).
    """

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        tool = copy.copy(registry.tool("search"))
        schema = tool.parameters
        tool.parameters = {**schema, "properties": {**schema["properties"], "k": {**schema["properties"]["k"], "maximum": MAX_K}}}
        self.engine_k = ToolRegistry.from_tools([tool])

    def __call__(self, query: str, k: int) -> ToolResult:
        """The search tool's result for ``query`` with ``k`` results."""
        registry = self.registry if k <= TOOL_MAX_K else self.engine_k
        return registry.call(ToolCall("search", {"query": query, "k": k}))


def is_synthetic(snapshot: Snapshot) -> bool:
    """True for a snapshot of the seeded synthetic world: its documents describe no real page
    (snapshots built before URLs stopped being made up still store en.wikipedia.org ones)."""
    source = snapshot.manifest.get("source")
    return isinstance(source, dict) and source.get("kind") == "synthetic"


def router(catalog: SnapshotCatalog) -> APIRouter:
    """The home, search and document pages."""
    snapshot = catalog.snapshot()
    search_tool = PageSearch(catalog.registry())
    graph = DocumentGraph(snapshot)
    pages = APIRouter(include_in_schema=False)

    @pages.get("/", response_class=HTMLResponse)
    def home() -> HTMLResponse:
        return render("home.html", snapshot=snapshot, name=catalog.default_name, manifest=snapshot.manifest)

    @pages.get("/search", response_class=HTMLResponse)
    def search(q: str = Query(default="", max_length=MAX_QUERY_CHARS), k: int = DEFAULT_K) -> HTMLResponse:
        if not 1 <= k <= MAX_K:
            return error_page(422, "Bad request", f"k must be between 1 and {MAX_K} (the engine's most results; "
                              f"an agent's search call may ask for up to {TOOL_MAX_K}), not {k}.",
                              back=(f"/view/search{_carried(q, DEFAULT_K)}", f"Search again with the default k ({DEFAULT_K})"))
        limits = {"max_k": MAX_K, "tool_max_k": TOOL_MAX_K}
        if not q.strip():
            return render("search.html", query=q, k=k, result=None, hits=[], carried="", analyzer=snapshot.analyzer, **limits)
        result = search_tool(q, k)
        hits = result.data["queries"][0]["results"] if result.ok else []
        return render("search.html", query=q, k=k, result=result, hits=hits, carried=_carried(q, k),
                      analyzer=snapshot.analyzer, **limits)

    @pages.get("/doc/{ref:path}", response_class=HTMLResponse)
    def document(ref: str, q: str = Query(default="", max_length=MAX_QUERY_CHARS),
                 k: int = Query(default=DEFAULT_K, ge=1, le=MAX_K)) -> HTMLResponse:
        key = doc_reference(ref)  # as the agent's open tool reads it: ASCII digits are a doc id, anything else a title
        doc = snapshot.lookup(key)
        if doc is None:
            near = snapshot.nearest_titles(ref) if isinstance(key, str) else []
            hint = f" Titles close to it: {', '.join(near)}." if near else ""
            return error_page(404, "No such document", f"The snapshot has no document {ref!r}.{hint}")
        redirected_from = ref if isinstance(key, str) and ref != doc.title and ref in snapshot.redirects else None
        facts = [
            {"fact": fact, "object_title": snapshot.title_of(fact.object) if fact.object >= 0 else None}
            for fact in snapshot.facts(subject=doc.doc_id)
        ]
        stated_here = snapshot.facts_table.filter(pc.equal(snapshot.facts_table.column("evidence"), doc.doc_id)).num_rows
        outgoing = graph.links(doc.doc_id, "source", "target")
        incoming = graph.links(doc.doc_id, "target", "source")
        return render(
            "doc.html",
            doc=doc,
            source_id=getattr(doc, "source_id", None),
            redirected_from=redirected_from,
            aliases=graph.aliases(doc.doc_id),
            facts=facts,
            stated_here=stated_here,
            outgoing=[(d, snapshot.title_of(d)) for d in outgoing[:MAX_LISTED_LINKS]],
            incoming=[(d, snapshot.title_of(d)) for d in incoming[:MAX_LISTED_LINKS]],
            counts={"outgoing": len(outgoing), "incoming": len(incoming)},
            searched=q if q.strip() else "",
            back=f"/view/search{_carried(q, k)}",
            matches=len(matching_spans(doc.text, q, snapshot.analyzer)) if q.strip() else 0,
            analyzer=snapshot.analyzer,
            first_match=FIRST_MATCH,
            synthetic=is_synthetic(snapshot),
        )

    return pages


def _carried(query: str, k: int) -> str:
    """``?q=QUERY`` (and ``&k=K`` unless the default): the search carried from results to documents and back."""
    return "?" + urlencode({"q": query, **({"k": k} if k != DEFAULT_K else {})})
