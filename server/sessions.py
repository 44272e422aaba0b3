"""Environment session routes: whole stillweb environments over HTTP.

- ``POST /sessions``: create a session of a registered environment with its kwargs
  (``snapshot`` defaults to the served snapshot, or names one of several).
- ``POST /sessions/{id}/reset``, ``POST /sessions/{id}/step``: the Gymnasium calls.
  Each carries a client ``request_id``; a retried request with the same id gets
  the stored result and does not act twice.
- ``POST /sessions/{id}/replay``: apply a log of resets and steps without
  returning intermediate results (how a client rebuilds a lost session).
- ``GET /sessions/{id}``: inspect; ``DELETE /sessions/{id}``: close.

The step route is the hot one: :class:`StepFastPath` answers valid steps without
FastAPI's routing and body machinery (the same code, the same bytes).

Results are exactly the in-process environment's (info made JSON: tuples become
lists, sets sorted lists): ``info["messages"]`` carries only the messages the call added, and
``messages_kept`` (in the info, as the env gives it, and in the response) says how many messages of
the previous response's history come before them
(see :meth:`~stillweb.server.session_store.EnvSession.message_delta`), so a step costs O(1) bytes, not O(turns).
Environment work runs in the server's bounded thread pool, one request at a
time per session.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from typing import Any

import gymnasium as gym
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from stillweb.corpora.tasks.store.files import check_task_set_name
from stillweb.server.models import (
    MAX_SESSION_ID_CHARS, SESSION_ERRORS, ClosedResponse, CreateSessionRequest, ReplayOp, ReplayRequest,
    ReplayResponse, ResetRequest, ResetResponse, SessionId, SessionInfo, StepRequest, StepResponse,
)
from stillweb.server.session_store import EnvSession, SessionError, SessionStore, request_digest
from stillweb.server.tools import SnapshotCatalog
from stillweb.server.plumbing import BUFFERED_BODY, ERROR_RESPONSES, ApiError, ErrorBody, run_blocking, send_error

__all__ = ["StepFastPath", "add_session_routes", "to_jsonable"]

_STEP_PATH = re.compile(r"/sessions/([^/]{1,%d})/step" % MAX_SESSION_ID_CHARS + r"\Z")


# The HTTP status of each way the session store refuses a request.
SESSION_ERROR_STATUS = {"too_many_sessions": 429, "session_not_found": 404, "session_expired": 404, "request_id_reused": 409}


async def _session_error_response(request: Request, error: SessionError) -> JSONResponse:
    return JSONResponse({"error": error.code, "detail": error.message}, status_code=SESSION_ERROR_STATUS[error.code])


def add_session_routes(app: FastAPI, catalog: SnapshotCatalog, env_ids: Iterable[str], store: SessionStore) -> None:
    """Mount the session routes on ``app`` (stores ``app.state.sessions``) and the step fast path."""
    allowed = tuple(env_ids)
    app.state.sessions = store
    app.add_exception_handler(SessionError, _session_error_response)
    app.router.on_shutdown.append(store.close_all)
    app.user_middleware.append(Middleware(StepFastPath, store=store))  # innermost: after the guard
    router = APIRouter(prefix="/sessions", tags=["sessions"], responses={**ERROR_RESPONSES, **SESSION_ERRORS})

    @router.post("", response_model=SessionInfo, status_code=201, summary="Create an environment session",
                 responses={429: {"model": ErrorBody, "description": "session limit reached"}})
    async def create_session(body: CreateSessionRequest, request: Request) -> SessionInfo:
        """Build the environment (``gym.make(env_id, **kwargs)``) and return the new session's id."""
        if body.env_id not in allowed:
            raise ApiError(422, "unknown_env_id", f"env_id {body.env_id[:200]!r} is not served; available: {list(allowed)}")
        with store.slot():  # 429 before building anything when the server is full
            snapshot_name, kwargs = _env_kwargs(body.kwargs, catalog)
            env = await run_blocking(request, _make_env, body.env_id, kwargs)
            session = store.add(body.env_id, {**body.kwargs, "snapshot": snapshot_name}, env)
        request.app.state.counter.add("sessions_created")
        return _session_info(session)

    @router.get("/{session_id}", response_model=SessionInfo, summary="Inspect a session")
    async def get_session(session_id: SessionId) -> SessionInfo:
        """The session's environment, kwargs and progress."""
        return _session_info(store.get(session_id))

    @router.get("/{session_id}/tasks/{task_id}", response_model=dict[str, Any], summary="One task of the session's task set")
    async def get_session_task(session_id: SessionId, task_id: str) -> dict[str, Any]:
        """The task record (question, answer, evidence, ...) the session's environment plays for ``task_id``:
        what a client needs to build an agent for the task (``run_episode`` on ``Remote-v0``)."""
        tasks = getattr(store.get(session_id).env.unwrapped, "tasks", None)
        if tasks is None:
            raise ApiError(404, "no_tasks", "this session's environment has no task set")
        try:
            return tasks.by_id(task_id).to_dict()
        except ValueError as error:
            raise ApiError(404, "unknown_task_id", str(error)) from None

    @router.delete("/{session_id}", response_model=ClosedResponse, summary="Close a session")
    async def close_session(session_id: SessionId) -> ClosedResponse:
        """Close the environment and forget the session."""
        store.close(session_id)
        return ClosedResponse(closed=session_id)

    @router.post("/{session_id}/reset", response_model=ResetResponse, summary="Reset (start an episode)")
    async def reset_session(session_id: SessionId, body: ResetRequest, request: Request) -> Response:
        """``env.reset(seed, options)``; a retried ``request_id`` returns the stored result."""
        session = store.get(session_id)
        digest = request_digest("reset", body.seed, body.options)
        async with session.lock:
            stored = session.stored_result(body.request_id, digest)
            if stored is None:
                stored = _json_body(await run_blocking(request, _reset, session, body.seed, body.options, body.request_id))
                session.remember(body.request_id, digest, stored)
        return _raw_json(stored)

    @router.post("/{session_id}/step", response_model=StepResponse, summary="Step (act in the episode)")
    async def step_session(session_id: SessionId, body: StepRequest, request: Request) -> Response:
        """``env.step(action)``; a retried ``request_id`` returns the stored result and does not step twice."""
        return _raw_json(await _step_body(store, session_id, body, request))

    @router.post("/{session_id}/replay", response_model=ReplayResponse, summary="Replay a log of resets and steps")
    async def replay_session(session_id: SessionId, body: ReplayRequest, request: Request) -> ReplayResponse:
        """Apply the calls in order without returning their results: rebuilds a session
        from its log after a restart (episodes are deterministic)."""
        session = store.get(session_id)
        async with session.lock:
            await run_blocking(request, _replay, session, body.ops)
        request.app.state.counter.add("replayed_ops", len(body.ops))
        return ReplayResponse(applied=len(body.ops), episode_steps=session.episode_steps, episode_over=session.episode_over)

    app.include_router(router)


