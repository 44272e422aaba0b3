"""The knobs of composition and its outcome (:mod:`stillweb.corpora.tasks.compose.operations` composes).

:class:`ComposeParams` holds every rate and bound of one composition; :class:`Composition` is a
proven query or the rejection reason; :func:`query_level` is WebSailor's difficulty level.
"""

from __future__ import annotations

from dataclasses import dataclass

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.corpora.tasks.prove.uniqueness import Proof
from stillweb.corpora.tasks.query import Query

__all__ = ["LEVELS", "ComposeParams", "Composition", "query_level"]

LEVELS = (1, 2, 3)  # WebSailor's difficulty levels (query_level)


@dataclass(frozen=True)
class ComposeParams:
    """Knobs of composition (all choices inside are keyed-random)."""

    min_hops: int = 2
    max_hops: int = 5
    level: int | None = None  # force WebSailor level 1, 2 or 3
    max_constraints: int = 10
    constants_per_variable: float = 1.2  # enrichment of deep or non-linear queries (0: none) ...
    min_constants: int = 7  # ... to at least this many constants (WebShaper's 500 average 7.06)
    enrich_from_hops: int = 2
    literal_answer_rate: float = 0.25
    fork_rate: float = 0.4
    obfuscate_rate: float = 0.75
    describe_rate: float = 0.9
    intermediate_constant_rate: float = 0.5
    second_constant_rate: float = 0.5
    union_rate: float = 0.15
    target_constants: bool = False  # WebShaper's layer-wise rule forbids them
    require_key: bool = True  # the answer is pinned in the world (keys.py), not only in the snapshot

    def __post_init__(self) -> None:
        if not 1 <= self.min_hops <= self.max_hops:
            raise UsageError(f"need 1 <= min_hops <= max_hops, got min_hops={self.min_hops}, max_hops={self.max_hops}")
        if self.level is not None and self.level not in LEVELS:
            raise UsageError(f"level must be one of {LEVELS}, got {self.level!r}")
        if self.level == 1 and self.min_hops > 2:
            raise UsageError(f"level 1 tasks have at most 2 hops, got min_hops={self.min_hops}")
        check_positive_int("max_constraints", self.max_constraints)
        if self.constants_per_variable < 0 or self.min_constants < 0:
            raise UsageError(f"constants_per_variable and min_constants must be >= 0, "
                             f"got {self.constants_per_variable} and {self.min_constants}")


@dataclass
class Composition:
    """A composed, proven query, or the reason composition gave up."""

    query: Query | None
    proof: Proof | None
    reason: str  # "ok" or a rejection reason
    answer: int = -1  # the answer entity the attempt drew (the query's root), -1 when none could be drawn


def query_level(query: Query) -> int:
    """WebSailor's level: 1 linear, plain, <= 2 hops; 3 non-linear and obfuscated; else 2."""
    obfuscated = bool(query.obfuscations)
    if query.nonlinear and obfuscated:
        return 3
    if not query.nonlinear and not obfuscated and query.hops <= 2:
        return 1
    return 2
