"""Replay pages: the trajectory files, one episode step by step (the policy's text,
its parsed calls, the observation, reward parts, flags and the managed context) or
all its steps on one page (``?view=all``, under a strip of per-step rewards and
flags), and two episodes side by side, their first difference marked."""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse

from stillweb.sandboxes.formats import get_format
from stillweb.server.tools import SnapshotCatalog
from stillweb.server.viewer.divergence import first_difference
from stillweb.server.viewer.evidence import TaskEvidence, step_evidence
from stillweb.server.viewer.pages import error_page, render
from stillweb.server.viewer.tasks import TaskSetView
from stillweb.server.viewer.trajectories import ContextReruns, EpisodeRecord, Recording, TrajectoryError, TrajectoryFiles, flags_of, raised_flags

__all__ = ["router", "step_view", "strip_cells"]

RUNS_TABLE = ("/view/episodes", "Back to the recorded episodes")  # the way back from a file or episode that cannot be shown

def step_view(recording: Recording, line: tuple[int, dict[str, Any]], context: dict | str | None,
              evidence: TaskEvidence | None = None) -> dict[str, Any]:
    """Everything a page shows about one recorded reset or step; with ``evidence``, also the
    task's evidence documents the step showed or opened (:func:`~stillweb.server.viewer.evidence.step_evidence`)."""
    number, record = line
    info = record.get("info") if isinstance(record.get("info"), dict) else {}
    view: dict[str, Any] = {"line": number, "record": record, "info": info, "flags": flags_of(info),
                            "reward_parts": info.get("reward_parts"), "parsed": None, "rerun": None}
    if record.get("type") == "step" and isinstance(record.get("action"), str):
        try:
            view["parsed"] = get_format(recording.tool_format, **recording.format_options).parse(record["action"])
        except (ValueError, TypeError):
            view["parsed"] = None
    if isinstance(context, dict):
        view["rerun"] = context.get(number)
    view["task_evidence"] = evidence
    view["evidence"] = step_evidence(evidence, record, view["parsed"]) if evidence is not None else None
    return view


def strip_cells(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One cell per record of an episode (from :func:`step_view`): its index, reward, the flags
    it raised (:func:`raised_flags`), its ending (``terminated``, ``truncated`` or ``""``) and reason."""
    cells = []
    for index, view in enumerate(views):
        record, info = view["record"], view["info"]
        ending = "terminated" if record.get("terminated") else "truncated" if record.get("truncated") else ""
        cells.append({"index": index, "reward": record.get("reward"), "ending": ending,
                      "raised": raised_flags(info, views[index - 1]["info"]) if index else {},
                      "reason": info.get("truncation_reason" if ending == "truncated" else "termination_reason") if ending else None})
    return cells


def _episode_or_error(recording: Recording, index: int) -> EpisodeRecord:
    if not recording.episodes:
        raise TrajectoryError(f"{recording.name!r} has a header but no episodes")
    if not 0 <= index < len(recording.episodes):
        stopped = f" (reading stopped at the damage: {recording.problem})" if recording.problem else ""
        raise TrajectoryError(f"{recording.name!r} has episodes 0..{len(recording.episodes) - 1}, not {index}{stopped}")
    return recording.episodes[index]


def router(catalog: SnapshotCatalog, files: TrajectoryFiles, task_set: TaskSetView | None = None) -> APIRouter:
    """The episode and comparison pages (with ``task_set``, a replay marks its task's evidence; the list of
    episodes is :mod:`~stillweb.server.viewer.runs`)."""
    reruns = ContextReruns(catalog.snapshot())
    fingerprint = catalog.snapshot().fingerprint
    pages = APIRouter(include_in_schema=False)

    @pages.get("/episodes/{name:path}", response_class=HTMLResponse)
    def episode_page(name: str, episode: int = Query(default=0, ge=0), step: int = Query(default=0, ge=0),
                     view: Literal["step", "all"] = Query(default="step")) -> HTMLResponse:
        try:
            recording = files.open(name)
        except TrajectoryError as error:
            return error_page(error.status, "Cannot show this trajectory", str(error), back=RUNS_TABLE)
        try:
            chosen = _episode_or_error(recording, episode)
        except TrajectoryError as error:
            first = (f"/view/episodes/{quote(name)}", "Back to this file's first episode") if recording.episodes else RUNS_TABLE
            return error_page(error.status, "Cannot show this trajectory", str(error), back=first)
        lines = (chosen.reset, *chosen.steps)
        evidence = TaskEvidence.of(task_set, chosen.task_id) if task_set is not None else None
        outline = [step_view(recording, line, None, evidence) for line in lines]
        if view == "all":
            return render("trajectory.html", recording=recording, episode=chosen, views=outline, cells=strip_cells(outline),
                          other_snapshot=recording.other_snapshot(fingerprint))
        step = min(step, len(lines) - 1)
        context = reruns.context(recording)
        return render("episode.html", recording=recording, episode=chosen, step=step, count=len(lines),
                      view=step_view(recording, lines[step], context, evidence),
                      context_problem=context if isinstance(context, str) else None, outline=outline, cells=strip_cells(outline),
                      other_snapshot=recording.other_snapshot(fingerprint))

    @pages.get("/compare", response_class=HTMLResponse)
    def compare(a: str = Query(max_length=1000), b: str = Query(max_length=1000),
                ae: int = Query(default=0, ge=0), be: int = Query(default=0, ge=0)) -> HTMLResponse:
        sides = []
        try:
            for name, index in ((a, ae), (b, be)):
                recording = files.open(name)
                sides.append((recording, _episode_or_error(recording, index)))
        except TrajectoryError as error:
            return error_page(error.status, "Cannot compare these trajectories", str(error), back=RUNS_TABLE)
        columns = [[step_view(recording, line, None) for line in (episode.reset, *episode.steps)] for recording, episode in sides]
        rows = list(zip_longest(*columns))
        return render("compare.html", sides=sides, rows=rows, same_task=sides[0][1].task_id == sides[1][1].task_id,
                      divergence=first_difference(sides[0][1], sides[1][1]), fingerprint=fingerprint)

    return pages
