"""The HTTP plumbing every stillweb server shares: settings, the request guard
(bearer token and body-size limit), error bodies, blocking work off the event
loop, and the health and stats routes.

Error bodies always have the shape ``{"error": <code>, "detail": <message>}``
(FastAPI's own validation errors keep their list ``detail`` and gain
``"error": "validation_error"``), so a client can branch on ``error`` and a
human can read ``detail``.

>>> app = create_base_app(ServerSettings(token="s3cret"))   # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import hmac
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stillweb.corpora.errors import StillwebError, UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.version import PACKAGE_VERSION

__all__ = [
    "ApiError",
    "BUFFERED_BODY",
    "ErrorBody",
    "ServerSettings",
    "ServerStats",
    "create_base_app",
    "run_blocking",
    "send_error",
    "ERROR_RESPONSES",
]

T = TypeVar("T")

# Routes that answer without the bearer token.
OPEN_PATHS = frozenset({"/health"})
# ASGI scope key under which the guard leaves the request body it read (inner layers may use it).
BUFFERED_BODY = "stillweb.body"


@dataclass(frozen=True)
class ServerSettings:
    """How a server guards and schedules its work.

    ``token``: bearer token every route but ``/health`` requires (``None``: open);
    ``max_body_bytes``: larger request bodies get 413; ``worker_threads``: how
    many blocking calls (searches, environment steps, Python runs) run at once;
    ``max_sessions`` and ``idle_timeout_s``: environment session limits; ``max_batch``: the most
    queries one ``POST /retrieve`` may send (more get 413; Search-R1 sends a whole rollout batch at once).
    """

    token: str | None = None
    max_body_bytes: int = 16 * 1024 * 1024
    worker_threads: int = 32
    max_sessions: int = 256
    idle_timeout_s: float = 900.0
    max_batch: int = 4096

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "worker_threads", "max_sessions", "max_batch"):
            check_positive_int(name, getattr(self, name))
        if not self.idle_timeout_s > 0:
            raise UsageError(f"idle_timeout_s must be positive, got {self.idle_timeout_s!r}")
        if self.token is not None and not self.token:
            raise UsageError("token must be a non-empty string or None")


class ApiError(StillwebError):
    """An error answered as ``{"error": code, "detail": message}`` with HTTP ``status``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: str = Field(description="machine-readable error code", examples=["session_not_found"])
    detail: Any = Field(description="what was wrong and what to do", examples=["no session 'x1'; create one with POST /sessions"])


# OpenAPI documentation of the error responses routes may give.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "the body is not parseable (e.g. malformed JSON or form data)"},
    401: {"model": ErrorBody, "description": "missing or wrong bearer token"},
    413: {"model": ErrorBody, "description": "request body larger than the server's limit"},
    422: {
        "model": ErrorBody,
        "description": "invalid input: 'detail' is a list of {loc, msg, type} for schema errors, a message otherwise",
    },
}


class HealthResponse(BaseModel):
    """``GET /health``."""

    status: str = Field(examples=["ok"])
    version: str = Field(examples=[PACKAGE_VERSION])


class ServerStats(BaseModel):
    """``GET /stats``: this worker process's accounting (per worker when ``--workers`` > 1)."""

    pid: int = Field(examples=[4242])
    cpu_user_s: float = Field(description="user CPU seconds of this process", examples=[1.25])
    cpu_system_s: float = Field(description="system CPU seconds of this process", examples=[0.25])
    rss_bytes: int = Field(description="resident memory now (0 where /proc is absent)", examples=[104857600])
    requests: int = Field(description="requests answered since start", examples=[1000])
    counters: dict[str, int] = Field(default_factory=dict, description="per-feature counters", examples=[{"steps": 900}])


