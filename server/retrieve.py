"""``POST /retrieve``: Search-R1's retrieval API over a snapshot, so Search-R1
style trainers and SkyRL-gym's search environment work against stillweb unchanged.

Request: ``{"queries": [...], "topk": 3, "return_scores": true}`` (or ``"query":
"..."``, as SkyRL-gym's ``SearchToolGroup`` sends). Response: one list per
query, best first; with scores ``{"document": {"id", "contents", "doc_id"}, "score"}``,
without them the documents alone. ``id`` is the corpus's own id (a wiki-18 or
BEIR passage id, so gold ids and qrels match), or the doc id when the corpus has
none; ``contents`` is ``"Title\\ntext"`` (the text cut to ``max_chars``). A blank
query has no results. ``"retriever": "dense"`` or ``"hybrid"`` ranks with the
snapshot's dense index (400 ``no_dense_index`` without one; 404 ``not_recorded``
for a query whose embedding was never recorded and no embeddings server is set;
503 ``unavailable`` when that server fails).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Request

from stillweb.corpora.dense import no_dense_index
from stillweb.corpora.embeddings import EmbeddingsError, QueryNotRecorded
from stillweb.corpora.snapshot import SearchResult, Snapshot

from stillweb.server.plumbing import ERROR_RESPONSES, ApiError, ErrorBody, run_blocking
from stillweb.server.models import RetrievedDocument, RetrieveRequest, RetrieveResponse, ScoredDocument

if TYPE_CHECKING:
    from stillweb.server.tools import SnapshotCatalog

__all__ = ["retrieval_router", "retrieve"]

DEFAULT_TOPK = 3


def retrieval_router(catalog: SnapshotCatalog) -> APIRouter:
    """The router holding ``POST /retrieve`` over ``catalog``."""
    router = APIRouter(tags=["retrieval"], responses=ERROR_RESPONSES)

    @router.post(
        "/retrieve",
        response_model=RetrieveResponse,
        responses={404: {"model": ErrorBody, "description": "unknown snapshot"}},
        summary="Search-R1 compatible retrieval",
    )
    async def retrieve_route(body: RetrieveRequest, request: Request) -> RetrieveResponse:
        """BM25 retrieval for a batch of queries, in Search-R1's request and response format."""
        snapshot = catalog.snapshot(body.snapshot)
        topk = body.topk or DEFAULT_TOPK
        result = await run_blocking(request, retrieve, snapshot, body.query_list(), topk, body.return_scores, body.max_chars,
                                    body.retriever)
        request.app.state.counter.add("retrievals", len(result))
        return RetrieveResponse(result=result)

    return router


def retrieve(
    snapshot: Snapshot, queries: list[str], topk: int, return_scores: bool, max_chars: int, retriever: str = "bm25"
) -> list[list[ScoredDocument]] | list[list[RetrievedDocument]]:
    """Search each query (the batch spread over every core by :meth:`Snapshot.search_many`) with
    ``retriever``; Search-R1 shaped results in query order."""
    if retriever != "bm25" and snapshot.dense_info is None:
        raise ApiError(400, "no_dense_index", no_dense_index(snapshot.path))
    try:
        pages = iter(snapshot.search_many([query for query in queries if query.strip()], topk, mode=retriever))
    except QueryNotRecorded as error:
        raise ApiError(404, "not_recorded", str(error)) from None
    except EmbeddingsError as error:
        raise ApiError(503, "unavailable", str(error)) from None
    per_query = []
    for query in queries:
        hits = next(pages) if query.strip() else []
        scored = [ScoredDocument(document=_document(snapshot, hit, max_chars), score=float(hit.score)) for hit in hits]
        per_query.append(scored if return_scores else [item.document for item in scored])
    return per_query


def _document(snapshot: Snapshot, hit: SearchResult, max_chars: int) -> RetrievedDocument:
    return RetrievedDocument(id=hit.source_id or str(hit.doc_id), doc_id=hit.doc_id,
                             contents=f"{hit.title}\n{snapshot.text_of(hit.doc_id)[:max_chars]}")
