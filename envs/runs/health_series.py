"""The data of the run-health plots: series over a run's episodes, the health thresholds
that apply to each figure, and the episodes where ``stillweb health`` would warn.

Format collapse shows as curves before it shows in the loss (Bespoke Labs and Tongyi
DeepResearch on RL runs whose actions degenerate and grow while tool use stops; see
:mod:`stillweb.envs.runs.health`). :func:`run_plots` takes the episodes of one or more
recordings (:func:`~stillweb.envs.runs.run_summary.summarize_recording`, merged in the order
given) and gives one :class:`Figure` per question a person asks of a run:

- ``success``: success rate; ``turns``: mean turns per episode; ``truncation``: the share
  of episodes truncated, one line per reason;
- ``action_length``: action characters per turn, with the ``length_growth`` x baseline line;
- ``degenerate``: the share of steps raising any degenerate-action flag (the
  ``max_degenerate_share`` line) and each flag's own rate;
- ``tool_use``: tool calls per turn, with the ``1 - tool_use_drop`` x baseline line;
- ``format``: format errors per turn (baseline + ``format_error_rise``) and the share of
  repeated tool calls (``max_repeated_call_share``).

Two x axes (``by``). ``"episode"``: the finished episode's number in recording order; each
point rolls over the last ``HealthConfig.window`` episodes, as
:class:`~stillweb.envs.runs.health.RunHealth` does (the health figures are its ``figures`` of
the same window: the report's ``recent``), and :attr:`RunPlots.versions` says where a
recorded ``policy_version`` changes. ``"policy_version"``: one point per version the step
records carry (Ray rollout workers write it), over all that version's episodes.

Warning points come from RunHealth itself: the episodes' ``info["episode_stats"]`` are
added one at a time, as :class:`~stillweb.envs.runs.health.HealthMonitor` adds them, and a point
marks each episode where a warning code is newly raised (again after it cleared), as the
monitor logs it: the points where ``stillweb health`` over the same files, cut at that
episode, reports the warning. Unfinished episodes (a killed run's last one) are not
plotted; finished ones without ``episode_stats`` (Lookup-v0, older recordings), or whose
stats are not counts (a recording is file input), count only for success, turns and truncation.

>>> plots = run_plots([summarize_recording("run/episodes.jsonl")], HealthConfig(window=50))  # doctest: +SKIP
>>> [figure.key for figure in plots.figures]  # doctest: +SKIP
['success', 'turns', 'action_length', 'truncation', 'degenerate', 'tool_use', 'format']
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.envs.core.degenerate import ACTION_FLAGS
from stillweb.envs.core.episode_stats import countable
from stillweb.envs.runs.health import HealthConfig, HealthReport, HealthWarning, RunHealth, figures
from stillweb.envs.runs.run_summary import EpisodeSummary, RecordingSummary

__all__ = ["Series", "Threshold", "WarningPoint", "Figure", "RunPlots", "run_plots", "finished_episodes", "SHARE", "RATE", "X_AXES"]

SHARE = "share"  # values in [0, 1], drawn as percentages
RATE = "rate"  # values >= 0 (per turn, per episode)
X_AXES = ("episode", "policy_version")
NO_REASON = "(no reason recorded)"


@dataclass(frozen=True)
class Series:
    """One line of a figure: its label and its (x, value) points in x order (``total``: an
    aggregate of the other lines, such as "any flag", drawn wide beneath them)."""

    label: str
    points: tuple[tuple[int, float], ...]
    total: bool = False


@dataclass(frozen=True)
class Threshold:
    """A horizontal line on a figure from x ``start`` on: a health threshold (``code``: the warning it
    raises) or, with ``code`` None, a reference such as the baseline value."""

    label: str
    value: float
    start: int
    code: str | None


@dataclass(frozen=True)
class WarningPoint:
    """Where ``code`` was newly raised: at finished episode ``episode`` (x ``x``: that episode's number,
    or its policy version), the warning's message and the figure's value there."""

    x: int
    episode: int
    code: str
    message: str
    value: float


@dataclass(frozen=True)
class Figure:
    """One plot: a key, a title, the unit of its y axis (:data:`SHARE` or :data:`RATE`), its lines,
    thresholds, warning points and a note (what a point is over, what applies, what is missing)."""

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

    ``by``: the x axis (:data:`X_AXES`); ``x_range``: its first and last value (episode
    numbers 1 to ``episodes``, or the lowest and highest policy version); ``episodes``:
    finished episodes; ``baseline_end``: the x where the health baseline is complete (None
    while it is incomplete); ``versions``: on the episode axis, (episode, policy version)
    where the recorded version changes; ``report``: the health report at the run's end;
    ``unversioned``: on the policy-version axis, finished episodes without a version (not
    plotted); ``problems``: (file, what is wrong) of damaged files, plotted with the
    episodes read before the damage.
    """

    name: str
    config: HealthConfig
    by: str
    x_range: tuple[int, int]
    episodes: int
    baseline_end: int | None
    versions: tuple[tuple[int, int], ...]
    figures: tuple[Figure, ...]
    report: HealthReport
    without_stats: int
    unfinished: int
    unversioned: int
    problems: tuple[tuple[str, str], ...]


