"""The HTTP tool server: stillweb's tools and Search-R1 compatible retrieval over
one or more snapshots, answering exactly what the in-process
:class:`~stillweb.sandboxes.ToolRegistry` answers.

Routes (all JSON; every route but ``/health`` needs the bearer token when the
server has one):

- ``GET /snapshots``: the served snapshots (name, fingerprint, size).
- ``GET /tools``: tool names and OpenAI function definitions.
- ``POST /tools/call``: one call -> ``{name, text, data, flag, terminal, call_id}``.
- ``POST /tools/batch``: many calls in one request.
- ``POST /retrieve``: Search-R1's retrieval API (see :mod:`.retrieve`).

Blocking work (searches, the Python sandbox) runs in a bounded thread pool, so
a slow call never stalls the event loop. :func:`add_tool_routes` mounts these
routes on the app that :func:`stillweb.server.app.make_app` builds, beside the
environment sessions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fastapi import APIRouter, FastAPI, Query, Request

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.reading import Snapshot

from stillweb.sandboxes.frozen import FrozenTool
from stillweb.sandboxes.tools.registry import ToolRegistry
from stillweb.server.plumbing import ERROR_RESPONSES, ApiError, ErrorBody, run_blocking
from stillweb.server.models import (
    SnapshotInfo,
    ToolBatchRequest,
    ToolBatchResponse,
    ToolCallRequest,
    ToolListResponse,
    ToolResultBody,
)
from stillweb.server.retrieve import retrieval_router
from stillweb.sandboxes.tools.types import ToolCall, ToolResult

__all__ = ["SnapshotCatalog", "add_tool_routes"]

NOT_FOUND = {404: {"model": ErrorBody, "description": "unknown snapshot"}}


class SnapshotCatalog:
    """The served snapshots by name (the directory name), each with its tool registry.

    ``snapshots`` are paths or opened :class:`Snapshot` objects; the first is the default.
    ``frozen_tools``: :class:`~stillweb.sandboxes.frozen.FrozenToolSpec` dicts of frozen live
    tools every registry mounts (and sessions may ask for by name).
    Raises ``ValueError`` for an empty list or two snapshots with the same name.
    """

    def __init__(self, snapshots: Sequence[str | Path | Snapshot], frozen_tools: Sequence[dict] = ()) -> None:
        if not snapshots:
            raise UsageError("serve at least one snapshot")
        self._snapshots: dict[str, Snapshot] = {}
        for item in snapshots:
            snapshot = item if isinstance(item, Snapshot) else Snapshot.open(item)
            name = Path(snapshot.path).name
            if name in self._snapshots:
                raise UsageError(f"two served snapshots are named {name!r}: serve directories with distinct names")
            self._snapshots[name] = snapshot
        self.frozen_tools = {spec["name"]: dict(spec) for spec in frozen_tools}
        frozen = [FrozenTool.from_spec(spec) for spec in self.frozen_tools.values()]
        self._registries = {name: ToolRegistry(snapshot, extra=frozen) for name, snapshot in self._snapshots.items()}
        self.default_name = next(iter(self._snapshots))

    @property
    def names(self) -> tuple[str, ...]:
        """Snapshot names, default first."""
        return tuple(self._snapshots)

    def resolve_name(self, name: str | None) -> str:
        """``name`` if served, the default for ``None``; :class:`ApiError` 404 otherwise."""
        if name is None:
            return self.default_name
        if name not in self._snapshots:
            raise ApiError(404, "snapshot_not_found", f"no snapshot named {name[:200]!r}; served: {list(self.names)}")
        return name

    def snapshot(self, name: str | None = None) -> Snapshot:
        """The snapshot named ``name`` (``None``: the default)."""
        return self._snapshots[self.resolve_name(name)]

    def registry(self, name: str | None = None) -> ToolRegistry:
        """The tool registry (every tool) of snapshot ``name``."""
        return self._registries[self.resolve_name(name)]

    def infos(self) -> list[SnapshotInfo]:
        """A description of every served snapshot."""
        return [SnapshotInfo(name=name, fingerprint=snap.fingerprint, documents=len(snap)) for name, snap in self._snapshots.items()]


def add_tool_routes(app: FastAPI, catalog: SnapshotCatalog) -> None:
    """Mount the snapshot, tool and retrieval routes on ``app`` (stores ``app.state.catalog``)."""
    app.state.catalog = catalog
    app.include_router(_tool_router(catalog))
    app.include_router(retrieval_router(catalog))


def _tool_router(catalog: SnapshotCatalog) -> APIRouter:
    router = APIRouter(tags=["tools"], responses=ERROR_RESPONSES)

    @router.get("/snapshots", response_model=list[SnapshotInfo], summary="The served snapshots")
    async def list_snapshots() -> list[SnapshotInfo]:
        """Name, content fingerprint and document count of every served snapshot; the first is the default."""
        return catalog.infos()

    @router.get("/tools", response_model=ToolListResponse, responses=NOT_FOUND, summary="Tools and their schemas")
    async def list_tools(snapshot: str | None = Query(default=None, max_length=200, description="snapshot name")) -> ToolListResponse:
        """The tools offered over a snapshot, as OpenAI function definitions."""
        name = catalog.resolve_name(snapshot)
        registry = catalog.registry(name)
        return ToolListResponse(snapshot=name, names=list(registry.names), schemas=registry.schemas())

    @router.post("/tools/call", response_model=ToolResultBody, responses=NOT_FOUND, summary="Call one tool")
    async def call_tool(body: ToolCallRequest, request: Request) -> ToolResultBody:
        """Validate and run one tool call. Bad input is a result with a ``flag``
        (``unknown_tool``, ``bad_arguments``, ``not_found``, ...), exactly as in-process."""
        registry = catalog.registry(body.snapshot)
        result = await run_blocking(request, registry.call, _tool_call(body))
        request.app.state.counter.add("tool_calls")
        return _result_body(result)

    @router.post("/tools/batch", response_model=ToolBatchResponse, responses=NOT_FOUND, summary="Call many tools")
    async def call_batch(body: ToolBatchRequest, request: Request) -> ToolBatchResponse:
        """Run the calls in order (each may name its snapshot) and return their results in the same order."""
        jobs = [(catalog.registry(call.snapshot), _tool_call(call)) for call in body.calls]
        results = await run_blocking(request, _run_jobs, jobs)
        request.app.state.counter.add("tool_calls", len(jobs))
        return ToolBatchResponse(results=[_result_body(result) for result in results])

    return router


def _run_jobs(jobs: list[tuple[ToolRegistry, ToolCall]]) -> list[ToolResult]:
    """Each snapshot's calls through :meth:`ToolRegistry.call_many` (its searches as one batch on
    every core), the results back in request order."""
    positions: dict[int, list[int]] = {}
    registries: dict[int, ToolRegistry] = {}
    for position, (registry, _call) in enumerate(jobs):
        positions.setdefault(id(registry), []).append(position)
        registries[id(registry)] = registry
    results: list[ToolResult | None] = [None] * len(jobs)
    for key, indexes in positions.items():
        for position, result in zip(indexes, registries[key].call_many([jobs[i][1] for i in indexes])):
            results[position] = result
    return results


def _tool_call(body: ToolCallRequest) -> ToolCall:
    return ToolCall(name=body.name, arguments=body.arguments, call_id=body.call_id)


def _result_body(result: ToolResult) -> ToolResultBody:
    return ToolResultBody(**result.to_dict())
