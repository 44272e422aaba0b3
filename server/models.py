"""Request and response bodies of the tool and retrieval routes (pydantic models:
they validate input and write the OpenAPI schema with its examples)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stillweb.corpora.index import MAX_K

__all__ = [
    "MAX_BATCH_CALLS",
    "MAX_QUERIES",
    "RetrieveRequest",
    "RetrieveResponse",
    "RetrievedDocument",
    "ScoredDocument",
    "SnapshotInfo",
    "ToolBatchRequest",
    "ToolBatchResponse",
    "ToolCallRequest",
    "ToolListResponse",
    "ToolResultBody",
]

MAX_BATCH_CALLS = 256
MAX_QUERIES = 256
MAX_REQUEST_QUERY_CHARS = 10_000  # a request's query; the engine reads its first corpora.index.MAX_QUERY_CHARS
SnapshotName = Annotated[
    str | None,
    Field(default=None, max_length=200, description="a served snapshot's name (default: the first served)", examples=[None]),
]
Flag = Literal["unknown_tool", "bad_arguments", "not_found", "format_error", "tool_error", "timeout",
               "permission_denied", "conflict", "rate_limited", "unavailable", "not_recorded"]


class SnapshotInfo(BaseModel):
    """One served snapshot."""

    name: str = Field(examples=["synthetic-300-s0"])
    fingerprint: str = Field(examples=["3f2a9c..."])
    documents: int = Field(examples=[300])


class ToolListResponse(BaseModel):
    """``GET /tools``: the tools and their OpenAI function definitions."""

    snapshot: str = Field(examples=["synthetic-300-s0"])
    names: list[str] = Field(examples=[["search", "open", "find", "python", "calculator", "answer"]])
    schemas: list[dict[str, Any]] = Field(
        description="OpenAI function definitions",
        examples=[[{"type": "function", "function": {"name": "search", "description": "...", "parameters": {"type": "object"}}}]],
    )


class ToolCallRequest(BaseModel):
    """One tool call: ``arguments`` are passed to the tool exactly as given (a
    non-object is answered with the ``bad_arguments`` flag, as in-process)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"name": "search", "arguments": {"query": "Marie Curie", "k": 3}}]})

    name: str = Field(max_length=200, description="tool name (or alias)", examples=["search"])
    arguments: Any = Field(default_factory=dict, description="the tool's JSON arguments", examples=[{"query": "Marie Curie"}])
    call_id: str | None = Field(default=None, max_length=200, description="echoed on the result", examples=["call_1"])
    snapshot: SnapshotName


class ToolResultBody(BaseModel):
    """A tool's result, field for field :class:`~stillweb.sandboxes.ToolResult`."""

    name: str = Field(examples=["search"])
    text: str = Field(description="what the model sees", examples=["1. Marie Curie (doc 12): ..."])
    data: Any = Field(default=None, description="the same content, structured", examples=[{"results": []}])
    flag: Flag | None = Field(default=None, description="None on success", examples=[None])
    terminal: bool = Field(default=False, description="true for the answer tool", examples=[False])
    call_id: str | None = Field(default=None, examples=["call_1"])
    shown_docs: list[int] = Field(default_factory=list, description="doc ids the result names, in order",
                                  examples=[[12, 40]])
    opened_doc: int | None = Field(default=None, description="the document whose page `open` returned", examples=[None])


class ToolBatchRequest(BaseModel):
    """Many tool calls in one request, run in order."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"calls": [{"name": "search", "arguments": {"query": "Curie"}}, {"name": "open", "arguments": {"doc": 3}}]}]}
    )

    calls: list[ToolCallRequest] = Field(max_length=MAX_BATCH_CALLS, description=f"at most {MAX_BATCH_CALLS} calls")


class ToolBatchResponse(BaseModel):
    """The results of a batch, in call order."""

    results: list[ToolResultBody]


class RetrieveRequest(BaseModel):
    """Search-R1 style retrieval: ``queries`` (a list) or ``query`` (one string, as
    SkyRL-gym's search tool sends)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"queries": ["capital of Velland", "Ada Quill"], "topk": 3, "return_scores": True}]}
    )

    queries: list[Annotated[str, Field(max_length=MAX_REQUEST_QUERY_CHARS)]] | None = Field(
        default=None, max_length=MAX_QUERIES, examples=[["capital of Velland"]]
    )
    query: str | None = Field(default=None, max_length=MAX_REQUEST_QUERY_CHARS, examples=[None])
    topk: int | None = Field(default=None, ge=1, le=MAX_K, description="passages per query (default 3)", examples=[3])
    return_scores: bool = Field(default=False, examples=[True])
    max_chars: int = Field(default=2000, ge=1, le=1_000_000, description="characters of 'contents' per document", examples=[2000])
    snapshot: SnapshotName

    @model_validator(mode="after")
    def _one_query_source(self) -> RetrieveRequest:
        if (self.queries is None) == (self.query is None):
            raise ValueError("give exactly one of 'queries' (a list of strings) or 'query' (a string)")
        return self

    def query_list(self) -> list[str]:
        """The queries in request order."""
        return list(self.queries) if self.queries is not None else [str(self.query)]


class RetrievedDocument(BaseModel):
    """A document in Search-R1's corpus format."""

    id: str = Field(description="the corpus's own id (source_id), or the doc id when the corpus has none", examples=["12"])
    contents: str = Field(description="title, newline, text", examples=["Velland\nVelland is a small country. Its capital is Ostra."])
    doc_id: int = Field(description="stillweb's dense doc id (for open and citations)", examples=[11])


class ScoredDocument(BaseModel):
    """A document with its BM25 score (``return_scores: true``)."""

    document: RetrievedDocument
    score: float = Field(examples=[7.25])


class RetrieveResponse(BaseModel):
    """One list per query, best first: scored documents, or plain documents without scores."""

    result: list[list[ScoredDocument]] | list[list[RetrievedDocument]]