# The figure (and its figures() key) that shows each warning code of RunHealth.
_FIGURE_OF_CODE = {"length_up": ("action_length", "action_chars_per_turn"),
                   "degenerate_actions": ("degenerate", "degenerate_share"),
                   "tool_use_down": ("tool_use", "tool_calls_per_turn"),
                   "format_errors_up": ("format", "format_errors_per_turn"),
                   "repeated_calls": ("format", "repeated_call_share")}


def run_plots(recordings: Sequence[RecordingSummary], config: HealthConfig | Mapping[str, Any] | None = None,
              name: str | None = None, by: str = "episode") -> RunPlots:
    """The figures of the episodes of ``recordings`` merged in the order given (``name``: the run's
    name, default the single file's name or ``merged``; ``by``: the x axis, see the module docstring).

    Raises ``ValueError`` for an unknown ``by``, or ``"policy_version"`` when no finished episode records one.
    """
    if by not in X_AXES:
        raise UsageError(f"the x axis must be one of {', '.join(X_AXES)}, not {by!r}")
    config = HealthConfig.from_value(config)
    episodes = [episode for recording in recordings for episode in recording.episodes]
    finished = finished_episodes(recordings)
    axis = _Axis(finished, by, config.window)
    health = _HealthTrace(config, finished, axis)
    figures_ = (
        _episode_figure("success", "Success rate", SHARE, axis, "success rate", lambda group: _mean(e.success for e in group)),
        _episode_figure("turns", "Mean turns per episode", RATE, axis, "turns per episode", lambda group: _mean(e.turns for e in group)),
        _action_length_figure(axis, health, config),
        _truncation_figure(axis, finished),
        _degenerate_figure(axis, health, config),
        _tool_use_figure(axis, health, config),
        _format_figure(axis, health, config),
    )
    return RunPlots(
        name=name or (recordings[0].name if len(recordings) == 1 else "merged"), config=config, by=by,
        x_range=axis.x_range, episodes=len(finished), baseline_end=health.baseline_end,
        versions=_version_changes(finished) if by == "episode" else (), figures=figures_, report=health.final,
        without_stats=sum(1 for episode in finished if episode.stats is None), unfinished=len(episodes) - len(finished),
        unversioned=axis.unversioned, problems=tuple((recording.name, recording.problem) for recording in recordings if recording.problem),
    )


def finished_episodes(recordings: Sequence[RecordingSummary]) -> list[EpisodeSummary]:
    """The finished episodes of ``recordings`` in the order given; an episode whose ``episode_stats``
    RunHealth cannot count (not whole counts: a recording is file input) has ``stats=None``, so it
    counts as one without stats, as an episode of Lookup-v0 or of an older recording does."""
    return [episode if countable(episode.stats) else replace(episode, stats=None)
            for recording in recordings for episode in recording.episodes if episode.ending != "unfinished"]


