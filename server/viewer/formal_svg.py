"""A task's formalization drawn as a small SVG graph, server-side and without a library.

Terms are laid out in columns by their distance from the target ``?`` (the
variable chain reads left to right); within a column in order of first
appearance. Each triple ``[subject, relation, object]`` is an arrow from the
subject to the object, labelled with the relation. Variables are ellipses,
constants boxes, the target a double circle. All text is XML-escaped.

Relation labels never overlap each other or a node: each label's box is estimated
from its text (:func:`label_width`, a conservative width at the 12 px font), and
each label takes the first free spot among positions along its edge (the middle
first, then staggered towards the ends, then nudged up and down); a label with no
free spot goes to a band under the graph, tied to its edge by a dashed line.
Labels are placed in triple order, so the same triples give the same picture.

>>> svg = formalization_svg([["?", "director", "V@X"], ["V@X", "born_in", "C@Paris"]])
>>> svg.startswith("<svg") and "born_in" in svg
True
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from markupsafe import Markup

from stillweb.corpora.tasks.formalization import TARGET, is_constant, is_variable

__all__ = ["formalization_svg", "term_columns", "label_width", "LABEL_HEIGHT", "LABEL_BASELINE"]

COLUMN_GAP = 90  # the least room between two columns of nodes
WIDEST_GAP = 200  # the most, widened to fit the labels of the edges that cross it
ROW_HEIGHT = 84
NODE_WIDTH = 170
NODE_HEIGHT = 40
MARGIN = 24
LABEL_CHARS = 24
TARGET_RADIUS = 19
VARIABLE_HALF_WIDTH = NODE_WIDTH / 2 - 30
# Relation labels: 12 px italic text with a 2 px white halo (viewer.css). Widths in em at that
# size, on the wide side of common sans fonts (DejaVu Sans, Liberation Sans, system-ui).
FONT_SIZE = 12
LABEL_HEIGHT = 18  # the box from ascender to descender, halo and a pixel of air included
LABEL_BASELINE = 4  # the baseline below the box's centre
LABEL_PAD = 3  # each side: the halo and air
_WIDE_CHARS = frozenset("mwMW@%…—")
ALONG = (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8)  # where along its edge a label is tried, in order
NUDGES = tuple(sign * step for step in range(0, 49, 6) for sign in ((1,) if step == 0 else (-1, 1)))  # then up and down
NODE_AIR = 2  # labels keep this far from node outlines
BAND_GAP = 10  # between the graph and the band of labels that found no spot on their edge


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
    lefts = _column_lefts(triples, columns)
    rows: dict[int, int] = {}
    position: dict[str, tuple[float, float]] = {}
    for term, column in columns.items():
        row = rows.get(column, 0)
        rows[column] = row + 1
        position[term] = (lefts[column] + NODE_WIDTH / 2, MARGIN + row * ROW_HEIGHT + NODE_HEIGHT / 2)
    width = round(lefts[-1] + NODE_WIDTH + MARGIN)
    height = MARGIN * 2 + (max(rows.values()) - 1) * ROW_HEIGHT + NODE_HEIGHT
    edges = [_edge_ends(position[subject], position[obj], _half_width(subject), _half_width(obj)) for subject, _, obj in triples]
    labels = _place_labels([(_short(relation), ends) for (_, relation, _), ends in zip(triples, edges)],
                           [_node_box(term, *position[term]) for term in columns], width, height)
    height = max([height] + [round(cy + LABEL_HEIGHT / 2 + MARGIN / 2) for cx, cy, _ in labels])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="formalization" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="formalization graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    parts.extend(_edge_line(ends, relation) for (_, relation, _), ends in zip(triples, edges))
    parts.extend(_leader(ends, label) for ends, label in zip(edges, labels) if label[2])
    parts.extend(_node(term, *position[term]) for term in columns)
    parts.extend(_label(relation, cx, cy) for (_, relation, _), (cx, cy, _) in zip(triples, labels))  # on top of lines and nodes
    parts.append("</svg>")
    return Markup("".join(parts))


def _column_lefts(triples: Sequence[Sequence[str]], columns: dict[str, int]) -> list[float]:
    """The left x of each column's nodes: between two columns, room for the widest label of an
    edge joining them (from COLUMN_GAP up to WIDEST_GAP)."""
    gaps = [COLUMN_GAP] * max(columns.values())
    for subject, relation, obj in triples:
        low, high = sorted((columns[subject], columns[obj]))
        if high == low + 1:
            gaps[low] = max(gaps[low], min(WIDEST_GAP, label_width(_short(relation)) + 2 * NODE_AIR))
    lefts = [float(MARGIN)]
    for gap in gaps:
        lefts.append(lefts[-1] + NODE_WIDTH + gap)
    return lefts


def label_width(text: str) -> float:
    """The estimated drawn width (px) of a relation label, halo included (on the wide side)."""
    return FONT_SIZE * sum(1.0 if char in _WIDE_CHARS else 0.8 if char.isupper() or char.isdigit() else 0.64 for char in text) + 2 * LABEL_PAD


Box = tuple[float, float, float, float]  # left, top, right, bottom
Ends = tuple[float, float, float, float]  # x1, y1, x2, y2 of an edge's line


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _place_labels(labels: Sequence[tuple[str, Ends]], nodes: Sequence[Box], width: float, height: float) -> list[tuple[float, float, bool]]:
    """(centre x, centre y, in the band under the graph) of each (label text, edge) in order:
    the first spot along the edge whose box meets no node and no label placed before."""
    taken: list[Box] = []
    placed: list[tuple[float, float, bool]] = []
    unplaced: list[int] = []
    obstacles = [(left - NODE_AIR, top - NODE_AIR, right + NODE_AIR, bottom + NODE_AIR) for left, top, right, bottom in nodes]
    for index, (text, (x1, y1, x2, y2)) in enumerate(labels):
        half = label_width(text) / 2
        spot = None
        for along in ALONG:
            x = min(max(x1 + (x2 - x1) * along, half), width - half)
            for nudge in NUDGES:
                y = y1 + (y2 - y1) * along + nudge
                box = (x - half, y - LABEL_HEIGHT / 2, x + half, y + LABEL_HEIGHT / 2)
                if box[1] >= 0 and box[3] <= height and not any(_overlaps(box, other) for other in (*obstacles, *taken)):
                    spot = (x, y, box)
                    break
            if spot is not None:
                break
        if spot is None:
            placed.append((0.0, 0.0, True))
            unplaced.append(index)
        else:
            taken.append(spot[2])
            placed.append((spot[0], spot[1], False))
    band: list[list[Box]] = []  # rows of the band under the graph
    for index in unplaced:
        text, (x1, y1, x2, y2) = labels[index]
        half = label_width(text) / 2
        x = min(max((x1 + x2) / 2, half), width - half)
        for row, boxes in enumerate([*band, []]):
            y = height + BAND_GAP + (row + 0.5) * (LABEL_HEIGHT + 2)
            box = (x - half, y - LABEL_HEIGHT / 2, x + half, y + LABEL_HEIGHT / 2)
            if not any(_overlaps(box, other) for other in boxes):
                if row == len(band):
                    band.append([])
                band[row].append(box)
                placed[index] = (x, y, True)
                break
    return placed


def _half_width(term: str) -> float:
    """Half the drawn width of a term's node (where its edges start and end)."""
    if term == TARGET:
        return TARGET_RADIUS
    return VARIABLE_HALF_WIDTH if is_variable(term) else NODE_WIDTH / 2


