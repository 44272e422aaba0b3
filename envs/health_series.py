"""The data of the run-health plots: rolling series over a run's episodes, the health
thresholds that apply to each figure, and the episodes where ``stillweb health`` would warn.

Format collapse shows as curves before it shows in the loss (Bespoke Labs and Tongyi
DeepResearch on RL runs whose actions degenerate and grow while tool use stops; see
:mod:`stillweb.envs.health`). :func:`run_plots` takes the episodes of one or more
recordings (:func:`~stillweb.envs.run_summary.summarize_recording`, merged in the order
given) and gives one :class:`Figure` per question a person asks of a run:

- ``success``: success rate; ``turns``: mean turns per episode; ``truncation``: the share
  of episodes truncated, one line per reason (rolling over finished episodes);
- ``action_length``: action characters per turn, with the ``length_growth`` x baseline line;
- ``degenerate``: the share of steps raising any degenerate-action flag (the
  ``max_degenerate_share`` line) and each flag's own rate;
- ``tool_use``: tool calls per turn, with the ``1 - tool_use_drop`` x baseline line;
- ``format``: format errors per turn (baseline + ``format_error_rise``) and the share of
  repeated tool calls (``max_repeated_call_share``).

The health figures come from :class:`~stillweb.envs.health.RunHealth` itself: the
episodes' ``info["episode_stats"]`` are added one at a time, as
:class:`~stillweb.envs.health.HealthMonitor` adds them, and each point is the report's
``recent`` figure (the last ``HealthConfig.window`` episodes); a warning point is an
episode where a warning code is newly raised (again after it cleared), as the monitor logs
it. So the points where a plot shows a warning are those where ``stillweb health`` over the
same files, cut at that episode, reports it. The x axis is the finished episode's number
in recording order (1, 2, ...); where step records carry a ``policy_version`` (Ray rollout
workers write it), :attr:`RunPlots.versions` says at which episodes the version changes.
Unfinished episodes (a killed run's last one) are not plotted; finished ones without
``episode_stats`` (Lookup-v0, older recordings) count only for success, turns and truncation.

>>> plots = run_plots([summarize_recording("run/episodes.jsonl")], HealthConfig(window=50))  # doctest: +SKIP
>>> [figure.key for figure in plots.figures]  # doctest: +SKIP
['success', 'turns', 'action_length', 'truncation', 'degenerate', 'tool_use', 'format']
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stillweb.envs.degenerate import ACTION_FLAGS
from stillweb.envs.health import HealthConfig, HealthReport, RunHealth
from stillweb.envs.run_summary import EpisodeSummary, RecordingSummary

__all__ = ["Series", "Threshold", "WarningPoint", "Figure", "RunPlots", "run_plots", "SHARE", "RATE"]

SHARE = "share"  # values in [0, 1], drawn as percentages
RATE = "rate"  # values >= 0 (per turn, per episode)
NO_REASON = "(no reason recorded)"


@dataclass(frozen=True)
class Series:
    """One line of a figure: its label and its (episode number, value) points, in episode order
    (``total``: an aggregate of the other lines, such as "any flag", drawn wide beneath them)."""

    label: str
    points: tuple[tuple[int, float], ...]
    total: bool = False


@dataclass(frozen=True)
class Threshold:
    """A horizontal line on a figure from episode ``start`` on: a health threshold (``code``: the warning it
    raises) or, with ``code`` None, a reference such as the baseline value."""

    label: str
    value: float
    start: int
    code: str | None


@dataclass(frozen=True)
class WarningPoint:
    """An episode where ``code`` was newly raised: the warning's message and the figure value it judged."""

    episode: int
    code: str
    message: str
    value: float


@dataclass(frozen=True)
class Figure:
    """One plot: a key, a title, the unit of its y axis (:data:`SHARE` or :data:`RATE`), its lines,
    thresholds, warning points and a note (what applies, what is missing)."""

    key: str
    title: str
    unit: str
    series: tuple[Series, ...]
    thresholds: tuple[Threshold, ...]
    warnings: tuple[WarningPoint, ...]
    note: str


@dataclass(frozen=True)
class RunPlots:
    """Every figure of one run, with what the plots are of.

    ``episodes``: finished episodes plotted (x from 1 to it); ``baseline_end``: the episode
    that completed the health baseline (None while it is incomplete); ``versions``: (episode,
    policy version) where the recorded version changes (empty when none is recorded);
    ``report``: the health report at the run's end; ``problems``: (file, what is wrong) of
    damaged files, plotted with the episodes read before the damage.
    """

    name: str
    config: HealthConfig
    episodes: int
    baseline_end: int | None
    versions: tuple[tuple[int, int], ...]
    figures: tuple[Figure, ...]
    report: HealthReport
    without_stats: int
    unfinished: int
    problems: tuple[tuple[str, str], ...]