class _Axis:
    """The points of a figure: (x, the episodes a point is over), rolling on the episode axis, grouped by version on the other."""

    def __init__(self, finished: list[EpisodeSummary], by: str, window: int) -> None:
        self.by, self.window = by, window
        self.numbered = list(enumerate(finished, start=1))
        self._groups: dict[bool, list[tuple[int, list[EpisodeSummary]]]] = {}
        self._figures: dict[int, dict[str, float]] | None = None
        if by == "policy_version":
            versions = sorted({episode.policy_version for episode in finished if episode.policy_version is not None})
            if not versions:
                raise UsageError("no finished episode of these files records a policy_version (Ray rollout workers "
                                 "write one on every step line): plot by episode instead")
            self.x_range = (versions[0], versions[-1])
            self.unversioned = sum(1 for episode in finished if episode.policy_version is None)
        else:
            self.x_range = (1, max(len(finished), 1))
            self.unversioned = 0

    def x_of(self, number: int, episode: EpisodeSummary) -> int | None:
        """The x of finished episode ``number`` (None on the version axis when it records no version)."""
        return number if self.by == "episode" else episode.policy_version

    def groups(self, with_stats: bool) -> list[tuple[int, list[EpisodeSummary]]]:
        """(x, episodes) of every point; ``with_stats``: only episodes with ``episode_stats`` count (the health figures)."""
        if with_stats not in self._groups:
            self._groups[with_stats] = self._group(with_stats)
        return self._groups[with_stats]

    def _group(self, with_stats: bool) -> list[tuple[int, list[EpisodeSummary]]]:
        pool = [(number, episode) for number, episode in self.numbered if not with_stats or episode.stats is not None]
        if self.by == "policy_version":
            grouped: dict[int, list[EpisodeSummary]] = {}
            for _, episode in pool:
                if episode.policy_version is not None:
                    grouped.setdefault(episode.policy_version, []).append(episode)
            return [(version, grouped[version]) for version in sorted(grouped)]
        recent: deque[EpisodeSummary] = deque(maxlen=self.window)
        points = []
        for number, episode in pool:
            recent.append(episode)
            points.append((number, list(recent)))
        return points

    def series(self, label: str, value: Callable[[list[EpisodeSummary]], float], with_stats: bool, total: bool = False) -> Series:
        """The line of ``value`` over each point's episodes."""
        return Series(label, tuple((x, float(value(group))) for x, group in self.groups(with_stats)), total)

    def health_figures(self) -> dict[int, dict[str, float]]:
        """x -> the RunHealth figures (:func:`stillweb.envs.runs.health.figures`) over that point's episodes with stats."""
        if self._figures is None:
            self._figures = {x: figures([episode.stats for episode in group]) for x, group in self.groups(with_stats=True)}
        return self._figures

    def health_series(self, label: str, key: str, total: bool = False) -> Series:
        """The line of the RunHealth figure ``key``."""
        return Series(label, tuple((x, float(shown[key])) for x, shown in self.health_figures().items()), total)

    def note(self, episodes_with: str = "finished episodes") -> str:
        """What a point is over."""
        if self.by == "policy_version":
            return f"one point per policy version, over all its {episodes_with}"
        return f"rolling over the last {self.window} {episodes_with}"


class _HealthTrace:
    """RunHealth fed one finished episode's stats at a time: the warnings newly raised, and the baseline."""

    def __init__(self, config: HealthConfig, finished: list[EpisodeSummary], axis: _Axis) -> None:
        run = RunHealth(config)
        self.raised: list[tuple[int, EpisodeSummary, HealthWarning]] = []  # (episode number, episode, warning)
        active: set[str] = set()
        counted: list[tuple[int, EpisodeSummary]] = []
        for number, episode in enumerate(finished, start=1):
            if episode.stats is None:
                continue
            run.add(episode.stats)
            counted.append((number, episode))
            warnings = run.report().warnings
            self.raised += [(number, episode, warning) for warning in warnings if warning.code not in active]  # as HealthMonitor logs them
            active = {warning.code for warning in warnings}
        self.final = run.report()
        self.counted = len(counted)
        # Where the baseline ends on the x axis: its last episode's number, or on the version axis the highest
        # version among its episodes (merged Ray files need not be in version order; some steps record none).
        placed = [axis.x_of(*item) for item in counted[:config.baseline]] if len(counted) >= config.baseline else []
        self.baseline_end = max((x for x in placed if x is not None), default=None)
        self.axis = axis

    def warnings(self, figure: str) -> tuple[WarningPoint, ...]:
        """The warning points of the codes ``figure`` shows (on the version axis: at the raising episode's version)."""
        points = []
        for number, episode, warning in self.raised:
            shown, key = _FIGURE_OF_CODE[warning.code]
            x = self.axis.x_of(number, episode)
            if shown != figure or x is None:
                continue
            value = warning.recent if self.axis.by == "episode" else self.axis.health_figures()[x][key]
            points.append(WarningPoint(x, number, warning.code, warning.message, float(value)))
        return tuple(points)

    def baseline_value(self, key: str) -> float | None:
        """The baseline figure ``key`` once the baseline is complete."""
        return float(self.final.baseline[key]) if self.baseline_end is not None and self.final.baseline else None


def _mean(values) -> float:
    values = [float(value) for value in values]
    return sum(values) / len(values)


def _flag_rate(name: str) -> Callable[[list[EpisodeSummary]], float]:
    """A degenerate-action flag's steps over all steps of a group (the denominator of ``degenerate_share``)."""
    def rate(group: list[EpisodeSummary]) -> float:
        turns = max(sum(int(episode.stats.get("turns", 0)) for episode in group), 1)
        return sum(int((episode.stats.get("flags") or {}).get(name, 0)) for episode in group) / turns
    return rate


def _no_threshold(axis: _Axis) -> str:
    return axis.note() + "; no health threshold applies"


def _episode_figure(key: str, title: str, unit: str, axis: _Axis, label: str,
                    value: Callable[[list[EpisodeSummary]], float]) -> Figure:
    return Figure(key, title, unit, (axis.series(label, value, with_stats=False),), (), (), _no_threshold(axis))


