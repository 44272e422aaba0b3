"""``stillweb health EPISODES.jsonl [...]``: run-health figures and drift warnings from recordings.

Reads the ``info["episode_stats"]`` of every finished episode in files written
by ``stillweb.envs.RecordEpisodes``, in order, and prints what
``stillweb.envs.health.HealthMonitor`` would have reported at the end of the
run: the baseline (first episodes) and recent-window figures and any warning
(format errors up, tool use down, length up, degenerate actions, repeated
calls). Several files are reported one by one, then merged in the order given.

examples:
  stillweb health run/episodes.jsonl
  stillweb health env0.jsonl env1.jsonl --window 50 --baseline 50 --json
  stillweb health episodes.jsonl --config health.json --fail-on-warning
"""

from __future__ import annotations

import argparse

from stillweb.cli.help_text import plain
import json
from pathlib import Path

__all__ = ["register", "run_health"]

_SHOWN = ("turns_per_episode", "action_chars_per_turn", "tool_calls_per_turn", "format_errors_per_turn",
          "degenerate_share", "repeated_call_share")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``health`` subcommand to the ``stillweb`` parser."""
    parser = subparsers.add_parser(
        "health",
        help="run-health figures and collapse warnings from recorded episodes",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="EPISODES.jsonl", help="recordings of stillweb.envs.RecordEpisodes")
    parser.add_argument("--config", metavar="FILE", help="JSON object of HealthConfig fields (thresholds, window, baseline)")
    parser.add_argument("--window", type=int, help="recent-window size in episodes (overrides --config)")
    parser.add_argument("--baseline", type=int, help="baseline size in episodes (overrides --config)")
    parser.add_argument("--json", action="store_true", help="print the reports as one JSON object")
    parser.add_argument("--fail-on-warning", action="store_true", help="exit 1 when any warning is raised")
    parser.set_defaults(handler=run_health)


def run_health(args: argparse.Namespace) -> int:
    """Report on ``args.files``; 0, or 1 with ``--fail-on-warning`` when a warning is raised."""
    from stillweb.envs.health import HealthConfig, RunHealth
    from stillweb.envs.recording import recorded_episode_stats

    config = _config(args, HealthConfig)
    merged, reports, missing = RunHealth(config), {}, {}
    for name in args.files:
        stats, missing[name] = recorded_episode_stats(name)
        one = RunHealth(config)
        for episode in stats:
            one.add(episode)
            merged.add(episode)
        reports[name] = one.report()
    if len(args.files) > 1:
        reports["merged"] = merged.report()
    if args.json:
        print(json.dumps({name: {**report.as_dict(), "episodes_without_stats": missing.get(name, sum(missing.values()))}
                          for name, report in reports.items()}, indent=2, sort_keys=True))
    else:
        for name, report in reports.items():
            print(_describe(name, report, missing.get(name, sum(missing.values()))))
    warned = any(report.warnings for report in reports.values())
    return 1 if warned and args.fail_on_warning else 0


def _config(args: argparse.Namespace, config_type):
    fields = {}
    if args.config:
        fields = json.loads(Path(args.config).read_text(encoding="utf-8"))
        if not isinstance(fields, dict):
            raise ValueError(f"--config {args.config}: expected a JSON object of HealthConfig fields")
    for name in ("window", "baseline"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    return config_type.from_value(fields)


def _describe(name: str, report, missing: int) -> str:
    lines = [f"{name}: {report.episodes} episodes" + (f" ({missing} without episode_stats, not counted)" if missing else "")]
    for label, figures in (("baseline", report.baseline), ("recent", report.recent)):
        if figures:
            shown = ", ".join(f"{key} {figures[key]:.3g}" for key in _SHOWN)
            lines.append(f"  {label} ({figures['episodes']} episodes): {shown}")
    lines.extend(f"  WARNING {warning.code}: {warning.message}" for warning in report.warnings)
    if not report.warnings:
        lines.append("  no warnings")
    return "\n".join(lines)
