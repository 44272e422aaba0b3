"""Playing a task by hand: the pages drive an episode through the ``/sessions`` routes
(the API remote trainers use, called in-process over ASGI) and keep what each call
returned, so the episode can be saved in the :mod:`stillweb.envs.runs.recording` format:
``stillweb replay`` re-runs the saved file and finds every step identical.

Actions are typed as the policy's raw text, or built from a tool's schema fields
(the same text the reference agent writes); a bad call is the env's business: it
answers with an error observation, as it would to a policy.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote

import httpx
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from stillweb.corpora.errors import UsageError
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.agents.scripted import write_answer, write_call
from stillweb.envs.runs.recorded_snapshot import snapshot_header
from stillweb.corpora.canonical import canonical_json
from stillweb.envs.runs.recording import reset_record, step_record
from stillweb.sandboxes.formats import FORMATS
from stillweb.server.tools import SnapshotCatalog
from stillweb.server.viewer.evidence import TaskEvidence
from stillweb.server.viewer.pages import error_page, render
from stillweb.server.viewer.tasks import TaskSetView
from stillweb.server.viewer.trajectories import TrajectoryFiles, flags_of
from stillweb.envs.runs.recording_versions import INFO_VERSION

__all__ = ["PlayLog", "router", "arguments_from_form"]

ENV_ID = "stillweb/WikiQA-v0"
TOOL_FORMATS = tuple(FORMATS)  # the registry's, in its order
MAX_LOGS = 64
MAX_LISTED_TASKS = 500
PLAY_SEED = 0


@dataclass
class PlayLog:
    """A hand-played episode: the recording's header and records, and the messages the model sees."""

    header: dict[str, Any]
    task_id: str
    records: list[dict[str, Any]] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)
    problem: str | None = None

    @property
    def over(self) -> bool:
        """True once a step terminated or truncated the episode."""
        last = self.records[-1] if self.records else {}
        return bool(last.get("terminated") or last.get("truncated"))

    def add(self, record: dict[str, Any], info: dict[str, Any], kept: int | None) -> None:
        """Append the record of a reset or step answered by the session API; ``info`` (with
        its message delta, see :meth:`~stillweb.server.session_store.EnvSession.message_delta`) updates the context."""
        delta = info.get("messages")
        if isinstance(delta, list):
            self.messages = self.messages[: kept or 0] + delta
        self.records.append(record)

    def recording(self) -> bytes:
        """The episode as :class:`~stillweb.envs.RecordEpisodes` writes it (canonical JSON lines)."""
        return "".join(canonical_json(record) + "\n" for record in (self.header, *self.records)).encode("utf-8")


