"""The run-health plots drawn as SVG, server-side, without a chart library.

One function draws each :class:`~stillweb.envs.runs.health_series.Figure` (:func:`figure_svg`):
its lines, the health thresholds as dashed red lines (references such as the baseline
dotted grey), the baseline episodes shaded, and a red marker at every episode where
``stillweb health`` would newly warn, its code and message in an SVG ``<title>`` (the
browser's tooltip). :func:`run_svg` stacks every figure of a run under a title line: the
file ``stillweb health FILES --plot out.svg`` writes, holding the very figures the
viewer's ``/view/health`` page shows inline. :func:`svg_to_png` converts with cairosvg.

The markup is byte-deterministic: no ids, no timestamps, coordinates with one decimal,
labels formatted with fixed patterns, every text (file names, truncation reasons and
messages are input) XML-escaped. No FastAPI here: the CLI imports this module.

>>> svg = figure_svg(plots.figures[0], plots)  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from stillweb.envs.runs.health_series import SHARE, Figure, RunPlots, Series, Threshold, WarningPoint

__all__ = ["figure_svg", "run_svg", "svg_to_png", "WIDTH", "HEIGHT"]

WIDTH = 780
HEIGHT = 240
LEFT, RIGHT, TOP, BOTTOM = 58, 200, 38, 50
PLOT_WIDTH = WIDTH - LEFT - RIGHT
PLOT_HEIGHT = HEIGHT - TOP - BOTTOM
HEADER = 52
HEADER_LINE = 16
FONT = 'font-family="DejaVu Sans, Verdana, sans-serif" font-size="11"'
COLORS = ("#1f5fa8", "#2d7a3a", "#8a4fb0", "#c77800", "#7a5230", "#1b8a8f", "#5f6870")
WARN = "#c62828"
REFERENCE = "#8a939c"
LEGEND_CHARS = 30
MIN_LABEL_GAP = 26  # pixels between two policy-version labels
DOTS_UP_TO = 40  # points of a line drawn as dots too (each value visible when there are few)


def figure_svg(figure: Figure, plots: RunPlots) -> str:
    """The standalone SVG of one figure of ``plots`` (its axes span the run's episodes)."""
    scale = _Scale(plots.x_range, _y_top(figure))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="health-figure" data-figure="{_text(figure.key)}" '
             f'width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" {FONT} role="img" '
             f'aria-label="{_text(figure.title)}">',
             f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
             f'<text x="{LEFT}" y="16" font-size="13" font-weight="bold" fill="#1d232a">{_text(figure.title)}</text>',
             f'<text x="{LEFT}" y="30" fill="#66707a">{_text(figure.note)}</text>']
    parts += _baseline_band(plots, scale)
    parts += _axes(figure, plots, scale)
    if not any(series.points for series in figure.series):
        parts.append(f'<text x="{LEFT + PLOT_WIDTH / 2:.1f}" y="{TOP + PLOT_HEIGHT / 2:.1f}" text-anchor="middle" '
                     f'fill="#66707a">no episodes to plot</text>')
    for color, series in zip(_colors(len(figure.series)), figure.series):
        parts += _series(series, color, scale)
    parts += [_threshold(line, scale) for line in figure.thresholds]
    parts += [_marker(point, scale, plots.by) for point in figure.warnings]
    parts += _legend(figure)
    parts.append("</svg>")
    return "".join(parts)


def run_svg(plots: RunPlots) -> str:
    """One SVG document of every figure of ``plots`` under a title and the run's description."""
    lines = [f"{plots.episodes} finished episodes, window {plots.config.window}, baseline {plots.config.baseline}"
             + (", by policy version" if plots.by == "policy_version" else "")
             + (f", {plots.without_stats} without episode_stats" if plots.without_stats else "")
             + (f", {plots.unversioned} without a policy version (not plotted)" if plots.unversioned else "")
             + (f", {plots.unfinished} unfinished (not plotted)" if plots.unfinished else "")]
    if plots.report.warnings:
        lines.append(f"warnings at the end: {', '.join(warning.code for warning in plots.report.warnings)}")
    lines += [f"{name}: {problem}" for name, problem in plots.problems]
    top = HEADER + HEADER_LINE * (len(lines) - 1)
    height = top + HEIGHT * len(plots.figures)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" {FONT}>',
             f'<rect width="{WIDTH}" height="{height}" fill="#fff"/>',
             f'<text x="{LEFT}" y="22" font-size="15" font-weight="bold" fill="#1d232a">Run health: {_text(plots.name)}</text>']
    parts += [f'<text x="{LEFT}" y="{40 + HEADER_LINE * index}" fill="{WARN if index else "#66707a"}">{_text(line)}</text>'
              for index, line in enumerate(lines)]
    parts += [f'<g transform="translate(0,{top + HEIGHT * index})">{figure_svg(figure, plots)}</g>'
              for index, figure in enumerate(plots.figures)]
    parts.append("</svg>")
    return "".join(parts) + "\n"


