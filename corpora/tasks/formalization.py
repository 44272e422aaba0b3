"""The formal core of a task: WebShaper-style triples and their canonical hash.

A formalization is a list of ``[subject, relation, object]`` triples whose
terms are variables (``V@A``), constants (``C@Paris``; a union of alternatives
is written ``C@Paris | Lyon``) or the target ``?``. Two formalizations that
differ only by the names of their variables describe the same question, so
:func:`canonical_hash` renames variables canonically before hashing: it is the
key used to remove duplicates.

>>> canonical_hash([["V@X", "born_in", "C@Paris"], ["?", "director", "V@X"]]) == \\
...     canonical_hash([["V@Q", "born_in", "C@Paris"], ["?", "director", "V@Q"]])
True
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stillweb.corpora.errors import DataError, UsageError
from stillweb.corpora.keyed import stable_hash

__all__ = [
    "TARGET",
    "Triple",
    "variable",
    "constant",
    "is_variable",
    "is_constant",
    "malformed_reason",
    "validate_formalization",
    "canonical_hash",
    "FormalizationStats",
    "formalization_stats",
]

TARGET = "?"
Triple = list  # [subject, relation, object], all strings

_MAX_TIE_PERMUTATIONS = 5040  # 7! : beyond this, ties are broken by first appearance


def variable(name: str) -> str:
    """The term of a variable named ``name`` (``V@name``)."""
    return f"V@{name}"


def constant(*labels: str) -> str:
    """The term of a constant; several labels make a union (``C@a | b``)."""
    if not labels or any(not label for label in labels):
        raise UsageError(f"a constant needs non-empty labels, got {labels!r}")
    return "C@" + " | ".join(labels)


def is_variable(term: str) -> bool:
    """True for ``V@...`` terms."""
    return term.startswith("V@") and len(term) > 2


def is_constant(term: str) -> bool:
    """True for ``C@...`` terms."""
    return term.startswith("C@") and len(term) > 2


def malformed_reason(triple: object) -> str | None:
    """Why a triple is malformed, or None when it is well formed.

    Well formed: a list of exactly three strings; subject and object are
    terms (variable, constant or ``?``); the relation is non-empty text;
    two constants are never attached to each other.
    """
    if not isinstance(triple, (list, tuple)) or len(triple) != 3:
        return "not_three_parts"
    if not all(isinstance(part, str) for part in triple):
        return "not_strings"
    subject, relation, obj = triple
    for term in (subject, obj):
        if not (term == TARGET or is_variable(term) or is_constant(term)):
            return "bad_term"
    if not relation.strip():
        return "empty_relation"
    if is_constant(subject) and is_constant(obj):
        return "constants_attached"
    return None


def validate_formalization(triples: Sequence[Sequence[str]]) -> None:
    """Raise ValueError naming the first malformed triple, or a missing target."""
    for position, triple in enumerate(triples):
        reason = malformed_reason(triple)
        if reason:
            raise DataError(f"malformed triple {position} ({reason}): {triple!r}")
    if not any(TARGET in (t[0], t[2]) for t in triples):
        raise UsageError("formalization has no target '?'")


def canonical_hash(triples: Sequence[Sequence[str]]) -> str:
    """A hash of the formalization graph, invariant to variable renaming and triple order."""
    return stable_hash(json.dumps(_canonical_triples(triples), ensure_ascii=False), 16)


def _canonical_triples(triples: Sequence[Sequence[str]]) -> list[list[str]]:
    variables = sorted({term for t in triples for term in (t[0], t[2]) if is_variable(term)})
    colours = _refined_colours(triples, variables)
    groups = [sorted(v for v in variables if colours[v] == c) for c in sorted(set(colours.values()))]
    best: list[list[str]] | None = None
    orderings = itertools.product(*(itertools.permutations(g) for g in groups))
    for count, ordering in enumerate(orderings):
        if count >= _MAX_TIE_PERMUTATIONS:
            break
        flat = [v for group in ordering for v in group]
        renaming = {v: f"V@{i}" for i, v in enumerate(flat)}
        candidate = sorted([renaming.get(t[0], t[0]), t[1], renaming.get(t[2], t[2])] for t in triples)
        if best is None or candidate < best:
            best = candidate
    return best if best is not None else sorted([list(t) for t in triples])


def _refined_colours(triples: Sequence[Sequence[str]], variables: list[str]) -> dict[str, str]:
    """Weisfeiler-Lehman colours of the variables: their neighbourhoods, iterated.

    A colour is ``#<rank>`` of the variable's signature (its colour and its
    sorted neighbourhood) among all signatures of the round, so colours never
    depend on variable names or on Python's per-process string hashing.
    """
    around: dict[str, list[tuple[str, str, str]]] = {v: [] for v in variables}
    for subject, relation, obj in triples:
        if subject in around:
            around[subject].append(("s", relation, obj))
        if obj in around:
            around[obj].append(("o", relation, subject))
    colours = {v: "#0" for v in variables}
    for _ in range(len(variables)):
        signatures = {
            v: (colours[v], tuple(sorted((side, rel, colours.get(other, other)) for side, rel, other in around[v])))
            for v in variables
        }
        ranks = {sig: f"#{rank}" for rank, sig in enumerate(sorted(set(signatures.values())))}
        refined = {v: ranks[signatures[v]] for v in variables}
        if len(set(refined.values())) == len(set(colours.values())):
            break
        colours = refined
    return colours


@dataclass(frozen=True)
class FormalizationStats:
    """Complexity of a collection of formalizations (WebShaper's reference figures)."""

    tasks: int
    mean_triples: float
    median_triples: float
    max_triples: int
    mean_variables: float
    mean_constants: float
    malformed_tasks: int


def formalization_stats(formalizations: Iterable[Sequence[object]]) -> FormalizationStats:
    """Count triples, distinct variables and constants, and tasks with malformed triples.

    A task is malformed when any of its triples is not a list of three strings
    (the definition that finds 47 in the released WebShaper 500).
    """
    triple_counts: list[int] = []
    variable_counts: list[int] = []
    constant_counts: list[int] = []
    malformed = 0
    for triples in formalizations:
        triples = list(triples)
        triple_counts.append(len(triples))
        terms = [
            part
            for t in triples
            if isinstance(t, (list, tuple))
            for part in t[::2]
            if isinstance(part, str)
        ]
        variable_counts.append(len({t for t in terms if is_variable(t)}))
        constant_counts.append(len({t for t in terms if is_constant(t)}))
        if any(malformed_reason(t) in ("not_three_parts", "not_strings") for t in triples):
            malformed += 1
    n = len(triple_counts)
    if n == 0:
        return FormalizationStats(0, 0.0, 0.0, 0, 0.0, 0.0, 0)
    ordered = sorted(triple_counts)
    median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    return FormalizationStats(
        tasks=n,
        mean_triples=round(sum(triple_counts) / n, 2),
        median_triples=median,
        max_triples=ordered[-1],
        mean_variables=round(sum(variable_counts) / n, 2),
        mean_constants=round(sum(constant_counts) / n, 2),
        malformed_tasks=malformed,
    )
