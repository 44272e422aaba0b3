"""Run health: rolling figures across episodes and a warning when they drift toward collapse.

Format collapse and runaway length (Bespoke Labs, Tongyi DeepResearch) show in
the environment before they show in the loss: format errors go up, tool use
goes down, actions grow. :class:`RunHealth` keeps the ``info["episode_stats"]``
of a run's first ``baseline`` episodes and of its latest ``window`` episodes,
and compares them with the thresholds of one :class:`HealthConfig`:

- ``format_errors_up``: format errors per turn rose by ``format_error_rise`` or more;
- ``tool_use_down``: tool calls per turn fell to ``1 - tool_use_drop`` of the baseline or less;
- ``length_up``: action characters per turn grew ``length_growth`` times or more;
- ``degenerate_actions``: more than ``max_degenerate_share`` of recent steps raised a flag;
- ``repeated_calls``: more than ``max_repeated_call_share`` of recent tool calls repeated an earlier one.

The drift checks need the full baseline and ``window`` episodes after it; the
two share checks need ``window`` episodes. :class:`HealthMonitor` wraps one
env, :class:`VectorHealthMonitor` a vector env (figures per sub-env and merged);
both put the report in ``info["health"]`` when an episode ends and log each
newly raised warning once. ``stillweb health EPISODES.jsonl`` reports on recordings.

>>> health = RunHealth(HealthConfig(window=2, baseline=2))
>>> for chars in (100, 100, 900, 900):
...     health.add({"turns": 2, "action_chars": chars, "tool_calls": 2, "repeated_calls": 0,
...                 "format_errors": 0, "degenerate_steps": 0})
>>> [warning.code for warning in health.report().warnings]
['length_up']
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import logger

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.envs.core.config import config_from
from stillweb.envs.core.episode_stats import STAT_FIELDS

__all__ = ["HealthConfig", "HealthWarning", "HealthReport", "RunHealth", "HealthMonitor", "VectorHealthMonitor",
           "describe_report"]

# The figures a report shows people (``stillweb health``, the viewer's health page).
SHOWN_FIGURES = ("turns_per_episode", "action_chars_per_turn", "tool_calls_per_turn", "format_errors_per_turn",
                 "degenerate_share", "repeated_call_share")


@dataclass(frozen=True)
class HealthConfig:
    """Every threshold of the run-health checks (see the module docstring)."""

    window: int = 20
    baseline: int = 20
    format_error_rise: float = 0.1
    tool_use_drop: float = 0.5
    length_growth: float = 2.0
    max_degenerate_share: float = 0.2
    max_repeated_call_share: float = 0.5

    def __post_init__(self) -> None:
        for name in ("window", "baseline"):
            check_positive_int(f"HealthConfig.{name}", getattr(self, name))
        for name in ("format_error_rise", "tool_use_drop", "max_degenerate_share", "max_repeated_call_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise UsageError(f"HealthConfig.{name} must be in [0, 1], got {getattr(self, name)!r}")
        if self.length_growth <= 1.0:
            raise UsageError(f"HealthConfig.length_growth must be > 1, got {self.length_growth!r}")

    @classmethod
    def from_value(cls, value: "HealthConfig | Mapping[str, Any] | None") -> "HealthConfig":
        """A config from itself, a dict of its fields (unknown keys are an error), or None (defaults)."""
        return config_from(cls, value)


@dataclass(frozen=True)
class HealthWarning:
    """One drift warning: its code, a sentence for people, and the figures behind it."""

    code: str
    message: str
    recent: float
    baseline: float | None
    threshold: float


@dataclass(frozen=True)
class HealthReport:
    """Figures of the baseline and the recent window (None until they have episodes) and the warnings."""

    episodes: int
    baseline: dict[str, float] | None
    recent: dict[str, float] | None
    warnings: tuple[HealthWarning, ...]

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON (for ``info["health"]`` and ``stillweb health --json``)."""
        report = asdict(self)
        report["warnings"] = [asdict(warning) for warning in self.warnings]
        return report