def svg_to_png(svg: str) -> bytes:
    """The PNG of ``svg`` (cairosvg, imported here: ``ImportError`` naming what to install when it is missing)."""
    try:
        import cairosvg
    except (ImportError, OSError) as error:  # OSError: cairocffi found no libcairo
        raise ImportError(f"writing PNG needs cairosvg and the cairo library: pip install cairosvg "
                          f"(and apt-get install libcairo2 on Debian); or write .svg instead ({error})") from error
    return cairosvg.svg2png(bytestring=svg.encode("utf-8"))


class _Scale:
    """x (episode number or policy version) and value to pixels."""

    def __init__(self, x_range: tuple[int, int], y_top: float) -> None:
        self.first, self.last = x_range
        self.y_top = y_top

    def x(self, x: float) -> float:
        if self.last <= self.first:
            return LEFT + PLOT_WIDTH / 2
        return LEFT + (x - self.first) / (self.last - self.first) * PLOT_WIDTH

    def y(self, value: float) -> float:
        return TOP + PLOT_HEIGHT - min(max(value, 0.0), self.y_top) / self.y_top * PLOT_HEIGHT


def _y_top(figure: Figure) -> float:
    """The top of the y axis: 100% for shares (more when a line goes above), else a round number above every value."""
    values = [value for series in figure.series for _, value in series.points] + [line.value for line in figure.thresholds]
    highest = max(values, default=0.0)
    if figure.unit == SHARE and highest <= 1.0:
        return 1.0
    return _round_up(highest * 1.08) if highest > 0 else 1.0


