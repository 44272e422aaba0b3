"""The run-health page: the health report and plots of the viewer's recordings.

``/view/health`` shows every trajectory file merged in listing order (``?file=NAME``: one
of them): the report ``stillweb health`` prints (baseline and recent figures, warnings)
and the figures ``stillweb health --plot`` draws, the very same SVG
(:mod:`stillweb.server.health_svg`), inline. ``?window=`` and ``?baseline=`` set the
:class:`~stillweb.envs.runs.health.HealthConfig` sizes; ``?by=policy_version`` puts the recorded
policy version on the x axis. A damaged file is plotted with the
episodes read before the damage, and the page says what is wrong with it; an unknown
file name gets a page listing the names there are.
"""

from __future__ import annotations

import threading
from urllib.parse import urlencode

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from stillweb.envs.runs.health import HealthConfig, describe_report
from stillweb.envs.runs.health_series import X_AXES, RunPlots, run_plots
from stillweb.envs.runs.run_summary import RecordingSummary
from stillweb.server.health_svg import figure_svg
from stillweb.server.viewer.pages import error_page, render
from stillweb.server.viewer.trajectories import TrajectoryFiles

__all__ = ["router"]

CACHED_PLOTS = 4  # runs whose figures are kept (a page reload of an unchanged run draws nothing again)


class _PlotCache:
    """The last few runs' plots and SVG figures, keyed by their summaries (the same objects while the
    files are unchanged, see TrajectoryFiles.summaries) and the plot parameters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[tuple[tuple[RecordingSummary, ...], tuple, RunPlots, list[Markup]]] = []

    def get(self, summaries: list[RecordingSummary], parameters: tuple) -> tuple[RunPlots, list[Markup]] | None:
        with self._lock:
            for kept, kept_parameters, plots, svgs in self._entries:
                if kept_parameters == parameters and len(kept) == len(summaries) and all(a is b for a, b in zip(kept, summaries)):
                    return plots, svgs
        return None

    def put(self, summaries: list[RecordingSummary], parameters: tuple, plots: RunPlots, svgs: list[Markup]) -> None:
        with self._lock:
            self._entries = [(tuple(summaries), parameters, plots, svgs)] + self._entries[: CACHED_PLOTS - 1]


def router(files: TrajectoryFiles) -> APIRouter:
    """The ``/health`` page over ``files``."""
    pages = APIRouter(include_in_schema=False)
    cache = _PlotCache()

    @pages.get("/health", response_class=HTMLResponse)
    def health_page(file: str | None = Query(default=None, max_length=1000),
                    window: int = Query(default=HealthConfig.window, ge=1, le=100_000),
                    baseline: int = Query(default=HealthConfig.baseline, ge=1, le=100_000),
                    by: str = Query(default="episode", max_length=100)) -> HTMLResponse:
        listing = files.listing()
        names = [name for name, _ in listing]
        if file is not None and file not in names:
            known = ", ".join(names) or "none (start the viewer with --episodes PATH)"
            return error_page(404, "No such trajectory file", f"no trajectory file named {file!r}; the files are: {known}",
                              back=("/view/health", "Back to the health plots of every file"))
        if by not in X_AXES:
            return error_page(422, "No such x axis", f"by={by!r}: the plots' x axis is one of {', '.join(X_AXES)}",
                              back=(f"/view/health{'?' + urlencode({'file': file}) if file else ''}", "Back to the health plots by episode"))
        current = [summary for summary in files.summaries() if file is None or summary.name == file]
        parameters = (file, window, baseline, by)
        drawn = cache.get(current, parameters)
        if drawn is None:
            try:
                plots = run_plots(current, HealthConfig(window=window, baseline=baseline),
                                  name=file or ("merged" if len(current) > 1 else None), by=by)
                drawn = plots, [Markup(figure_svg(figure, plots)) for figure in plots.figures]
            except ValueError as error:  # a config the plots refuse, or by policy version where no episode records one
                title = "Cannot plot by policy version" if by == "policy_version" else "Cannot plot these files"
                return error_page(422, title, str(error))
            except Exception as error:  # noqa: BLE001 - recordings are file input: any failure is a page saying so
                return error_page(422, "Cannot plot these files", f"{type(error).__name__}: {str(error)[:500]}")
            cache.put(current, parameters, *drawn)
        plots, svgs = drawn
        return render("health.html", names=names, file=file, plots=plots, configured=bool(files.paths),
                      window=window, baseline=baseline, by=by,
                      report=describe_report(plots.name, plots.report, plots.without_stats) if current else None,
                      figures=svgs if current else [])

    return pages