def figures(episodes: list[Mapping[str, Any]]) -> dict[str, float]:
    """Per-turn and per-call rates over a list of episode stats (ratios of sums)."""
    total = {name: sum(int(stats.get(name, 0)) for stats in episodes) for name in STAT_FIELDS}
    turns, calls = max(total["turns"], 1), max(total["tool_calls"] + total["refused_calls"], 1)  # repeats: of calls asked
    return {
        "episodes": len(episodes),
        "turns_per_episode": total["turns"] / max(len(episodes), 1),
        "action_chars_per_turn": total["action_chars"] / turns,
        "tool_calls_per_turn": total["tool_calls"] / turns,
        "format_errors_per_turn": total["format_errors"] / turns,
        "degenerate_share": total["degenerate_steps"] / turns,
        "repeated_call_share": total["repeated_calls"] / calls,
    }


def describe_report(name: str, report: HealthReport, missing: int = 0) -> str:
    """The report as ``stillweb health`` prints it: episodes, baseline and recent figures, each warning
    (``missing``: finished episodes without ``episode_stats``, not counted)."""
    lines = [f"{name}: {report.episodes} episodes" + (f" ({missing} without episode_stats, not counted)" if missing else "")]
    for label, shown in (("baseline", report.baseline), ("recent", report.recent)):
        if shown:
            values = ", ".join(f"{key} {shown[key]:.3g}" for key in SHOWN_FIGURES)
            lines.append(f"  {label} ({shown['episodes']} episodes): {values}")
    lines.extend(f"  WARNING {warning.code}: {warning.message}" for warning in report.warnings)
    if not report.warnings:
        lines.append("  no warnings")
    return "\n".join(lines)


class RunHealth:
    """Rolling health figures of one stream of episodes (one env, or several merged)."""

    def __init__(self, config: HealthConfig | Mapping[str, Any] | None = None) -> None:
        self.config = HealthConfig.from_value(config)
        self.episodes = 0
        self._baseline: list[Mapping[str, Any]] = []
        self._after_baseline: deque[Mapping[str, Any]] = deque(maxlen=self.config.window)
        self._recent: deque[Mapping[str, Any]] = deque(maxlen=self.config.window)

    def add(self, stats: Mapping[str, Any]) -> None:
        """Count one finished episode's ``info["episode_stats"]``."""
        self.episodes += 1
        if len(self._baseline) < self.config.baseline:
            self._baseline.append(stats)
        else:
            self._after_baseline.append(stats)
        self._recent.append(stats)

    def report(self) -> HealthReport:
        """The figures and the warnings they raise now."""
        config = self.config
        baseline = figures(self._baseline) if self._baseline else None
        recent = figures(list(self._recent)) if self._recent else None
        warnings: list[HealthWarning] = []
        if len(self._recent) >= config.window and recent is not None:
            warnings += _share_warnings(recent, config)
        if len(self._after_baseline) >= config.window and baseline is not None:
            warnings += _drift_warnings(figures(list(self._after_baseline)), baseline, config)
        return HealthReport(self.episodes, baseline, recent, tuple(warnings))


def _share_warnings(recent: dict[str, float], config: HealthConfig) -> list[HealthWarning]:
    found = []
    if recent["degenerate_share"] > config.max_degenerate_share:
        found.append(HealthWarning("degenerate_actions", f"{recent['degenerate_share']:.0%} of recent steps were degenerate "
                                   f"(threshold {config.max_degenerate_share:.0%})", recent["degenerate_share"], None,
                                   config.max_degenerate_share))
    if recent["repeated_call_share"] > config.max_repeated_call_share:
        found.append(HealthWarning("repeated_calls", f"{recent['repeated_call_share']:.0%} of recent tool calls repeated an "
                                   f"earlier call (threshold {config.max_repeated_call_share:.0%})",
                                   recent["repeated_call_share"], None, config.max_repeated_call_share))
    return found


