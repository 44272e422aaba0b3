"""Request and response bodies of the tool, retrieval and session routes (pydantic models:
they validate input and write the OpenAPI schema with its examples)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field, model_validator

from stillweb.envs.registration import SERVED_ENV_IDS
from stillweb.sandboxes.formats import FORMATS
from stillweb.corpora.errors import UsageError
from stillweb.corpora.search.dense import SEARCH_MODES
from stillweb.corpora.search.index import MAX_K
from stillweb.server.plumbing import ErrorBody

__all__ = [
    "MAX_REPLAY_OPS",
    "MAX_SESSION_ID_CHARS",
    "SESSION_ERRORS",
    "RequestId",
    "SessionId",
    "CreateSessionRequest",
    "SessionInfo",
    "ResetRequest",
    "ResetResponse",
    "ActionText",
    "StepRequest",
    "StepResponse",
    "ReplayOp",
    "ReplayRequest",
    "ReplayResponse",
    "ClosedResponse",
    "MAX_BATCH_CALLS",
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
MAX_REQUEST_QUERY_CHARS = 10_000  # a request's query; the engine reads its first corpora.search.index.MAX_QUERY_CHARS
SnapshotName = Annotated[
    str | None,
    Field(default=None, max_length=200, description="a served snapshot's name (default: the first served)", examples=[None]),
]
Flag = Literal["unknown_tool", "bad_arguments", "not_found", "format_error", "tool_error", "timeout",
               "permission_denied", "conflict", "rate_limited", "unavailable", "not_recorded", "budget_exhausted"]


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
    SkyRL-gym's search tool sends). A batch may hold up to the server's ``--max-batch`` queries
    (default 4,096; more get 413)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"queries": ["capital of Velland", "Ada Quill"], "topk": 3, "return_scores": True}]}
    )

    queries: list[Annotated[str, Field(max_length=MAX_REQUEST_QUERY_CHARS)]] | None = Field(
        default=None, description="the batch (at most the server's --max-batch queries)", examples=[["capital of Velland"]]
    )
    query: str | None = Field(default=None, max_length=MAX_REQUEST_QUERY_CHARS, examples=[None])
    topk: int | None = Field(default=None, ge=1, le=MAX_K, description="passages per query (default 3)", examples=[3])
    return_scores: bool = Field(default=False, examples=[True])
    max_chars: int = Field(default=2000, ge=1, le=1_000_000, description="characters of 'contents' per document", examples=[2000])
    retriever: Literal[SEARCH_MODES] = Field(
        default="bm25", description="ranking: bm25, or dense / hybrid on a snapshot with a dense index (stillweb build dense)")
    snapshot: SnapshotName

    @model_validator(mode="after")
    def _one_query_source(self) -> RetrieveRequest:
        if (self.queries is None) == (self.query is None):
            raise UsageError("give exactly one of 'queries' (a list of strings) or 'query' (a string)")
        return self

    def query_list(self) -> list[str]:
        """The queries in request order."""
        return list(self.queries) if self.queries is not None else [str(self.query)]


class RetrievedDocument(BaseModel):
    """A document in Search-R1's corpus format."""

    id: str = Field(description="the corpus's own id (source_id), or the doc id when the corpus has none", examples=["12"])
    contents: str = Field(description="the corpus row's contents as written (wiki-18: quoted title, newline, text); "
                          "else title, newline, text", examples=["Velland\nVelland is a small country. Its capital is Ostra."])
    doc_id: int = Field(description="stillweb's dense doc id (for open and citations)", examples=[11])


class ScoredDocument(BaseModel):
    """A document with its BM25 score (``return_scores: true``)."""

    document: RetrievedDocument
    score: float = Field(examples=[7.25])


class RetrieveResponse(BaseModel):
    """One list per query, best first: scored documents, or plain documents without scores."""

    result: list[list[ScoredDocument]] | list[list[RetrievedDocument]]


# -- sessions (stillweb.server.sessions) ---------------------------------------------------
MAX_REPLAY_OPS = 10_000
MAX_SESSION_ID_CHARS = 100
MESSAGES_KEPT_DESCRIPTION = (
    "info.messages holds only the messages this call added: the full history is the first messages_kept "
    "messages of the previous response's history followed by them (0 on reset; null when info has no message list)"
)

SessionId = Annotated[str, Path(max_length=MAX_SESSION_ID_CHARS, description="the id POST /sessions returned", examples=["kq3Vb1x9rT0aLm2Z"])]
RequestId = Annotated[
    str | None,
    Field(default=None, max_length=200, description="client id of this request: a retry with the same id returns the stored result", examples=["worker3-17"]),
]