def _edge_ends(start: tuple[float, float], end: tuple[float, float], start_half: float, end_half: float) -> Ends:
    """Where the arrow between two node centres starts and ends (at the node sides, or tops and bottoms)."""
    (x1, y1), (x2, y2) = start, end
    if x1 != x2:  # leave and enter at the node sides
        direction = 1 if x2 > x1 else -1
        x1, x2 = x1 + direction * start_half, x2 - direction * end_half
    else:
        direction = 1 if y2 > y1 else -1
        y1, y2 = y1 + direction * NODE_HEIGHT / 2, y2 - direction * NODE_HEIGHT / 2
    return x1, y1, x2, y2


def _edge_line(ends: Ends, relation: str) -> str:
    x1, y1, x2, y2 = ends
    return (f'<g class="edge"><title>{escape(relation)}</title><line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="#555" stroke-width="1.5" marker-end="url(#arrow)"/></g>')


def _leader(ends: Ends, label: tuple[float, float, bool]) -> str:
    """The dashed line from an edge's middle to its label in the band under the graph."""
    x1, y1, x2, y2 = ends
    x, y, _ = label
    return (f'<line class="leader" x1="{(x1 + x2) / 2:.1f}" y1="{(y1 + y2) / 2:.1f}" x2="{x:.1f}" y2="{y - LABEL_HEIGHT / 2:.1f}" '
            'stroke="#b9a06a" stroke-width="1" stroke-dasharray="3 3"/>')


def _label(relation: str, x: float, y: float) -> str:
    """A relation label centred on (x, y): the text's baseline sits LABEL_BASELINE below."""
    return (f'<text x="{x:.1f}" y="{y + LABEL_BASELINE:.1f}" text-anchor="middle" class="relation">'
            f'<title>{escape(relation)}</title>{escape(_short(relation))}</text>')


def _node_box(term: str, x: float, y: float) -> Box:
    half_width = _half_width(term)
    half_height = TARGET_RADIUS if term == TARGET else NODE_HEIGHT / 2
    return x - half_width, y - half_height, x + half_width, y + half_height


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