def _truncation_figure(axis: _Axis, finished: list[EpisodeSummary]) -> Figure:
    reasons = sorted({episode.truncation_reason or NO_REASON for episode in finished if episode.ending == "truncated"})

    def share(reason: str) -> Callable[[list[EpisodeSummary]], float]:
        return lambda group: _mean(e.ending == "truncated" and (e.truncation_reason or NO_REASON) == reason for e in group)

    series = tuple(axis.series(reason, share(reason), with_stats=False) for reason in reasons)
    return Figure("truncation", "Truncation share by reason", SHARE, series, (), (),
                  _no_threshold(axis) + ("" if reasons else "; no episode was truncated"))


def _drift_note(axis: _Axis, health: _HealthTrace, config: HealthConfig) -> str:
    if health.baseline_end is None:
        return f"the baseline needs {config.baseline} episodes with episode_stats, the run has {health.counted}"
    return (f"{axis.note('episodes with stats')}; baseline: the first {config.baseline}; "
            f"checked from episode {config.baseline + config.window} with stats on")


def _drift_lines(health: _HealthTrace, key: str, reference: str, threshold: Callable[[float], tuple[str, float]],
                 code: str) -> tuple[Threshold, ...]:
    """The baseline reference line and the drift threshold derived from it, from where the baseline is complete."""
    base = health.baseline_value(key)
    if base is None or health.baseline_end is None:
        return ()
    label, value = threshold(base)
    return (Threshold(reference.format(base), base, health.baseline_end, None), Threshold(label, value, health.baseline_end, code))


def _action_length_figure(axis: _Axis, health: _HealthTrace, config: HealthConfig) -> Figure:
    lines = _drift_lines(health, "action_chars_per_turn", "baseline {:.0f}", lambda base: (
        f"length_up: {config.length_growth:g} x baseline = {base * config.length_growth:.0f}", base * config.length_growth),
        "length_up")
    series = (axis.health_series("characters per turn", "action_chars_per_turn"),)
    return Figure("action_length", "Action length (characters per turn)", RATE, series, lines,
                  health.warnings("action_length"), _drift_note(axis, health, config))


def _degenerate_figure(axis: _Axis, health: _HealthTrace, config: HealthConfig) -> Figure:
    flags = {name: axis.series(name, _flag_rate(name), with_stats=True) for name in ACTION_FLAGS}
    raised = [name for name in ACTION_FLAGS if any(value > 0 for _, value in flags[name].points)]
    series = (axis.health_series("any flag", "degenerate_share", total=True),) + tuple(flags[name] for name in raised)
    line = Threshold(f"degenerate_actions: above {config.max_degenerate_share:.0%}", config.max_degenerate_share,
                     axis.x_range[0], "degenerate_actions")
    quiet = [name for name in ACTION_FLAGS if name not in raised]
    note = axis.note("episodes with stats") + (f"; never raised: {', '.join(quiet)}" if quiet else "")
    return Figure("degenerate", "Degenerate-action flags (share of steps)", SHARE, series, (line,),
                  health.warnings("degenerate"), note)


def _tool_use_figure(axis: _Axis, health: _HealthTrace, config: HealthConfig) -> Figure:
    keep = 1 - config.tool_use_drop
    lines = _drift_lines(health, "tool_calls_per_turn", "baseline {:.2f}", lambda base: (
        f"tool_use_down: at or below {keep:g} x baseline = {base * keep:.2f}", base * keep), "tool_use_down")
    series = (axis.health_series("tool calls per turn", "tool_calls_per_turn"),)
    return Figure("tool_use", "Tool use (calls per turn)", RATE, series, lines, health.warnings("tool_use"),
                  _drift_note(axis, health, config))


def _format_figure(axis: _Axis, health: _HealthTrace, config: HealthConfig) -> Figure:
    rise = config.format_error_rise
    drift = _drift_lines(health, "format_errors_per_turn", "baseline {:.2f}", lambda base: (
        f"format_errors_up: baseline {base:.2f} + {rise:g}", base + rise), "format_errors_up")
    repeated = Threshold(f"repeated_calls: above {config.max_repeated_call_share:.0%} of calls",
                         config.max_repeated_call_share, axis.x_range[0], "repeated_calls")
    series = (axis.health_series("format errors per turn", "format_errors_per_turn"),
              axis.health_series("repeated calls (share of calls)", "repeated_call_share"))
    return Figure("format", "Format errors and repeated calls", RATE, series, drift[1:] + (repeated,),
                  health.warnings("format"), _drift_note(axis, health, config))


def _version_changes(finished: list[EpisodeSummary]) -> tuple[tuple[int, int], ...]:
    """(episode number, policy version) of each episode whose recorded version differs from the last one recorded."""
    changes: list[tuple[int, int]] = []
    for number, episode in enumerate(finished, start=1):
        if episode.policy_version is not None and (not changes or changes[-1][1] != episode.policy_version):
            changes.append((number, episode.policy_version))
    return tuple(changes)
