"""Rewards: each part computed separately, then combined by a declared config.

Bespoke Labs' experiments showed that composite rewards invite reward hacking, so
the default :class:`RewardConfig` is the binary outcome alone. Every other part
(F1, gamma-decay, citation precision/recall/rubric, hallucination penalties) is
always *computed* and reported in ``info["reward_parts"]`` so a trainer can
compose its own, but only counts toward the scalar reward when given a weight.

Abstention: on an unanswerable task (``TaskRecord.answerable`` false) abstaining is
the correct outcome (``outcome`` 1, ``abstention`` 1) and answering is a
fabrication (``outcome`` 0, ``fabricated_answer`` true); on an answerable task
abstaining earns 0 with ``abstained`` true. Rewarding "the sources do not say"
only when it is true keeps an outcome reward from teaching confident guessing.

>>> from stillweb.corpora.tasks.record import TaskRecord
>>> task = TaskRecord.from_dict({"question": "q", "answer": "1,000"})
>>> parts = score_episode(task, EpisodeTrace(answer="1000", steps=3), RewardConfig())
>>> parts.outcome, parts.total
(1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from stillweb.corpora.errors import UsageError
from stillweb.envs.core.config import config_from
from stillweb.envs.core.counts import WikiQACounts
from stillweb.corpora.tasks.answer_match import best_f1, check_answer_match, match_score, normalize_answer
from stillweb.corpora.tasks.record import EvidenceItem, TaskRecord

__all__ = ["RewardConfig", "EpisodeTrace", "RewardParts", "score_episode", "gamma_credits"]


@dataclass(frozen=True)
class RewardConfig:
    """Weights of the reward parts in the scalar reward (default: outcome only).

    ``total = sum(weight * part) - sum(penalty * count)``, where ``outcome`` is
    gated by provenance when ``citation_gate`` is set. ``gamma`` sets the decay
    of :func:`gamma_credits`; ``gamma_scalar`` picks which credit is the
    ``gamma_decay`` part at termination: the first step's (``r * gamma**(T-1)``,
    which shrinks with episode length), the last step's (``r``) or their mean.

    >>> RewardConfig(outcome=0.8, citation_recall=0.2).outcome
    0.8
    """

    outcome: float = 1.0
    f1: float = 0.0
    gamma_decay: float = 0.0
    citation_precision: float = 0.0
    citation_recall: float = 0.0
    rubric: float = 0.0
    abstention: float = 0.0
    citation_gate: bool = False
    gamma: float = 0.95
    gamma_scalar: Literal["first", "last", "mean"] = "first"
    penalty_unknown_tool: float = 0.0
    penalty_bad_arguments: float = 0.0
    penalty_format_error: float = 0.0
    penalty_bad_citation: float = 0.0
    penalty_unsupported_answer: float = 0.0
    penalty_fabricated_answer: float = 0.0
    answer_match: str | None = None  # em|subem|f1|stillweb: overrides the task set's stored rule

    def __post_init__(self) -> None:
        if self.answer_match is not None:
            check_answer_match(self.answer_match)
        if not 0.0 < self.gamma <= 1.0:
            raise UsageError(f"RewardConfig.gamma must be in (0, 1], got {self.gamma!r}")
        if self.gamma_scalar not in ("first", "last", "mean"):
            raise UsageError(f"RewardConfig.gamma_scalar must be 'first', 'last' or 'mean', got {self.gamma_scalar!r}")

    @classmethod
    def from_value(cls, value: "RewardConfig | Mapping[str, Any] | None") -> "RewardConfig":
        """A config from itself, a dict of its fields (unknown keys are an error), or None (default)."""
        return config_from(cls, value)


@dataclass
class EpisodeTrace:
    """What the environment observed of an episode, as the reward needs it.

    ``cited`` holds resolved doc ids (``None`` for citations that name no
    document); ``seen_docs`` the docs that appeared in any observation;
    ``opened_docs`` the docs the agent read; ``observation_text`` every
    observation, normalized and joined, to check that the answer was seen.
    ``abstained``: the agent abstained (``answer`` is then its stated reason).
    """

    answer: str | None = None
    abstained: bool = False
    steps: int = 0
    cited: tuple[int | None, ...] = ()
    seen_docs: frozenset[int] = frozenset()
    opened_docs: frozenset[int] = frozenset()
    observation_text: str = ""
    counts: WikiQACounts = field(default_factory=WikiQACounts)


@dataclass(frozen=True)
class RewardParts:
    """Every reward part of one episode, plus the configured scalar ``total``."""

    outcome: float
    f1: float
    gamma_decay: float
    citation_precision: float
    citation_recall: float
    rubric: float
    abstention: float
    provenance_ok: bool
    abstained: bool
    fabricated_answer: bool
    penalty: float
    total: float
    gamma_credits: tuple[float, ...]
    counts: WikiQACounts

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict (for ``info["reward_parts"]``)."""
        parts = asdict(self)
        parts["gamma_credits"] = list(self.gamma_credits)
        return parts