class RequestCounter:
    """Thread-safe named counters of a server's work."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def add(self, name: str, amount: int = 1) -> None:
        """Add ``amount`` to counter ``name``."""
        with self._lock:
            self._counts[name] = self._counts.get(name, 0) + amount

    def snapshot(self) -> dict[str, int]:
        """The counters, sorted by name."""
        with self._lock:
            return dict(sorted(self._counts.items()))


def create_base_app(settings: ServerSettings, title: str = "stillweb", description: str = "") -> FastAPI:
    """A FastAPI app with the guard, the error handlers, ``/health`` and ``/stats``.

    Feature routers (tools, retrieval, sessions) are added by the caller.
    """
    app = FastAPI(title=title, version=PACKAGE_VERSION, description=description)
    app.state.settings = settings
    app.state.counter = RequestCounter()
    app.state.executor = None
    app.add_middleware(RequestGuard, settings=settings, counter=app.state.counter)
    _add_error_handlers(app)

    @app.get("/health", response_model=HealthResponse, tags=["server"], summary="Liveness (no token needed)")
    async def health() -> HealthResponse:
        """Answers ``{"status": "ok"}`` while the server runs; never needs the token."""
        return HealthResponse(status="ok", version=PACKAGE_VERSION)

    @app.get("/stats", response_model=ServerStats, tags=["server"], summary="CPU time, memory and counters", responses=ERROR_RESPONSES)
    async def stats(request: Request) -> ServerStats:
        """This worker's CPU time (``os.times``), resident memory and request counters: the
        reliable capacity figure is CPU seconds per request."""
        times = os.times()
        counter: RequestCounter = request.app.state.counter
        counts = counter.snapshot()
        return ServerStats(
            pid=os.getpid(),
            cpu_user_s=times.user,
            cpu_system_s=times.system,
            rss_bytes=_resident_bytes(),
            requests=counts.pop("requests", 0),
            counters=counts,
        )

    return app


async def run_blocking(request: Request, function: Callable[..., T], *args: Any) -> T:
    """Run a blocking ``function(*args)`` in the worker thread pool of the server's
    ``worker_threads`` threads, so the event loop keeps serving other requests.

    A plain :class:`ThreadPoolExecutor` (created on first use): its hand-off costs
    about a third of ``anyio.to_thread``'s CPU, which matters on every step."""
    state = request.app.state
    if state.executor is None:
        state.executor = ThreadPoolExecutor(state.settings.worker_threads, thread_name_prefix="stillweb-worker")
    return await asyncio.get_running_loop().run_in_executor(state.executor, function, *args)


class RequestGuard:
    """ASGI middleware: the bearer token, then the body-size limit, checked from
    ``Content-Length`` and while the body streams in (413 either way). The body it
    read is replayed to the app and left in ``scope[BUFFERED_BODY]``."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, counter: RequestCounter) -> None:
        self.app = app
        self.settings = settings
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.counter.add("requests")
        headers = dict(scope.get("headers") or ())
        if self.settings.token is not None and scope.get("path") not in OPEN_PATHS and not self._authorised(headers):
            await send_error(send, 401, "unauthorized", "this server needs 'Authorization: Bearer <token>'")
            return
        limit = self.settings.max_body_bytes
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await send_error(send, 400, "bad_request", "Content-Length must be a non-negative integer")
                return
            if int(declared) > limit:
                await send_error(send, 413, "body_too_large", f"request body of {int(declared)} bytes exceeds the limit of {limit} bytes")
                return
        body, too_large = await _read_body(receive, limit)
        if too_large:
            await send_error(send, 413, "body_too_large", f"request body exceeds the limit of {limit} bytes")
            return
        scope[BUFFERED_BODY] = body
        await self.app(scope, _replay_body(body, receive), send)

    def _authorised(self, headers: dict[bytes, bytes]) -> bool:
        supplied = headers.get(b"authorization", b"")
        expected = b"Bearer " + str(self.settings.token).encode()
        return hmac.compare_digest(supplied, expected)


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The whole request body, or (partial, True) as soon as it exceeds ``limit``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"", True
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks), False


def _replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the buffered body once, then defers to the real one
    (so disconnects are still seen)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def send_error(send: Send, status: int, code: str, message: str) -> None:
    """Answer ``{"error": code, "detail": message}`` with ``status`` (as the error handlers do)."""
    response = JSONResponse({"error": code, "detail": message}, status_code=status)
    await send({"type": "http.response.start", "status": status, "headers": response.raw_headers})
    await send({"type": "http.response.body", "body": response.body})


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> JSONResponse:
        return JSONResponse({"error": error.code, "detail": error.message}, status_code=error.status)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            {"loc": list(item.get("loc", ())), "msg": str(item.get("msg", "")), "type": str(item.get("type", ""))}
            for item in error.errors()
        ]
        return JSONResponse({"error": "validation_error", "detail": problems}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        code = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        detail = error.detail
        if error.status_code == 404 and detail == "Not Found":
            detail = f"no route {request.url.path!r}; see /docs or /openapi.json for the routes"
        elif error.status_code == 405:
            detail = f"method {request.method} is not allowed on {request.url.path!r}; see /openapi.json"
        return JSONResponse({"error": code, "detail": detail}, status_code=error.status_code, headers=getattr(error, "headers", None))


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")