def arguments_from_form(parameters: Mapping[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    """A tool's arguments from form fields ``arg.<name>``, read by the schema's types:
    integers and numbers parsed when they parse, arrays split on commas, empty fields
    left out (validation then tells the player what is missing, as it tells a policy).

    >>> arguments_from_form({"properties": {"query": {"type": "string"}, "k": {"type": "integer"}}},
    ...                     {"arg.query": "river", "arg.k": "3"})
    {'query': 'river', 'k': 3}
    """
    arguments: dict[str, Any] = {}
    for name, spec in (parameters.get("properties") or {}).items():
        raw = form.get(f"arg.{name}", "").strip()
        if raw:
            arguments[name] = _typed(raw, spec)
    return arguments


def _typed(raw: str, spec: Mapping[str, Any]) -> Any:
    kind = spec.get("type") or next((option.get("type") for option in spec.get("anyOf") or () if option.get("type")), "string")
    if kind == "array":
        return [_number_or_text(item.strip()) for item in raw.split(",") if item.strip()]
    if kind in ("integer", "number"):
        return _number_or_text(raw)
    if kind == "boolean":
        return raw.lower() in ("1", "true", "on", "yes")
    return raw


def _number_or_text(raw: str) -> Any:
    try:
        return int(raw)
    except ValueError:
        try:
            return float(raw)
        except ValueError:
            return raw


class SessionClient:
    """Calls the app's own ``/sessions`` routes over ASGI (no socket, the same code path as HTTP)."""

    def __init__(self, app: FastAPI) -> None:
        self.transport = httpx.ASGITransport(app=app)

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """(status, decoded JSON body) of ``POST path``."""
        async with httpx.AsyncClient(transport=self.transport, base_url="http://viewer") as client:
            response = await client.post(path, json=body)
        return response.status_code, json.loads(response.content)


def router(app: FastAPI, catalog: SnapshotCatalog, task_set: TaskSetView, files: TrajectoryFiles) -> APIRouter:
    """The play pages."""
    snapshot = catalog.snapshot()
    schemas = {schema["function"]["name"]: schema["function"] for schema in catalog.registry().schemas()}
    sessions = SessionClient(app)
    logs: OrderedDict[str, PlayLog] = OrderedDict()
    pages = APIRouter(include_in_schema=False)

    @pages.get("/play", response_class=HTMLResponse)
    def start_form(task_id: str = "") -> HTMLResponse:
        if task_set.name is None:
            return error_page(404, "No task set", str(task_set.problem))
        return render("play_start.html", tasks=task_set.tasks[:MAX_LISTED_TASKS], chosen=task_id, formats=TOOL_FORMATS,
                      task_set=task_set)

    @pages.post("/play", response_class=HTMLResponse)
    async def start(request: Request) -> Response:
        form = await _form(request)
        task = task_set.by_id(form.get("task_id", ""))
        if task is None:
            return error_page(422, "No such task", f"Task set {task_set.name!r} has no task {form.get('task_id', '')!r}: pick one from the list.")
        tool_format = form.get("tool_format", "tongyi")
        if tool_format not in TOOL_FORMATS:
            return error_page(422, "Unknown tool format", f"tool_format must be one of {list(TOOL_FORMATS)}, got {tool_format!r}")
        kwargs: dict[str, Any] = {"tasks": task_set.name, "split": task.get("split") or "train", "tool_format": tool_format}
        if form.get("max_turns", "").isdigit():
            kwargs["max_turns"] = int(form["max_turns"])
        if form.get("context"):
            kwargs["context"] = True
        status, created = await sessions.post("/sessions", {"env_id": ENV_ID, "kwargs": kwargs})
        if status != 201:
            return error_page(status, "Could not start the episode", str(created.get("detail")))
        session_id = created["session_id"]
        options = {"task_id": task["task_id"]}
        status, reset = await sessions.post(f"/sessions/{session_id}/reset", {"seed": PLAY_SEED, "options": options, "request_id": "play-0"})
        if status != 200:
            return error_page(status, "Could not reset the episode", str(reset.get("detail")))
        header = {"type": "header", "env_id": ENV_ID, "kwargs": {**kwargs, "snapshot": str(snapshot.path)}, "package_version": PACKAGE_VERSION,
                  "info_version": INFO_VERSION, **snapshot_header(snapshot)}  # as RecordEpisodes writes it
        log = PlayLog(header, task["task_id"])
        log.add(reset_record(PLAY_SEED, options, reset["observation"], reset["info"]), reset["info"], reset["messages_kept"])
        logs[session_id] = log
        while len(logs) > MAX_LOGS:
            logs.popitem(last=False)
        return RedirectResponse(f"/view/play/{session_id}", status_code=303)

    @pages.get("/play/{session_id}", response_class=HTMLResponse)
    def play_page(session_id: str) -> HTMLResponse:
        log = logs.get(session_id)
        if log is None:
            return _unknown(session_id)
        return render("play.html", session_id=session_id, log=log, task=task_set.by_id(log.task_id) or {},
                      tools=schemas, tool_format=log.header["kwargs"]["tool_format"], can_save=files.save_dir is not None,
                      flags_of=flags_of, gold=TaskEvidence.of(task_set, log.task_id).gold if log.over else None)

    @pages.post("/play/{session_id}/step", response_class=HTMLResponse)
    async def step(session_id: str, request: Request) -> Response:
        log = logs.get(session_id)
        if log is None:
            return _unknown(session_id)
        form = await _form(request)
        log.problem = None
        try:
            action = _action(form, log.header["kwargs"]["tool_format"], schemas)
        except (ValueError, KeyError) as error:
            log.problem = f"cannot write that call: {error}"
            return RedirectResponse(f"/view/play/{session_id}", status_code=303)
        status, result = await sessions.post(f"/sessions/{session_id}/step", {"action": action, "request_id": f"play-{len(log.records)}"})
        if status != 200:
            log.problem = f"the session API answered {status}: {result.get('detail')}"
        else:
            record = step_record(action, result["observation"], result["reward"], result["terminated"], result["truncated"], result["info"])
            log.add(record, result["info"], result["messages_kept"])
        return RedirectResponse(f"/view/play/{session_id}#latest", status_code=303)  # the browser scrolls to the new step

    @pages.get("/play/{session_id}/recording.jsonl")
    def download(session_id: str) -> Response:
        log = logs.get(session_id)
        if log is None:
            return _unknown(session_id)
        return Response(log.recording(), media_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="played-{log.task_id}.jsonl"'})

    @pages.post("/play/{session_id}/save", response_class=HTMLResponse)
    def save(session_id: str) -> Response:
        log = logs.get(session_id)
        if log is None:
            return _unknown(session_id)
        directory = files.save_dir
        if directory is None:
            return error_page(409, "Nowhere to save", "Start the viewer with --episodes DIR (a directory) to save episodes there; "
                              "the download link works without it.")
        number = 0
        while (directory / f"played-{log.task_id}-{number}.jsonl").exists():
            number += 1
        path = directory / f"played-{log.task_id}-{number}.jsonl"
        path.write_bytes(log.recording())
        return RedirectResponse(f"/view/episodes/{quote(directory.name)}/{quote(path.name)}", status_code=303)

    return pages


def _action(form: Mapping[str, str], tool_format: str, schemas: Mapping[str, Any]) -> str:
    """The action text the form asks for: the typed text, or a call built from a tool's fields."""
    tool = form.get("tool", "")
    if not tool:
        return form.get("action", "")
    if tool not in schemas:
        raise UsageError(f"unknown tool {tool!r}; tools: {sorted(schemas)}")
    arguments = arguments_from_form(schemas[tool]["parameters"], form)
    if tool == "answer":
        return write_answer(tool_format, str(arguments.get("text", "")), list(arguments.get("citations", [])))
    return write_call(tool_format, tool, arguments)


async def _form(request: Request) -> dict[str, str]:
    """A urlencoded form body (first value per field)."""
    fields = parse_qs((await request.body()).decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[0] for name, values in fields.items()}


def _unknown(session_id: str) -> HTMLResponse:
    return error_page(404, "No such episode", f"No hand-played episode {session_id[:100]!r} here (the viewer may have restarted, "
                      "or the session expired): start a new one from the play page.")
