"""``stillweb health EPISODES.jsonl [...]``: run-health figures and drift warnings from recordings.

Reads the ``info["episode_stats"]`` of every finished episode in files written
by ``stillweb.envs.RecordEpisodes``, in order, and prints what
``stillweb.envs.runs.health.HealthMonitor`` would have reported at the end of the
run: the baseline (first episodes) and recent-window figures and any warning
(format errors up, tool use down, length up, degenerate actions, repeated
calls). Several files are reported one by one, then merged in the order given.

--plot FILE draws the run (the files merged in the order given) as figures:
success rate, mean turns, action length, truncation share by reason, each
degenerate-action flag's rate, tool use, format errors and repeated calls, over
the episodes in recording order, with the health thresholds drawn and a marker
at each episode where a warning is newly raised. --plot-by policy_version puts
the policy version the step lines record (Ray rollout workers write it) on the
x axis, one point per version. The format comes from the suffix: .svg
(byte-deterministic) or .png (needs cairosvg). The viewer's /view/health page
shows the same figures.

examples:
  stillweb health run/episodes.jsonl
  stillweb health env0.jsonl env1.jsonl --window 50 --baseline 50 --json
  stillweb health episodes.jsonl --config health.json --fail-on-warning
  stillweb health run/episodes.jsonl --window 50 --plot health.svg
  stillweb health rollouts/*.jsonl --plot health.png --plot-by policy_version
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from stillweb.corpora.errors import UsageError
from stillweb.cli.help_text import plain
from stillweb.envs.runs.health_series import X_AXES

__all__ = ["register", "run_health"]

PLOT_FORMATS = (".svg", ".png")


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
    parser.add_argument("--plot", metavar="OUT.svg|OUT.png", help="also draw the run's health figures into this file "
                        "(format from the suffix)")
    parser.add_argument("--plot-by", choices=X_AXES, default=None,
                        help="the plot's x axis: episodes in recording order (default) or the recorded policy version")
    parser.set_defaults(handler=run_health)


def run_health(args: argparse.Namespace) -> int:
    """Report on ``args.files``; 0, or 1 with ``--fail-on-warning`` when a warning is raised."""
    from stillweb.envs.runs.health import HealthConfig, RunHealth, describe_report

    plot_format = _plot_format(args.plot)
    if args.plot_by and not args.plot:
        raise UsageError("--plot-by chooses the x axis of --plot FILE: give --plot too")
    config = _config(args, HealthConfig)
    summaries = [_read(name) for name in args.files]
    merged, reports, missing = RunHealth(config), {}, {}
    for summary in summaries:
        stats, missing[summary.name] = _finished_stats(summary)
        one = RunHealth(config)
        for episode in stats:
            one.add(episode)
            merged.add(episode)
        reports[summary.name] = one.report()
    if len(args.files) > 1:
        reports["merged"] = merged.report()
    problems = {summary.name: summary.problem for summary in summaries if summary.problem}
    if args.json:
        print(json.dumps({name: {**report.as_dict(), "episodes_without_stats": missing.get(name, sum(missing.values())),
                                 "problem": problems.get(name)}
                          for name, report in reports.items()}, indent=2, sort_keys=True))
    else:
        for name, report in reports.items():
            print(describe_report(name, report, missing.get(name, sum(missing.values()))))
    if args.plot:
        _write_plot(summaries, config, Path(args.plot), plot_format, args.plot_by or "episode")
    warned = any(report.warnings for report in reports.values())
    return 1 if warned and args.fail_on_warning else 0


def _read(name: str):
    """The summary of recording ``name``; a file that is not a recording at all is an error naming it,
    a damaged one (a killed run's cut last line) is reported up to the damage, with a note on stderr."""
    from stillweb.envs.runs.run_summary import summarize_recording

    summary = summarize_recording(name, name)
    if not summary.header:
        raise UsageError(summary.problem or f"{name!r} is empty: no recording header")
    if summary.problem:
        print(f"note: {summary.problem}; counting the {len(summary.episodes)} episodes before it", file=sys.stderr)
    return summary


def _finished_stats(summary) -> tuple[list[dict], int]:
    """The ``episode_stats`` of the summary's finished episodes, in order, and how many finished ones lack them."""
    from stillweb.envs.runs.health_series import finished_episodes

    finished = finished_episodes([summary])
    stats = [episode.stats for episode in finished if episode.stats is not None]
    return stats, len(finished) - len(stats)


def _config(args: argparse.Namespace, config_type):
    fields = {}
    if args.config:
        fields = json.loads(Path(args.config).read_text(encoding="utf-8"))
        if not isinstance(fields, dict):
            raise UsageError(f"--config {args.config}: expected a JSON object of HealthConfig fields")
    for name in ("window", "baseline"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    return config_type.from_value(fields)


def _plot_format(plot: str | None) -> str | None:
    """The plot's format from its suffix (checked before any file is read)."""
    if plot is None:
        return None
    suffix = Path(plot).suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise UsageError(f"--plot {plot!r}: the format comes from the file's suffix, which must be "
                         f"{' or '.join(PLOT_FORMATS)} (got {suffix or 'none'!r})")
    return suffix


def _write_plot(summaries: list, config, out: Path, plot_format: str, by: str) -> None:
    """Draw the recordings' episodes (merged in the order given) into ``out`` as SVG or PNG."""
    from stillweb.envs.runs.health_series import run_plots
    from stillweb.server.health_svg import run_svg, svg_to_png

    plots = run_plots(summaries, config, by=by)
    svg = run_svg(plots)
    if plot_format == ".png":
        try:
            out.write_bytes(svg_to_png(svg))
        except ImportError as error:
            raise UsageError(str(error)) from None
    else:
        out.write_text(svg, encoding="utf-8")
    markers = sum(len(figure.warnings) for figure in plots.figures)
    print(f"wrote {out}: {len(plots.figures)} figures of {plots.episodes} episodes, {markers} warning markers",
          file=sys.stderr)
