"""Retrieval ablations and seeded search noise: what the ``search`` tool returns in one episode.

**Ablations** (tau2-bench's knowledge ablations: no knowledge, golden retrieval, BM25, dense) answer "is
my policy failing at search or at reasoning?". :data:`RETRIEVAL_MODES` is the one registry of the modes
(the environments, ``tasks profile --retrieval`` and the docs read it):

- ``golden``: the task's evidence documents first, then the normal BM25 ranking (cut at ``k``);
- ``none``: every search returns no hits (a closed-book baseline);
- ``bm25``, ``dense``, ``hybrid``: that ranking whatever the policy's ``retriever`` argument asks
  (``dense`` and ``hybrid`` need a snapshot with vectors, ``stillweb build dense``).

**Noise** (ZeroSearch, Sun et al. 2025, trains against a search engine whose results get noisier on a
curriculum): with probability ``search_noise`` each result slot is replaced by a distractor, a document
that shares terms with the query (it is in the query's BM25 top :data:`DISTRACTOR_DEPTH`) but does not
contain the answer. Whether a slot is replaced and which distractor replaces it are drawn from blake2b
keyed by (snapshot fingerprint, task id, turn, query, slot) (:class:`~stillweb.corpora.keyed.KeyedRng`),
never from a library generator, so the same episode gets the same noise in every process.
:func:`noise_schedule` gives ``search_noise`` as a pure function of the training step.

>>> sorted(RETRIEVAL_MODES)
['bm25', 'dense', 'golden', 'hybrid', 'none']
>>> noise_schedule(50, "linear", start=0.0, end=0.4, steps=100)
0.2
>>> noise_schedule(150, "step", start=0.0, end=0.6, steps=300, stages=3)
0.3
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stillweb.corpora.search.dense import SEARCH_MODES
from stillweb.corpora.errors import UsageError
from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.snapshot.records import SearchResult
from stillweb.corpora.search.snippets import make_snippet, snippet_needles

if TYPE_CHECKING:
    from stillweb.corpora.snapshot.reading import Snapshot

__all__ = ["RETRIEVAL_MODES", "DISTRACTOR_DEPTH", "SCHEDULES", "SearchSettings", "check_retrieval", "check_noise",
           "noise_schedule", "golden_first", "add_noise"]

RETRIEVAL_MODES: dict[str, str] = {
    "golden": "the task's evidence documents first, then the normal BM25 ranking",
    "none": "every search returns no hits (closed book)",
    "bm25": "BM25 only, whatever the policy's retriever argument",
    "dense": "the dense index only (a snapshot with vectors)",
    "hybrid": "BM25 and dense fused (a snapshot with vectors)",
}
DISTRACTOR_DEPTH = 30  # distractors come from the query's BM25 top 30: they share its terms
SCHEDULES = ("constant", "linear", "step")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class SearchSettings:
    """How the ``search`` tool answers in the episode under way.

    ``retrieval``: a :data:`RETRIEVAL_MODES` name, or ``None`` (the policy's ``retriever`` argument rules);
    ``search_noise``: the probability that a result slot holds a distractor; ``golden_docs``: the task's
    evidence documents; ``answers``: the strings a distractor may not contain; ``fingerprint``, ``task_id``
    and ``turn`` key the noise.
    """

    retrieval: str | None = None
    search_noise: float = 0.0
    golden_docs: tuple[int, ...] = ()
    answers: tuple[str, ...] = ()
    fingerprint: str = ""
    task_id: str = ""
    turn: int = 0

    def as_info(self) -> dict[str, Any]:
        """``info["retrieval"]``: the mode (``"default"`` when the policy chooses) and the noise."""
        return {"mode": self.retrieval or "default", "search_noise": self.search_noise}


def check_retrieval(value: Any, snapshot: Snapshot | None) -> str | None:
    """``value`` if it names a retrieval mode ``snapshot`` can serve (``None`` passes: the default);
    ``UsageError`` naming the allowed modes otherwise."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in RETRIEVAL_MODES:
        raise UsageError(f"retrieval must be one of {list(RETRIEVAL_MODES)} (or None: the policy chooses), "
                         f"got {value!r:.100}")
    if value in SEARCH_MODES[1:] and (snapshot is None or snapshot.dense_info is None):
        raise UsageError(f"retrieval {value!r} needs a snapshot with dense vectors (stillweb build dense); "
                         f"this one has none: use one of {[m for m in RETRIEVAL_MODES if m not in SEARCH_MODES[1:]]}")
    return value


def check_noise(value: Any) -> float:
    """``value`` as a probability in [0, 1]; ``UsageError`` naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise UsageError(f"search_noise must be a probability in [0, 1], got {value!r:.100}")
    return float(value)


def noise_schedule(step: int, kind: str = "linear", *, start: float = 0.0, end: float = 0.5, steps: int = 1000,
                   stages: int = 4) -> float:
    """The ``search_noise`` of training step ``step`` (a pure function: no state, no clock).

    ``constant``: ``end``; ``linear``: from ``start`` at step 0 to ``end`` at ``steps``, then ``end``;
    ``step``: ``stages`` equal plateaus from ``start`` to ``end`` over ``steps`` (ZeroSearch raises the noise
    during training). ``UsageError`` for an unknown kind, a negative step or bounds outside [0, 1].
    """
    if kind not in SCHEDULES:
        raise UsageError(f"unknown noise schedule {kind!r}; schedules: {list(SCHEDULES)}")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise UsageError(f"step must be a non-negative integer, got {step!r}")
    if not isinstance(steps, int) or steps < 1 or not isinstance(stages, int) or stages < 1:
        raise UsageError(f"steps and stages must be positive integers, got steps={steps!r} stages={stages!r}")
    start, end = check_noise(start), check_noise(end)
    if kind == "constant":
        return end
    progress = min(step, steps) / steps
    if kind == "step":
        progress = min(int(progress * stages), stages - 1) / max(stages - 1, 1)
    return round(start + (end - start) * progress, 12)


def golden_first(snapshot: Snapshot, query: str, k: int, golden_docs: tuple[int, ...],
                 ranking: list[SearchResult]) -> list[SearchResult]:
    """The evidence documents (those in the snapshot, in task order) then ``ranking`` without them, cut at ``k``."""
    golden = [doc for doc in dict.fromkeys(golden_docs) if type(doc) is int and 0 <= doc < len(snapshot)]
    scores = {result.doc_id: result.score for result in ranking}
    needles = snippet_needles(query)
    head = [SearchResult(doc, snapshot.title_of(doc), scores.get(doc, 0.0),
                         make_snippet(snapshot.text_of(doc).encode("utf-8"), needles), snapshot.source_id_of(doc))
            for doc in golden]
    shown = set(golden)
    return (head + [result for result in ranking if result.doc_id not in shown])[:k]


def add_noise(snapshot: Snapshot, query: str, results: list[SearchResult], settings: SearchSettings) -> list[SearchResult]:
    """``results`` with each slot replaced, with probability ``settings.search_noise``, by a distractor
    (see the module docstring); a slot keeps its result when no distractor is left."""
    if settings.search_noise <= 0.0 or not results:
        return results
    key = (settings.fingerprint, settings.task_id, settings.turn, query)
    replaced = [KeyedRng(0, "search_noise", *key, slot).random() < settings.search_noise
                for slot in range(len(results))]
    if not any(replaced):
        return results
    shown = {result.doc_id for result in results}
    candidates = [result for result in snapshot.search(query, DISTRACTOR_DEPTH) if result.doc_id not in shown]
    order = iter(KeyedRng(0, "distractors", *key).shuffled(candidates))  # drawn lazily: few texts are read
    needles = [needle for needle in map(_words, settings.answers) if needle.strip()]

    def answer_free(candidate: SearchResult) -> bool:  # each candidate's text is read and split once
        words = _words(snapshot.text_of(candidate.doc_id)) if needles else ""
        return not any(needle in words for needle in needles)

    return [next(filter(answer_free, order), None) or result if replaced[slot] else result
            for slot, result in enumerate(results)]


def _words(text: str) -> str:
    """``text`` casefolded as space-separated words, padded with spaces (a needle then matches whole words)."""
    return f" {' '.join(_WORD.findall(text.casefold()))} "