class StepFastPath:
    """ASGI middleware for the hot route: a ``POST /sessions/{id}/step`` whose JSON body
    validates as :class:`StepRequest` is stepped here, skipping FastAPI's routing,
    dependency solving and exception layers (a fifth of a step's server CPU).

    The answer is the route's, byte for byte: the same :func:`_step_body`, the same
    error bodies. Anything else (other routes, an invalid body, whose 422 FastAPI
    words) goes on to the app. It sits inside :class:`RequestGuard`, which has
    checked the token and the body size and left the body in the scope.
    """

    def __init__(self, app: ASGIApp, store: SessionStore) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _step_target(scope)
        body = _step_request(scope) if session_id is not None else None
        if body is None or body.text() is None:
            await self.app(scope, receive, send)
            return
        try:
            content = await _step_body(self.store, session_id, body, Request(scope))
        except ApiError as error:
            await send_error(send, error.status, error.code, error.message)
            return
        except SessionError as error:
            await send_error(send, SESSION_ERROR_STATUS[error.code], error.code, error.message)
            return
        await _raw_json(content)(scope, receive, send)


def to_jsonable(value: Any) -> Any:
    """``value`` as plain JSON types: tuples -> lists, sets -> sorted lists,
    dataclasses -> dicts, numpy scalars/arrays -> Python values, other objects -> ``repr``."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_jsonable(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True, default=repr))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if hasattr(value, "tolist"):
        return to_jsonable(value.tolist())
    return repr(value)


# -- the step (shared by the route and the fast path) ------------------------------------


async def _step_body(store: SessionStore, session_id: str, body: StepRequest, request: Request) -> bytes:
    """The JSON bytes answering a step request (stored for retries of its request id)."""
    action = body.text()
    if action is None:
        raise ApiError(422, "missing_action", "a step needs 'action' (a string) or 'action_codepoints'")
    session = store.get(session_id)
    digest = request_digest("step", action)
    async with session.lock:
        stored = session.stored_result(body.request_id, digest)
        if stored is None:
            stored = _json_body(await run_blocking(request, _step, session, action, body.request_id))
            session.remember(body.request_id, digest, stored)
            request.app.state.counter.add("steps")
    return stored


def _step_target(scope: Scope) -> str | None:
    """The session id of a ``POST /sessions/{id}/step`` with a JSON body, else ``None``."""
    if scope["type"] != "http" or scope["method"] != "POST" or BUFFERED_BODY not in scope:
        return None
    match = _STEP_PATH.match(scope["path"])
    if match is None:
        return None
    content_type = next((value for name, value in scope["headers"] if name == b"content-type"), b"")
    return match[1] if content_type.split(b";")[0].strip() == b"application/json" else None


def _step_request(scope: Scope) -> StepRequest | None:
    """The buffered body as a :class:`StepRequest` (parsed as FastAPI parses it), ``None`` if invalid."""
    try:
        return StepRequest.model_validate(json.loads(scope[BUFFERED_BODY]))
    except (ValueError, RecursionError, ValidationError):
        return None


# -- environment work (runs in the thread pool) -------------------------------------------


def _make_env(env_id: str, kwargs: dict[str, Any]) -> gym.Env:
    try:
        return gym.make(env_id, disable_env_checker=True, **kwargs)
    except Exception as error:  # noqa: BLE001 - kwargs are client input: any failure is a 422
        raise ApiError(422, "bad_kwargs", f"could not create {env_id}: {type(error).__name__}: {str(error)[:500]}") from None


def _reset(session: EnvSession, seed: int | None, options: dict[str, Any] | None, request_id: str | None) -> dict[str, Any]:
    try:
        observation, info = session.env.reset(seed=seed, options=options)
    except (ValueError, KeyError, TypeError) as error:
        raise ApiError(422, "bad_reset", f"reset failed: {type(error).__name__}: {str(error)[:500]}") from None
    session.start_episode()
    info, kept = session.message_delta(info)
    return {"observation": observation, "info": info, "request_id": request_id, "episode": session.resets, "messages_kept": kept}


def _step(session: EnvSession, action: str, request_id: str | None) -> dict[str, Any]:
    if session.resets == 0:
        raise ApiError(409, "not_reset", "step before reset: POST /sessions/{id}/reset first")
    if session.episode_over:
        raise ApiError(409, "episode_over", "the episode has ended (terminated or truncated): reset before stepping again")
    observation, reward, terminated, truncated, info = session.env.step(action)
    session.count_step(bool(terminated or truncated))
    info, kept = session.message_delta(info)
    return {
        "observation": observation,
        "reward": float(reward),
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "info": info,
        "request_id": request_id,
        "step": session.episode_steps,
        "messages_kept": kept,
    }


def _replay(session: EnvSession, ops: list[ReplayOp]) -> None:
    for index, op in enumerate(ops):
        if op.op == "reset":
            _reset(session, op.seed, op.options, None)
        elif op.text() is None:
            raise ApiError(422, "bad_replay", f"replay op {index} is a step without an action")
        else:
            _step(session, str(op.text()), None)


# -- helpers -------------------------------------------------------------------------------


def _env_kwargs(kwargs: dict[str, Any], catalog: SnapshotCatalog) -> tuple[str, dict[str, Any]]:
    """(snapshot name, kwargs with ``snapshot`` as the served path); rejects server paths."""
    name = kwargs.get("snapshot")
    if name is not None and not isinstance(name, str):
        raise ApiError(422, "bad_kwargs", "kwargs.snapshot must be the name of a served snapshot (a string)")
    name = catalog.resolve_name(name)
    members = kwargs.get("member_kwargs")  # stillweb/Mixture-v0: each member's own kwargs pass the same checks
    for member in [kwargs, *(members.values() if isinstance(members, dict) else ())]:
        tasks = member.get("tasks") if isinstance(member, dict) else None
        if isinstance(tasks, str):
            try:
                check_task_set_name(tasks)  # never a path on the server
            except ValueError:
                raise ApiError(422, "bad_kwargs",
                               "kwargs.tasks must be a task-set name inside the snapshot or a list of task dicts, not a path") from None
        if member is not kwargs and isinstance(member, dict) and ({"snapshot", "frozen_tools"} & set(member)):
            raise ApiError(422, "bad_kwargs", "kwargs.member_kwargs may not name a snapshot or frozen tools: "
                                              "a mixture's members share kwargs.snapshot and kwargs.frozen_tools")
    frozen = kwargs.get("frozen_tools")
    if frozen is not None:
        if not isinstance(frozen, list) or not all(isinstance(item, str) and item in catalog.frozen_tools for item in frozen):
            raise ApiError(422, "bad_kwargs", "kwargs.frozen_tools must be a list of names of the frozen tools this "
                                              f"server mounts: {sorted(catalog.frozen_tools)} (stillweb serve --frozen-tool)")
        kwargs = {**kwargs, "frozen_tools": [catalog.frozen_tools[item] for item in frozen]}
    return name, {**kwargs, "snapshot": str(catalog.snapshot(name).path)}


def _session_info(session: EnvSession) -> SessionInfo:
    return SessionInfo(
        session_id=session.session_id,
        env_id=session.env_id,
        snapshot=str(session.kwargs["snapshot"]),
        kwargs=to_jsonable(session.kwargs),
        resets=session.resets,
        episode_steps=session.episode_steps,
        total_steps=session.total_steps,
        episode_over=session.episode_over,
    )


def _json_body(payload: dict[str, Any]) -> bytes:
    """Serialise once (stored for retries), as :func:`to_jsonable` would. Non-finite floats
    use JSON's NaN/Infinity extension; text UTF-8 cannot hold (lone surrogates) is escaped."""
    try:
        text = json.dumps(payload, ensure_ascii=False, allow_nan=True, separators=(",", ":"), default=to_jsonable)
    except TypeError:  # keys json cannot write: convert the whole payload
        text = json.dumps(to_jsonable(payload), ensure_ascii=False, allow_nan=True, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(json.loads(text), ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode("ascii")


def _raw_json(body: bytes) -> Response:
    return Response(content=body, media_type="application/json")
