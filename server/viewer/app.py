"""The viewer app: the tool and session API of ``stillweb serve`` plus the viewer's pages.

The pages reuse the server's parts rather than copies of them: searches go through
the snapshot's :class:`~stillweb.sandboxes.ToolRegistry` (the agent's tools),
hand-played episodes through the ``/sessions`` routes (the API remote trainers use).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlencode

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

import stillweb.envs  # noqa: F401 - registers the environments sessions serve
from stillweb.corpora.snapshot.shared import shared_snapshot
from stillweb.server.plumbing import ServerSettings, create_base_app
from stillweb.server.session_store import SessionStore
from stillweb.envs.registration import SERVED_ENV_IDS
from stillweb.server.sessions import add_session_routes
from stillweb.server.tools import SnapshotCatalog, add_tool_routes
from stillweb.server.viewer import browse, play, replay, run_health, runs, tasks
from stillweb.server.viewer.pages import error_page

__all__ = ["ViewerConfig", "make_viewer_app"]

PREFIX = "/view"


@dataclass(frozen=True)
class ViewerConfig:
    """What the viewer shows.

    ``snapshot``: the snapshot directory; ``tasks``: a task-set name inside it
    (``None``: the first one, if any); ``episodes``: recording files or
    directories of ``*.jsonl`` recordings (hand-played episodes are saved into
    the first directory among them).
    """

    snapshot: str | Path
    tasks: str | None = None
    episodes: Sequence[str | Path] = field(default_factory=tuple)


def make_viewer_app(config: ViewerConfig | str | Path, settings: ServerSettings | None = None) -> FastAPI:
    """The FastAPI app serving the viewer pages under ``/view`` and the server API beside them."""
    if not isinstance(config, ViewerConfig):
        config = ViewerConfig(snapshot=config)
    settings = settings or ServerSettings(max_sessions=32)
    app = create_base_app(settings, title="stillweb viewer", description=__doc__ or "")
    snapshot = shared_snapshot(config.snapshot)
    catalog = SnapshotCatalog([snapshot])
    add_tool_routes(app, catalog)
    add_session_routes(app, catalog, SERVED_ENV_IDS, SessionStore(settings.max_sessions, settings.idle_timeout_s))
    task_set = tasks.TaskSetView.open(snapshot, config.tasks)
    trajectories = replay.TrajectoryFiles([Path(path) for path in config.episodes])
    app.include_router(browse.router(catalog), prefix=PREFIX)
    app.include_router(tasks.router(catalog, task_set), prefix=PREFIX)
    app.include_router(runs.router(trajectories, snapshot.fingerprint), prefix=PREFIX)
    app.include_router(replay.router(catalog, trajectories, task_set), prefix=PREFIX)
    app.include_router(play.router(app, catalog, task_set, trajectories), prefix=PREFIX)
    app.include_router(run_health.router(trajectories), prefix=PREFIX)
    app.mount(f"{PREFIX}/static", StaticFiles(packages=[("stillweb.server.viewer", "static")]), name="viewer-static")

    @app.get("/", include_in_schema=False)
    async def home() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    _html_errors_for_pages(app)
    return app


def _html_errors_for_pages(app: FastAPI) -> None:
    """Bad query parameters and unknown routes under ``/view`` get an HTML page saying
    what was wrong; the API routes keep their JSON error bodies."""
    api_handlers = {kind: app.exception_handlers[kind] for kind in (RequestValidationError, StarletteHTTPException)}

    async def page_or_api_error(request: Request, error: Exception) -> Response:
        if not request.url.path.startswith(f"{PREFIX}/"):
            kind = RequestValidationError if isinstance(error, RequestValidationError) else StarletteHTTPException
            return await api_handlers[kind](request, error)
        if isinstance(error, RequestValidationError):
            problems = "; ".join(f"{'.'.join(str(part) for part in item.get('loc', ())[1:])}: {item.get('msg', '')}" for item in error.errors())
            return error_page(422, "Bad request", f"The page cannot be shown with these parameters ({problems}).",
                              back=_without_bad_parameters(request, error))
        status = getattr(error, "status_code", 500)
        return error_page(status, "Not found" if status == 404 else "Error", f"No page {request.url.path!r} here: start from {PREFIX}/.")

    for kind in api_handlers:
        app.add_exception_handler(kind, page_or_api_error)


def _without_bad_parameters(request: Request, error: RequestValidationError) -> tuple[str, str] | None:
    """(url, label) of the requested page with the query parameters that failed validation left out
    (the valid ones kept), ``None`` when no query parameter was at fault."""
    bad = list(dict.fromkeys(str(item["loc"][1]) for item in error.errors() if len(item.get("loc", ())) > 1 and item["loc"][0] == "query"))
    if not bad:
        return None
    kept = [(name, value) for name, value in request.query_params.multi_items() if name not in bad]
    return f"{quote(request.url.path)}{'?' + urlencode(kept) if kept else ''}", f"Back to this page without {', '.join(bad)}"
