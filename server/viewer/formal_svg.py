"""A task's formalization drawn as a small SVG graph, server-side and without a library.

Terms are laid out in columns by their distance from the target ``?`` (the
variable chain reads left to right); within a column in order of first
appearance. Each triple ``[subject, relation, object]`` is an arrow from the
subject to the object, labelled with the relation. Variables are ellipses,
constants boxes, the target a double circle. All text is XML-escaped.

>>> svg = formalization_svg([["?", "director", "V@X"], ["V@X", "born_in", "C@Paris"]])
>>> svg.startswith("<svg") and "born_in" in svg
True
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from markupsafe import Markup

from stillweb.corpora.tasks.formalization import TARGET, is_constant, is_variable

__all__ = ["formalization_svg", "term_columns"]

COLUMN_WIDTH = 260
ROW_HEIGHT = 74
NODE_WIDTH = 170
NODE_HEIGHT = 40
MARGIN = 24
LABEL_CHARS = 24
TARGET_RADIUS = 19
VARIABLE_HALF_WIDTH = NODE_WIDTH / 2 - 30


def term_columns(triples: Sequence[Sequence[str]]) -> dict[str, int]:
    """Each term's column: its distance (in triples, either direction) from the target;
    terms not connected to it go one column past the farthest."""
    terms = list(dict.fromkeys(term for triple in triples for term in (triple[0], triple[2])))
    neighbours: dict[str, list[str]] = {term: [] for term in terms}
    for subject, _, obj in triples:
        neighbours[subject].append(obj)
        neighbours[obj].append(subject)
    start = TARGET if TARGET in neighbours else (terms[0] if terms else None)
    columns: dict[str, int] = {} if start is None else {start: 0}
    frontier = [start] if start is not None else []
    while frontier:
        following = []
        for term in frontier:
            for other in neighbours[term]:
                if other not in columns:
                    columns[other] = columns[term] + 1
                    following.append(other)
        frontier = following
    far = max(columns.values(), default=-1) + 1
    return {term: columns.get(term, far) for term in terms}


def formalization_svg(triples: Sequence[Sequence[str]]) -> Markup:
    """The SVG markup of ``triples`` (safe to insert in a page: every label is escaped)."""
    triples = [triple for triple in triples if len(triple) == 3]
    if not triples:
        return Markup('<p class="muted">This task has no formalization.</p>')
    columns = term_columns(triples)
    rows: dict[int, int] = {}
    position: dict[str, tuple[float, float]] = {}
    for term, column in columns.items():
        row = rows.get(column, 0)
        rows[column] = row + 1
        position[term] = (MARGIN + column * COLUMN_WIDTH + NODE_WIDTH / 2, MARGIN + row * ROW_HEIGHT + NODE_HEIGHT / 2)
    width = MARGIN * 2 + max(columns.values()) * COLUMN_WIDTH + NODE_WIDTH
    height = MARGIN * 2 + (max(rows.values()) - 1) * ROW_HEIGHT + NODE_HEIGHT
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="formalization" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="formalization graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    edges = [_edge(position[subject], position[obj], relation, _half_width(subject), _half_width(obj))
             for subject, relation, obj in triples]
    parts.extend(line for line, _ in edges)
    parts.extend(_node(term, *position[term]) for term in columns)
    parts.extend(label for _, label in edges)  # relation labels on top of lines and nodes
    parts.append("</svg>")
    return Markup("".join(parts))


def _half_width(term: str) -> float:
    """Half the drawn width of a term's node (where its edges start and end)."""
    if term == TARGET:
        return TARGET_RADIUS
    return VARIABLE_HALF_WIDTH if is_variable(term) else NODE_WIDTH / 2


def _edge(start: tuple[float, float], end: tuple[float, float], relation: str, start_half: float, end_half: float) -> tuple[str, str]:
    """(the arrow, its relation label) between two node centres."""
    (x1, y1), (x2, y2) = start, end
    if x1 != x2:  # leave and enter at the node sides
        direction = 1 if x2 > x1 else -1
        x1, x2 = x1 + direction * start_half, x2 - direction * end_half
    else:
        direction = 1 if y2 > y1 else -1
        y1, y2 = y1 + direction * NODE_HEIGHT / 2, y2 - direction * NODE_HEIGHT / 2
    label = escape(_short(relation))
    line = (f'<g class="edge"><title>{escape(relation)}</title><line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="#555" stroke-width="1.5" marker-end="url(#arrow)"/></g>')
    text = (f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 6:.1f}" text-anchor="middle" class="relation">'
            f'<title>{escape(relation)}</title>{label}</text>')
    return line, text


def _node(term: str, x: float, y: float) -> str:
    if term == TARGET:
        kind, shape = "target", (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{TARGET_RADIUS}"/><circle cx="{x:.1f}" cy="{y:.1f}" r="{TARGET_RADIUS - 5}"/>')
        label = "?"
    elif is_variable(term):
        kind, label = "variable", term[2:]
        shape = f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{VARIABLE_HALF_WIDTH:.1f}" ry="{NODE_HEIGHT / 2:.1f}"/>'
    else:
        kind, label = "constant", term[2:] if is_constant(term) else term
        shape = (f'<rect x="{x - NODE_WIDTH / 2:.1f}" y="{y - NODE_HEIGHT / 2:.1f}" width="{NODE_WIDTH}" '
                 f'height="{NODE_HEIGHT}" rx="4"/>')
    text = f'<text x="{x:.1f}" y="{y + 5:.1f}" text-anchor="middle">{escape(_short(label))}</text>'
    return f'<g class="node {kind}"><title>{escape(term)}</title>{shape}{text}</g>'


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
