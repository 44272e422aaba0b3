"""``POST /retrieve``: Search-R1's retrieval API over a snapshot, so Search-R1
style trainers and SkyRL-gym's search environment work against stillweb unchanged.

Request: ``{"queries": [...], "topk": 3, "return_scores": true}`` (or ``"query":
"..."``, as SkyRL-gym's ``SearchToolGroup`` sends). Response: one list per
query, best first; with scores ``{"document": {"id", "contents", "doc_id"}, "score"}``,
without them the documents alone. ``id`` is the corpus's own id (a wiki-18 or
BEIR passage id, so gold ids and qrels match), or the doc id when the corpus has
none; ``contents`` is the corpus row's own string, byte for byte, on a snapshot of wiki-18 rows
(``"\\"Title\\"\\ntext"``, :meth:`Snapshot.contents_of`), else ``"Title\\ntext"`` (the text cut to
``max_chars``). A blank query has no results.

A batch may hold up to the server's ``max_batch`` queries (``stillweb serve --max-batch``, default
4,096, as many as a Search-R1 rollout batch sends in one POST); a larger one gets 413
``batch_too_large`` naming the limit and the flag. The batch is searched in chunks of
:data:`RETRIEVE_CHUNK` queries (:meth:`Snapshot.search_many`, on every core), so memory grows
with the response, not with the search. ``"retriever": "dense"`` or ``"hybrid"`` ranks with the
snapshot's dense index (400 ``no_dense_index`` without one; 404 ``not_recorded``
for a query whose embedding was never recorded and no embeddings server is set;
503 ``unavailable`` when that server fails).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from fastapi import APIRouter, Request, Response

from stillweb.corpora.search.dense import no_dense_index
from stillweb.corpora.search.embeddings import EmbeddingsError, QueryNotRecorded
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.snapshot.records import SearchResult

from stillweb.server.plumbing import ERROR_RESPONSES, ApiError, ErrorBody, run_blocking
from stillweb.server.models import RetrieveRequest, RetrieveResponse

if TYPE_CHECKING:
    from stillweb.server.tools import SnapshotCatalog

__all__ = ["retrieval_router", "retrieve", "RETRIEVE_CHUNK"]

DEFAULT_TOPK = 3
RETRIEVE_CHUNK = 512  # queries searched at once; a batch is searched chunk after chunk


def retrieval_router(catalog: SnapshotCatalog) -> APIRouter:
    """The router holding ``POST /retrieve`` over ``catalog``."""
    router = APIRouter(tags=["retrieval"], responses=ERROR_RESPONSES)

    @router.post(
        "/retrieve",
        response_model=RetrieveResponse,
        responses={404: {"model": ErrorBody, "description": "unknown snapshot"},
                   413: {"model": ErrorBody, "description": "more queries than the server's --max-batch"}},
        summary="Search-R1 compatible retrieval",
    )
    async def retrieve_route(body: RetrieveRequest, request: Request) -> Response:
        """BM25 retrieval for a batch of queries, in Search-R1's request and response format."""
        queries = body.query_list()
        limit = request.app.state.settings.max_batch
        if len(queries) > limit:
            raise ApiError(413, "batch_too_large", f"{len(queries)} queries in one request; this server answers at most "
                                                   f"{limit} (start it with `stillweb serve --max-batch N` for more, or "
                                                   "send smaller batches)")
        snapshot = catalog.snapshot(body.snapshot)
        topk = body.topk or DEFAULT_TOPK
        result = await run_blocking(request, retrieve, snapshot, queries, topk, body.return_scores, body.max_chars,
                                    body.retriever)
        request.app.state.counter.add("retrievals", len(result))
        # the documented RetrieveResponse, written directly: a 4,096-query batch is 12,288 documents, and building
        # and validating a model per document cost more than the search
        body_bytes = json.dumps({"result": result}, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return Response(body_bytes.encode("utf-8"), media_type="application/json")

    return router


def retrieve(
    snapshot: Snapshot, queries: list[str], topk: int, return_scores: bool, max_chars: int, retriever: str = "bm25"
) -> list[list[dict]]:
    """Search each query with ``retriever``, :data:`RETRIEVE_CHUNK` queries at a time (each chunk spread over
    every core by :meth:`Snapshot.search_many`); Search-R1 shaped results in query order (dicts of
    :class:`~stillweb.server.models.ScoredDocument`, or of its ``document`` without scores)."""
    if retriever != "bm25" and snapshot.dense_info is None:
        raise ApiError(400, "no_dense_index", no_dense_index(snapshot.path))
    searched = [query for query in queries if query.strip()]
    pages: list[list[SearchResult]] = []
    try:
        for start in range(0, len(searched), RETRIEVE_CHUNK):
            pages.extend(snapshot.search_many(searched[start : start + RETRIEVE_CHUNK], topk, mode=retriever))
    except QueryNotRecorded as error:
        raise ApiError(404, "not_recorded", str(error)) from None
    except EmbeddingsError as error:
        raise ApiError(503, "unavailable", str(error)) from None
    found = iter(pages)
    per_query = []
    for query in queries:
        hits = next(found) if query.strip() else []
        documents = [_document(snapshot, hit, max_chars) for hit in hits]
        per_query.append([{"document": document, "score": float(hit.score)} for document, hit in zip(documents, hits)]
                         if return_scores else documents)
    return per_query


def _document(snapshot: Snapshot, hit: SearchResult, max_chars: int) -> dict:
    """The hit as a corpus row (:class:`~stillweb.server.models.RetrievedDocument`): its own id and ``contents`` (the head as the corpus
    wrote it, the text cut to ``max_chars``)."""
    return {"id": hit.source_id or str(hit.doc_id),
            "contents": snapshot.contents_head_of(hit.doc_id) + snapshot.text_of(hit.doc_id)[:max_chars],
            "doc_id": hit.doc_id}