# Which figure shows each warning code of RunHealth.
_FIGURE_OF_CODE = {"length_up": "action_length", "degenerate_actions": "degenerate", "tool_use_down": "tool_use",
                   "format_errors_up": "format", "repeated_calls": "format"}


def run_plots(recordings: Sequence[RecordingSummary], config: HealthConfig | Mapping[str, Any] | None = None,
              name: str | None = None) -> RunPlots:
    """The figures of the episodes of ``recordings`` merged in the order given (``name``: the run's
    name, default the single file's name or ``merged``)."""
    config = HealthConfig.from_value(config)
    episodes = [episode for recording in recordings for episode in recording.episodes]
    finished = [episode for episode in episodes if episode.ending != "unfinished"]
    health = _HealthTrace(config, finished)
    figures = (
        _episode_figure("success", "Success rate", finished, config.window, lambda episode: float(episode.success)),
        _turns_figure(finished, config.window),
        _action_length_figure(health, config),
        _truncation_figure(finished, config.window),
        _degenerate_figure(health, config),
        _tool_use_figure(health, config),
        _format_figure(health, config),
    )
    return RunPlots(
        name=name or (recordings[0].name if len(recordings) == 1 else "merged"), config=config, episodes=len(finished),
        baseline_end=health.baseline_end, versions=_version_changes(finished), figures=figures,
        report=health.final, without_stats=len(finished) - len(health.numbers), unfinished=len(episodes) - len(finished),
        problems=tuple((recording.name, recording.problem) for recording in recordings if recording.problem),
    )


class _HealthTrace:
    """RunHealth fed one finished episode's stats at a time: its report after each, and the newly raised warnings."""

    def __init__(self, config: HealthConfig, finished: list[EpisodeSummary]) -> None:
        run = RunHealth(config)
        self.numbers: list[int] = []  # the episode number of each episode with stats
        self.reports: list[HealthReport] = []
        self.flag_rates: list[dict[str, float]] = []
        self.raised: list[WarningPoint] = []
        window: deque[Mapping[str, Any]] = deque(maxlen=config.window)
        active: set[str] = set()
        for number, episode in enumerate(finished, start=1):
            if episode.stats is None:
                continue
            run.add(episode.stats)
            report = run.report()
            window.append(episode.stats)
            self.numbers.append(number)
            self.reports.append(report)
            self.flag_rates.append(_flag_rates(window))
            self.raised += [WarningPoint(number, warning.code, warning.message, warning.recent)
                            for warning in report.warnings if warning.code not in active]  # as HealthMonitor logs them
            active = {warning.code for warning in report.warnings}
        self.final = run.report()
        self.baseline_end = self.numbers[config.baseline - 1] if len(self.numbers) >= config.baseline else None

    def series(self, label: str, key: str) -> Series:
        """The recent-window figure ``key`` after each episode."""
        return Series(label, tuple((number, float(report.recent[key])) for number, report in zip(self.numbers, self.reports)))

    def warnings(self, figure: str) -> tuple[WarningPoint, ...]:
        """The warning points of the codes ``figure`` shows."""
        return tuple(point for point in self.raised if _FIGURE_OF_CODE[point.code] == figure)

    def baseline_value(self, key: str) -> float | None:
        """The baseline figure ``key`` once the baseline is complete."""
        return float(self.final.baseline[key]) if self.baseline_end is not None and self.final.baseline else None


