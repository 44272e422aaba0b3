"""Request and response bodies of the session routes (:mod:`.sessions`): pydantic models
that validate input and write the OpenAPI schema with its examples."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field, model_validator

from stillweb.server.plumbing import ErrorBody

__all__ = ["MAX_REPLAY_OPS", "MAX_SESSION_ID_CHARS", "SESSION_ERRORS", "RequestId", "SessionId", "CreateSessionRequest", "SessionInfo", "ResetRequest", "ResetResponse", "ActionText", "StepRequest", "StepResponse", "ReplayOp", "ReplayRequest", "ReplayResponse", "ClosedResponse"]

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

    env_id: str = Field(max_length=200, examples=["stillweb/WikiQA-v0"])
    kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="constructor kwargs; 'snapshot' names a served snapshot (default: the first served)",
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
    options: dict[str, Any] | None = Field(default=None, examples=[None])
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
            raise ValueError("give 'action' or 'action_codepoints', not both")
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