def _drift_warnings(recent: dict[str, float], baseline: dict[str, float], config: HealthConfig) -> list[HealthWarning]:
    found = []
    errors, base_errors = recent["format_errors_per_turn"], baseline["format_errors_per_turn"]
    if errors - base_errors >= config.format_error_rise:
        found.append(HealthWarning("format_errors_up", f"format errors per turn rose from {base_errors:.2f} to {errors:.2f}",
                                   errors, base_errors, config.format_error_rise))
    tools, base_tools = recent["tool_calls_per_turn"], baseline["tool_calls_per_turn"]
    if base_tools > 0 and tools <= base_tools * (1 - config.tool_use_drop):
        found.append(HealthWarning("tool_use_down", f"tool calls per turn fell from {base_tools:.2f} to {tools:.2f}",
                                   tools, base_tools, config.tool_use_drop))
    chars, base_chars = recent["action_chars_per_turn"], baseline["action_chars_per_turn"]
    if base_chars > 0 and chars >= base_chars * config.length_growth:
        found.append(HealthWarning("length_up", f"action characters per turn grew from {base_chars:.0f} to {chars:.0f}",
                                   chars, base_chars, config.length_growth))
    return found


class _WarnOnce:
    """Logs each warning code when it is newly raised (again after it cleared)."""

    def __init__(self, label: str) -> None:
        self.label, self.active = label, set()

    def __call__(self, report: HealthReport) -> None:
        codes = {warning.code for warning in report.warnings}
        for warning in report.warnings:
            if warning.code not in self.active:
                logger.warn("stillweb health (%s, episode %d): %s", self.label, report.episodes, warning.message)
        self.active = codes


class HealthMonitor(gym.Wrapper):
    """Rolling run health of one env: ``info["health"]`` (a :class:`HealthReport` dict) when an episode ends.

    >>> env = HealthMonitor(gym.make("stillweb/WikiQA-v0", snapshot="snap/"), {"window": 50})  # doctest: +SKIP
    """

    def __init__(self, env: gym.Env, config: HealthConfig | Mapping[str, Any] | None = None) -> None:
        super().__init__(env)
        self.health = RunHealth(config)
        self._warn = _WarnOnce("env")

    def step(self, action):
        """Step the env; at an episode's end add its stats and report."""
        observation, reward, terminated, truncated, info = self.env.step(action)
        if "episode_stats" in info:
            self.health.add(info["episode_stats"])
            report = self.health.report()
            self._warn(report)
            info = {**info, "health": report.as_dict()}
        return observation, reward, terminated, truncated, info


class VectorHealthMonitor(gym.vector.VectorWrapper):
    """Run health of a vector env, per sub-env and merged (sub-envs in index order at each step).

    When an episode ends, ``infos["health"]`` is ``{"merged": report, "per_env": [report, ...]}``.
    """

    def __init__(self, env: gym.vector.VectorEnv, config: HealthConfig | Mapping[str, Any] | None = None) -> None:
        super().__init__(env)
        self.config = HealthConfig.from_value(config)
        self.merged = RunHealth(self.config)
        self.per_env = [RunHealth(self.config) for _ in range(self.num_envs)]
        self._warn = _WarnOnce("merged")

    def step(self, actions):
        """Step the vector env; add the stats of every sub-env whose episode ended."""
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        ended = np.asarray(infos.get("_episode_stats", np.zeros(self.num_envs, dtype=bool)))
        if ended.any():
            stats = infos["episode_stats"]
            for index in np.flatnonzero(ended):
                episode = {name: int(stats[name][index]) for name in STAT_FIELDS}
                self.per_env[int(index)].add(episode)
                self.merged.add(episode)
            merged = self.merged.report()
            self._warn(merged)
            infos = {**infos, "health": {"merged": merged.as_dict(), "per_env": [h.report().as_dict() for h in self.per_env]}}
        return observations, rewards, terminations, truncations, infos