def gamma_credits(reward: float, steps: int, gamma: float) -> tuple[float, ...]:
    """Per-step credit ``reward * gamma**(steps - 1 - i)`` for steps ``i = 0..steps-1``.

    >>> gamma_credits(1.0, 3, 0.5)
    (0.25, 0.5, 1.0)
    """
    return tuple(reward * gamma ** (steps - 1 - index) for index in range(steps))


def score_episode(task: TaskRecord, trace: EpisodeTrace, config: RewardConfig) -> RewardParts:
    """All reward parts of a finished episode (a truncated one has ``answer=None``).

    Hallucination counts for citations and the answer are counted here, into a copy of
    the trace's per-call counts (unknown tool, bad arguments, format errors) returned
    as ``RewardParts.counts``; the trace itself is left as it was given.
    """
    answer = None if trace.abstained else trace.answer  # an abstention's reason is not an answer
    rule = config.answer_match or task.answer_match  # the set's rule (imported sets: em...), else stillweb's
    score = match_score(rule, answer, task.golds) if answer is not None and task.golds else 0.0
    correct = score > 0
    fabricated = not task.answerable and answer is not None
    abstention = float(trace.abstained and not task.answerable)
    cited_docs = tuple(dict.fromkeys(doc for doc in trace.cited if doc is not None))
    counts = replace(trace.counts, bad_citation=sum(1 for doc in trace.cited if doc is None or doc not in trace.seen_docs))
    if answer is not None:
        normalized = normalize_answer(answer)
        counts = replace(counts, unsupported_answer=int(not normalized or normalized not in trace.observation_text))
    evidence_docs = set(task.evidence_docs)
    hits = len(evidence_docs.intersection(cited_docs))
    precision = hits / len(cited_docs) if cited_docs else 0.0
    recall = hits / len(evidence_docs) if evidence_docs else 0.0
    provenance_ok = not evidence_docs or evidence_docs.issubset(cited_docs)
    outcome = (score if provenance_ok or not config.citation_gate else 0.0) if task.answerable else abstention
    credits = gamma_credits(outcome, max(trace.steps, 1), config.gamma)
    decayed = {"first": credits[0], "last": credits[-1], "mean": sum(credits) / len(credits)}[config.gamma_scalar]
    rubric = _rubric(task.evidence, task.golds, set(cited_docs) & trace.opened_docs) if correct else 0.0
    f1 = best_f1(answer, task.golds) if answer is not None else 0.0
    penalty = (
        config.penalty_unknown_tool * counts.unknown_tool
        + config.penalty_bad_arguments * counts.bad_arguments
        + config.penalty_format_error * counts.format_error
        + config.penalty_bad_citation * counts.bad_citation
        + config.penalty_unsupported_answer * counts.unsupported_answer
        + config.penalty_fabricated_answer * fabricated
    )
    total = (
        config.outcome * outcome
        + config.f1 * f1
        + config.gamma_decay * decayed
        + config.citation_precision * precision
        + config.citation_recall * recall
        + config.rubric * rubric
        + config.abstention * abstention
        - penalty
    )
    return RewardParts(
        outcome=outcome,
        f1=f1,
        gamma_decay=decayed,
        citation_precision=precision,
        citation_recall=recall,
        rubric=rubric,
        abstention=abstention,
        provenance_ok=provenance_ok,
        abstained=trace.abstained,
        fabricated_answer=fabricated,
        penalty=penalty,
        total=total,
        gamma_credits=credits,
        counts=counts,
    )


def _rubric(evidence: tuple[EvidenceItem, ...], golds: tuple[str, ...], supported_docs: set[int]) -> float:
    """CaRR-like rubric of a correct answer: the fraction of evidence facts supported and connected to it.

    A fact is *supported* when its doc was both opened and cited. Each fact is
    an edge between its subject and its value; a supported fact counts only if
    a path of supported facts links it to the answer (a gold answer as a value,
    or as the subject: entity answers are the subject of the facts describing
    them).
    """
    if not evidence:
        return 0.0
    targets = {normalize_answer(gold) for gold in golds} - {""}
    supported = [item for item in evidence if item.doc_id in supported_docs]
    edges = [{normalize_answer(item.subject), normalize_answer(item.value)} for item in supported]
    reached_nodes = set(targets)
    reached: set[int] = set()
    grew = True
    while grew:
        grew = False
        for index, nodes in enumerate(edges):
            if index not in reached and nodes & reached_nodes:
                reached.add(index)
                reached_nodes |= nodes
                grew = True
    return len(reached) / len(evidence)