def _flag_rates(window: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Each degenerate-action flag's steps over all steps of the window (the denominator of ``degenerate_share``)."""
    window = list(window)
    turns = max(sum(int(stats.get("turns", 0)) for stats in window), 1)
    return {name: sum(int((stats.get("flags") or {}).get(name, 0)) for stats in window) / turns for name in ACTION_FLAGS}


def _rolling(finished: list[EpisodeSummary], window: int, value: Callable[[EpisodeSummary], float]) -> tuple[tuple[int, float], ...]:
    """The mean of ``value`` over the last ``window`` finished episodes, after each episode."""
    recent: deque[float] = deque(maxlen=window)
    points = []
    for number, episode in enumerate(finished, start=1):
        recent.append(value(episode))
        points.append((number, sum(recent) / len(recent)))
    return tuple(points)


def _no_threshold_note(window: int) -> str:
    return f"rolling over the last {window} finished episodes; no health threshold applies"


def _episode_figure(key: str, title: str, finished: list[EpisodeSummary], window: int,
                    value: Callable[[EpisodeSummary], float]) -> Figure:
    series = (Series(title.lower(), _rolling(finished, window, value)),)
    return Figure(key, title, SHARE, series, (), (), _no_threshold_note(window))


def _turns_figure(finished: list[EpisodeSummary], window: int) -> Figure:
    series = (Series("turns per episode", _rolling(finished, window, lambda episode: float(episode.turns))),)
    return Figure("turns", "Mean turns per episode", RATE, series, (), (), _no_threshold_note(window))


def _truncation_figure(finished: list[EpisodeSummary], window: int) -> Figure:
    reasons = sorted({episode.truncation_reason or NO_REASON for episode in finished if episode.ending == "truncated"})
    series = tuple(Series(reason, _rolling(finished, window, lambda episode, reason=reason: float(
        episode.ending == "truncated" and (episode.truncation_reason or NO_REASON) == reason))) for reason in reasons)
    note = _no_threshold_note(window) + ("" if reasons else "; no episode was truncated")
    return Figure("truncation", "Truncation share by reason", SHARE, series, (), (), note)


def _drift_note(health: _HealthTrace, config: HealthConfig) -> str:
    if health.baseline_end is None:
        return f"the baseline needs {config.baseline} episodes with episode_stats, the run has {len(health.numbers)}"
    return (f"rolling over the last {config.window} episodes; baseline: the first {config.baseline}; "
            f"checked from {config.baseline + config.window} episodes with episode_stats on")


def _action_length_figure(health: _HealthTrace, config: HealthConfig) -> Figure:
    base = health.baseline_value("action_chars_per_turn")
    lines: tuple[Threshold, ...] = ()
    if base is not None and health.baseline_end is not None:
        lines = (Threshold(f"baseline {base:.0f}", base, health.baseline_end, None),
                 Threshold(f"length_up: {config.length_growth:g} x baseline = {base * config.length_growth:.0f}",
                           base * config.length_growth, health.baseline_end, "length_up"))
    series = (health.series("characters per turn", "action_chars_per_turn"),)
    return Figure("action_length", "Action length (characters per turn)", RATE, series, lines,
                  health.warnings("action_length"), _drift_note(health, config))


def _degenerate_figure(health: _HealthTrace, config: HealthConfig) -> Figure:
    raised = [name for name in ACTION_FLAGS if any(rates[name] > 0 for rates in health.flag_rates)]
    series = (Series("any flag", health.series("", "degenerate_share").points, total=True),) + tuple(
        Series(name, tuple(zip(health.numbers, (rates[name] for rates in health.flag_rates)))) for name in raised)
    line = Threshold(f"degenerate_actions: above {config.max_degenerate_share:.0%}", config.max_degenerate_share, 1,
                     "degenerate_actions")
    quiet = [name for name in ACTION_FLAGS if name not in raised]
    note = f"rolling over the last {config.window} episodes" + (f"; never raised: {', '.join(quiet)}" if quiet else "")
    return Figure("degenerate", "Degenerate-action flags (share of steps)", SHARE, series, (line,),
                  health.warnings("degenerate"), note)


def _tool_use_figure(health: _HealthTrace, config: HealthConfig) -> Figure:
    base = health.baseline_value("tool_calls_per_turn")
    lines: tuple[Threshold, ...] = ()
    if base is not None and health.baseline_end is not None:
        floor = base * (1 - config.tool_use_drop)
        lines = (Threshold(f"baseline {base:.2f}", base, health.baseline_end, None),
                 Threshold(f"tool_use_down: at or below {1 - config.tool_use_drop:g} x baseline = {floor:.2f}", floor,
                           health.baseline_end, "tool_use_down"))
    series = (health.series("tool calls per turn", "tool_calls_per_turn"),)
    return Figure("tool_use", "Tool use (calls per turn)", RATE, series, lines, health.warnings("tool_use"),
                  _drift_note(health, config))


def _format_figure(health: _HealthTrace, config: HealthConfig) -> Figure:
    base = health.baseline_value("format_errors_per_turn")
    lines = [Threshold(f"repeated_calls: above {config.max_repeated_call_share:.0%} of calls",
                       config.max_repeated_call_share, 1, "repeated_calls")]
    if base is not None and health.baseline_end is not None:
        lines.insert(0, Threshold(f"format_errors_up: baseline {base:.2f} + {config.format_error_rise:g}",
                                  base + config.format_error_rise, health.baseline_end, "format_errors_up"))
    series = (health.series("format errors per turn", "format_errors_per_turn"),
              health.series("repeated calls (share of calls)", "repeated_call_share"))
    return Figure("format", "Format errors and repeated calls", RATE, series, tuple(lines), health.warnings("format"),
                  _drift_note(health, config))


def _version_changes(finished: list[EpisodeSummary]) -> tuple[tuple[int, int], ...]:
    """(episode number, policy version) of each episode whose recorded version differs from the last one recorded."""
    changes: list[tuple[int, int]] = []
    for number, episode in enumerate(finished, start=1):
        if episode.policy_version is not None and (not changes or changes[-1][1] != episode.policy_version):
            changes.append((number, episode.policy_version))
    return tuple(changes)