class CreateSessionRequest(BaseModel):
    """Which environment to run and how."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"env_id": "stillweb/WikiQA-v0", "kwargs": {"tool_format": "tongyi", "max_turns": 8}}]}
    )

    env_id: str = Field(max_length=200, examples=["stillweb/WikiQA-v0"],
                        description=f"a served environment (by default every registered one: {', '.join(SERVED_ENV_IDS)})")
    kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="constructor kwargs; 'snapshot' names a served snapshot (default: the first served); "
                    f"'tool_format' one of {', '.join(FORMATS)}",
        examples=[{"tool_format": "tongyi"}],
    )


class SessionInfo(BaseModel):
    """A session's identity and progress."""

    session_id: str = Field(examples=["kq3Vb1x9rT0aLm2Z"])
    env_id: str = Field(examples=["stillweb/WikiQA-v0"])
    snapshot: str = Field(examples=["synthetic-300-s0"])
    kwargs: dict[str, Any] = Field(examples=[{"tool_format": "tongyi"}])
    resets: int = Field(examples=[1])
    episode_steps: int = Field(description="steps since the last reset", examples=[3])
    total_steps: int = Field(examples=[3])
    episode_over: bool = Field(examples=[False])


class ResetRequest(BaseModel):
    """``env.reset(seed=..., options=...)``."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"seed": 0, "request_id": "w1-0"}]})

    seed: int | None = Field(default=None, ge=0, le=2**63 - 1, examples=[0])
    options: dict[str, Any] | None = Field(
        default=None, examples=[None],
        description='the environment\'s reset options, e.g. {"task_id": "t1"} or {"limits": {"max_turns": 4, '
                    '"max_tool_calls": 8}} (this episode\'s budget; max_format_errors too)')
    request_id: RequestId


class ResetResponse(BaseModel):
    """The first observation and info of the episode."""

    observation: str = Field(examples=["You answer questions ... What is the capital of Velland?"])
    info: dict[str, Any] = Field(examples=[{"task_id": "t1"}])
    request_id: str | None = Field(examples=["w1-0"])
    episode: int = Field(description="resets done in this session", examples=[1])
    messages_kept: int | None = Field(description=MESSAGES_KEPT_DESCRIPTION, examples=[0])


class ActionText(BaseModel):
    """An action as ``action`` (a string) or, when it holds lone surrogates (which JSON
    cannot carry faithfully: escaped pairs merge into one character), as ``action_codepoints``."""

    action: str | None = Field(default=None, description="the policy's text", examples=["<answer>Ostra</answer>"])
    action_codepoints: list[Annotated[int, Field(ge=0, le=0x10FFFF)]] | None = Field(
        default=None, description="the text as Unicode code points (instead of 'action')", examples=[None]
    )

    @model_validator(mode="after")
    def _one_form(self) -> ActionText:
        if self.action is not None and self.action_codepoints is not None:
            raise UsageError("give 'action' or 'action_codepoints', not both")
        return self

    def text(self) -> str | None:
        """The action text (``None`` if neither form was given)."""
        if self.action_codepoints is not None:
            return "".join(map(chr, self.action_codepoints))
        return self.action


class StepRequest(ActionText):
    """``env.step(action)``."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"action": '<tool_call>{"name": "search", "arguments": {"query": "Velland"}}</tool_call>', "request_id": "w1-1"}]})

    request_id: RequestId


class StepResponse(BaseModel):
    """What ``env.step`` returned, plus the episode step count for the client to check."""

    observation: str = Field(examples=['<tool_response>Results for "Velland": ...</tool_response>'])
    reward: float = Field(examples=[0.0])
    terminated: bool = Field(examples=[False])
    truncated: bool = Field(examples=[False])
    info: dict[str, Any] = Field(examples=[{"turn": 1, "messages": [{"role": "assistant", "content": "..."}, {"role": "user", "content": "..."}]}])
    request_id: str | None = Field(examples=["w1-1"])
    step: int = Field(description="steps taken in this episode, this one included", examples=[1])
    messages_kept: int | None = Field(description=MESSAGES_KEPT_DESCRIPTION, examples=[2])


class ReplayOp(ActionText):
    """One logged call: ``{"op": "reset", "seed": .., "options": ..}`` or ``{"op": "step", "action": ..}``."""

    op: Literal["reset", "step"] = Field(examples=["step"])
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1, examples=[None])
    options: dict[str, Any] | None = Field(default=None, examples=[None])


class ReplayRequest(BaseModel):
    """A log of calls to apply in order, results discarded."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"ops": [{"op": "reset", "seed": 0}, {"op": "step", "action": "<answer>Ostra</answer>"}]}]})

    ops: list[ReplayOp] = Field(max_length=MAX_REPLAY_OPS)


class ReplayResponse(BaseModel):
    """How many calls were applied and where the episode stands."""

    applied: int = Field(examples=[2])
    episode_steps: int = Field(examples=[1])
    episode_over: bool = Field(examples=[True])


class ClosedResponse(BaseModel):
    """``DELETE /sessions/{id}``."""

    closed: str = Field(examples=["kq3Vb1x9rT0aLm2Z"])


SESSION_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "unknown or expired session (error: session_not_found / session_expired)"},
    409: {"model": ErrorBody, "description": "episode over, not reset, or request id reused"},
}