def _round_up(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^k at or above ``value``."""
    power = 10.0 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)


def _divisions(top: float) -> int:
    """How many grid steps split the axis top (a :func:`_round_up` value) into round numbers."""
    leading = top / 10.0 ** math.floor(math.log10(top))
    return 5 if leading in (2.5, 5) else 4


def _axes(figure: Figure, plots: RunPlots, scale: _Scale) -> list[str]:
    bottom, right = TOP + PLOT_HEIGHT, LEFT + PLOT_WIDTH
    parts = []
    divisions = _divisions(scale.y_top)
    for index in range(divisions + 1):
        value = scale.y_top * index / divisions
        y = scale.y(value)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#e6e9ec"/>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#4a535c">{_value(value, figure.unit)}</text>')
    parts.append(f'<line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#4a535c"/>'
                 f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#4a535c"/>')
    for tick in _ticks(*plots.x_range) if plots.episodes else ():
        x = scale.x(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" stroke="#4a535c"/>'
                     f'<text x="{x:.1f}" y="{bottom + 15}" text-anchor="middle" fill="#4a535c">{tick}</text>')
    label = "policy version" if plots.by == "policy_version" else "episode (recording order)"
    if plots.versions:
        label += "; policy version below"
        parts += _version_labels(plots.versions, scale)
    parts.append(f'<text x="{LEFT + PLOT_WIDTH / 2:.1f}" y="{HEIGHT - 4}" text-anchor="middle" fill="#66707a">{label}</text>')
    return parts


def _ticks(first: int, last: int) -> list[int]:
    """``first`` and at most about 10 round whole numbers up to ``last``."""
    span = last - first
    step = max(1, int(_round_up(span / 10))) if span > 10 else 1
    start = (first // step + 1) * step
    return [first] + [tick for tick in range(start, last + 1, step) if tick - first > step / 2]


def _version_labels(versions: Sequence[tuple[int, int]], scale: _Scale) -> list[str]:
    """A thin line and ``v<n>`` where the policy version changes (labels that would overlap are left out)."""
    parts, last_x = [], -1e9
    for episode, version in versions:
        x = scale.x(episode)
        parts.append(f'<line class="policy-version" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + PLOT_HEIGHT}" '
                     f'stroke="#c9ced3" stroke-dasharray="1,3"><title>policy version {version} from episode {episode}</title></line>')
        if x - last_x >= MIN_LABEL_GAP:
            parts.append(f'<text x="{x:.1f}" y="{TOP + PLOT_HEIGHT + 28}" text-anchor="middle" fill="#8a4fb0">v{version}</text>')
            last_x = x
    return parts


def _baseline_band(plots: RunPlots, scale: _Scale) -> list[str]:
    if plots.baseline_end is None or plots.baseline_end <= plots.x_range[0]:
        return []
    x1, x2 = scale.x(plots.x_range[0]), scale.x(plots.baseline_end)
    where = f"up to policy version {plots.baseline_end}" if plots.by == "policy_version" else f"episodes 1 to {plots.baseline_end}"
    return [f'<g class="baseline"><title>health baseline: the first {plots.config.baseline} episodes with stats, {where}</title>'
            f'<rect x="{x1:.1f}" y="{TOP}" width="{x2 - x1:.1f}" height="{PLOT_HEIGHT}" fill="#f1f3f5"/>'
            f'<text x="{x1 + 4:.1f}" y="{TOP + 12}" fill="#8a939c">baseline</text></g>']


def _series(series: Series, color: str, scale: _Scale) -> list[str]:
    """The line through the points of ``series``, and a dot on each point when there are few."""
    width = ' stroke-width="5" stroke-opacity="0.35"' if series.total else ' stroke-width="1.8"'
    parts = [f'<g class="series" data-series="{_text(series.label)}"><title>{_text(series.label)}</title>']
    if len(series.points) > 1:
        points = " ".join(f"{scale.x(x):.1f},{scale.y(value):.1f}" for x, value in series.points)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{color}"{width} stroke-linejoin="round"/>')
    if len(series.points) <= DOTS_UP_TO:
        parts += [f'<circle cx="{scale.x(x):.1f}" cy="{scale.y(value):.1f}" r="2.5" fill="{color}"/>' for x, value in series.points]
    parts.append("</g>")
    return parts


def _threshold(line: Threshold, scale: _Scale) -> str:
    """A threshold: dashed red, labelled at its right end; a reference: dotted grey, labelled at its start."""
    x1, x2, y = scale.x(line.start), LEFT + PLOT_WIDTH, scale.y(line.value)
    if line.code:
        kind, color, dash, label_x, anchor = "threshold", WARN, "6,4", x2 - 4, "end"
    else:
        kind, color, dash, label_x, anchor = "reference", REFERENCE, "2,3", x1 + 4, "start"
    code = f' data-code="{_text(line.code)}"' if line.code else ""
    return (f'<g class="{kind}"{code}><title>{_text(line.label)}</title>'
            f'<line x1="{x1:.1f}" y1="{y:.1f}" x2="{x2}" y2="{y:.1f}" stroke="{color}" stroke-width="1.3" stroke-dasharray="{dash}"/>'
            f'<text x="{label_x:.1f}" y="{y - 4:.1f}" text-anchor="{anchor}" fill="{color}">{_text(line.label)}</text></g>')


def _marker(point: WarningPoint, scale: _Scale, by: str) -> str:
    x, y = scale.x(point.x), scale.y(point.value)
    where = f"episode {point.episode}" + (f" (policy version {point.x})" if by == "policy_version" else "")
    return (f'<g class="warning-marker" data-code="{_text(point.code)}" data-episode="{point.episode}">'
            f'<title>{where}: WARNING {_text(point.code)}: {_text(point.message)}</title>'
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + PLOT_HEIGHT}" stroke="{WARN}" stroke-opacity="0.35"/>'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5.5" fill="{WARN}" stroke="#fff" stroke-width="1.5"/></g>')


def _legend(figure: Figure) -> list[str]:
    x = LEFT + PLOT_WIDTH + 14
    parts = []
    for index, (color, series) in enumerate(zip(_colors(len(figure.series)), figure.series)):
        y = TOP + 8 + 16 * index
        width = ' stroke-width="5" stroke-opacity="0.35"' if series.total else ' stroke-width="2.5"'
        parts.append(f'<line x1="{x}" y1="{y}" x2="{x + 16}" y2="{y}" stroke="{color}"{width}/>'
                     f'<text x="{x + 22}" y="{y + 4}" fill="#1d232a">{_text(_short(series.label))}</text>')
    if figure.warnings:
        y = TOP + 8 + 16 * len(figure.series)
        parts.append(f'<circle cx="{x + 8}" cy="{y}" r="4.5" fill="{WARN}"/>'
                     f'<text x="{x + 22}" y="{y + 4}" fill="{WARN}">warning raised ({len(figure.warnings)})</text>')
    return parts


def _colors(count: int) -> list[str]:
    return [COLORS[index % len(COLORS)] for index in range(count)]


def _value(value: float, unit: str) -> str:
    """A y-axis label: a percentage for shares, else a short number (``20k``, ``1.5M``: the margin is narrow)."""
    if unit == SHARE:
        return f"{value * 100:.0f}%"
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.4g}"


def _short(text: str) -> str:
    return text if len(text) <= LEGEND_CHARS else text[: LEGEND_CHARS - 1] + "…"


def _text(value: object) -> str:
    """``value`` as XML text or attribute content (quotes escaped too)."""
    return escape(str(value), quote=True)

