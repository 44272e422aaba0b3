"""Rewards: the one outcome scorer every environment uses, its parts combined by a declared config.

Bespoke Labs' experiments showed that composite rewards invite reward hacking, so
the default :class:`RewardConfig` is the binary outcome alone. Every other part
(F1, gamma-decay, penalties, and a layer's own parts such as WikiQA-v0's citation
precision/recall/rubric) is always *computed* and reported in ``info["reward_parts"]`` so a
trainer can compose its own, but only counts toward the scalar reward when given a weight.

:func:`score_outcome` scores an answer for any environment: the match under the task's rule
(``RewardConfig.answer_match`` overrides it; :mod:`stillweb.corpora.tasks.answer_match`), the
outcome, token F1, the gamma-decayed credit and the penalties for the episode's counts
(:class:`~stillweb.envs.core.counts.EpisodeCounts`: unknown tools, bad arguments, format errors,
and any count a subclass adds that has a ``penalty_<count>`` weight). A layer adds its own parts
(``parts``) and its condition on the outcome (``gate``): WikiQA-v0's citations and evidence rubric
(:mod:`stillweb.envs.wikiqa.citations`) is one. An environment that checks its outcome by state
(tau-bench style: Apps-v0's end state, BFCL's multi-turn checker) passes that check as ``judged``,
the outcome in place of the answer match, and reports its checks beside the scorer's parts
(:class:`JudgedScore`).

Abstention: on an unanswerable task (``TaskRecord.answerable`` false) abstaining is
the correct outcome (``outcome`` 1, ``abstention`` 1) and answering is a
fabrication (``outcome`` 0, ``fabricated_answer`` true); on an answerable task
abstaining earns 0 with ``abstained`` true. Rewarding "the sources do not say"
only when it is true keeps an outcome reward from teaching confident guessing.

>>> from stillweb.corpora.tasks.store.record import TaskRecord
>>> task = TaskRecord.from_dict({"question": "q", "answer": "1,000"})
>>> score = score_outcome(task, "1000", steps=3)
>>> score.outcome, score.total
(1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.answer_match import best_f1, check_answer_match, match_score
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.core.config import config_from
from stillweb.envs.core.counts import EpisodeCounts

__all__ = ["RewardConfig", "OutcomeScore", "JudgedScore", "score_outcome", "gamma_credits", "REWARD_PARTS", "PENALIZED"]

# The weighted parts and the penalized counts, in the order the total sums them.
REWARD_PARTS = ("outcome", "f1", "gamma_decay", "citation_precision", "citation_recall", "rubric", "abstention")
PENALIZED = ("unknown_tool", "bad_arguments", "format_error", "bad_citation", "unsupported_answer", "fabricated_answer")


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


@dataclass(frozen=True)
class OutcomeScore:
    """The scored answer of one episode (``match``: the answer's score under the rule, before any gate)."""

    outcome: float
    f1: float
    gamma_decay: float
    abstention: float
    abstained: bool
    fabricated_answer: bool
    penalty: float
    total: float
    gamma_credits: tuple[float, ...]
    counts: dict[str, Any]
    match: float
    parts: dict[str, float]  # a layer's own parts (``score_outcome(parts=...)``)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready parts (for ``info["reward_parts"]``)."""
        return {"outcome": self.outcome, "f1": self.f1, "gamma_decay": self.gamma_decay, "abstention": self.abstention,
                "abstained": self.abstained, "fabricated_answer": self.fabricated_answer, "penalty": self.penalty,
                "total": self.total, "gamma_credits": list(self.gamma_credits), "counts": dict(self.counts), **self.parts}


@dataclass(frozen=True)
class JudgedScore:
    """An environment's own checks (``checks``: its check dict, e.g. Apps-v0's state match) and the one
    scorer's score of their judgement; ``info["reward_parts"]`` is the checks, then the scorer's other parts.

    >>> from stillweb.corpora.tasks.store.record import TaskRecord
    >>> task = TaskRecord.from_dict({"question": "q", "answer": "done"})
    >>> judged = JudgedScore({"outcome": 1.0, "failed_check": None}, score_outcome(task, "ok", steps=2, judged=1.0))
    >>> judged.total, list(judged.as_dict())[:4]
    (1.0, ['outcome', 'failed_check', 'f1', 'gamma_decay'])
    """

    checks: Mapping[str, Any]
    score: OutcomeScore

    @property
    def total(self) -> float:
        """The reward: the scorer's total."""
        return self.score.total

    @property
    def outcome(self) -> float:
        """The scored outcome (``info["outcome"]``)."""
        return self.score.outcome

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready parts: the checks as the environment reports them, then the scorer's parts they lack."""
        return {**self.checks, **{name: value for name, value in self.score.as_dict().items() if name not in self.checks}}


def score_outcome(task: TaskRecord, answer: str | None, config: RewardConfig | None = None, *, abstained: bool = False,
                  steps: int = 1, counts: EpisodeCounts | None = None, gate: bool = True,
                  parts: Mapping[str, float] | Callable[[float], Mapping[str, float]] | None = None,
                  judged: float | None = None) -> OutcomeScore:
    """Score an episode's ``answer`` (``None``: it did not answer) for ``task`` under ``config`` (default:
    the outcome alone). ``abstained``: the answer is the stated reason of an abstention; ``steps``: the
    episode's length (gamma decay); ``counts``: its counts (each penalized by its ``penalty_<name>``);
    ``gate`` false zeroes the outcome of a matching answer (a layer's condition); ``parts``: a layer's
    parts (or a function of the answer's match score giving them), weighted by the config's field of the same name
    (a layer's part replaces the scorer's of that name). ``judged``: the environment's own judgement of the
    episode (a state check), the outcome in place of the answer match, answerable task or not (the check decides
    what an abstention earns).
    """
    config = config or RewardConfig()
    answer = None if abstained else answer  # an abstention's reason is not an answer
    rule = config.answer_match or task.answer_match  # the set's rule (imported sets: em...), else stillweb's
    if judged is not None:
        match = float(judged)
    else:
        match = match_score(rule, answer, task.golds) if answer is not None and task.golds else 0.0
    fabricated = not task.answerable and answer is not None
    abstention = float(abstained and not task.answerable)
    outcome = (match if gate else 0.0) if task.answerable or judged is not None else abstention
    credits = gamma_credits(outcome, max(steps, 1), config.gamma)
    decayed = {"first": credits[0], "last": credits[-1], "mean": sum(credits) / len(credits)}[config.gamma_scalar]
    f1 = best_f1(answer, task.golds) if answer is not None else 0.0
    counted = {**(counts.as_dict() if counts is not None else {}), "fabricated_answer": fabricated}
    penalty = _in_order([getattr(config, f"penalty_{name}") * counted[name] for name in PENALIZED if name in counted])
    extra = dict((parts(match) if callable(parts) else parts) or {})
    values = {"outcome": outcome, "f1": f1, "gamma_decay": decayed, "abstention": abstention, **extra}
    total = _in_order([getattr(config, name) * values[name] for name in REWARD_PARTS if name in values]) - penalty
    return OutcomeScore(outcome=outcome, f1=f1, gamma_decay=decayed, abstention=abstention, abstained=abstained,
                        fabricated_answer=fabricated, penalty=penalty, total=total, gamma_credits=credits,
                        counts={name: value for name, value in counted.items() if name != "fabricated_answer"},
                        match=match, parts=extra)


def gamma_credits(reward: float, steps: int, gamma: float) -> tuple[float, ...]:
    """Per-step credit ``reward * gamma**(steps - 1 - i)`` for steps ``i = 0..steps-1``.

    >>> gamma_credits(1.0, 3, 0.5)
    (0.25, 0.5, 1.0)
    """
    return tuple(reward * gamma ** (steps - 1 - index) for index in range(steps))


def _in_order(terms: Sequence[float]) -> float:
    """``terms[0] + terms[1] + ...`` summed left to right (the same float as the written-out sum)."""
    total = terms[0]
    for term in terms[1:]:
        total += term
    return total
