"""WikiQA-v0's citation and evidence layer on the one outcome scorer (:func:`~stillweb.envs.scoring.rewards.score_outcome`).

The answer is scored like any environment's; this layer adds what citations make possible:
the counts of cited ids that name no document shown (``bad_citation``) and of an answer no
observation showed (``unsupported_answer``), citation precision and recall against the task's
evidence documents, the CaRR-like evidence rubric of a correct answer, and the citation gate
(``RewardConfig.citation_gate``: the outcome counts only when every evidence document is cited).

>>> from stillweb.corpora.tasks.store.record import TaskRecord
>>> task = TaskRecord.from_dict({"question": "q", "answer": "1,000"})
>>> parts = score_episode(task, EpisodeTrace(answer="1000", steps=3), RewardConfig())
>>> parts.outcome, parts.total
(1.0, 1.0)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from stillweb.corpora.tasks.answer_match import normalize_answer
from stillweb.corpora.tasks.store.record import EvidenceItem, TaskRecord
from stillweb.envs.core.counts import WikiQACounts
from stillweb.envs.scoring.rewards import RewardConfig, score_outcome

__all__ = ["EpisodeTrace", "RewardParts", "score_episode"]


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


def score_episode(task: TaskRecord, trace: EpisodeTrace, config: RewardConfig) -> RewardParts:
    """All reward parts of a finished episode (a truncated one has ``answer=None``).

    Hallucination counts for citations and the answer are counted here, into a copy of
    the trace's per-call counts (unknown tool, bad arguments, format errors) returned
    as ``RewardParts.counts``; the trace itself is left as it was given.
    """
    answer = None if trace.abstained else trace.answer
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
    gate = provenance_ok or not config.citation_gate
    supported = set(cited_docs) & trace.opened_docs

    def citation_parts(match: float) -> dict[str, float]:  # the rubric scores a correct answer only
        rubric = _rubric(task.evidence, task.golds, supported) if match > 0 else 0.0
        return {"citation_precision": precision, "citation_recall": recall, "rubric": rubric}

    scored = score_outcome(task, answer, config, abstained=trace.abstained, steps=trace.steps, counts=counts, gate=gate,
                           parts=citation_parts)
    rubric = scored.parts["rubric"]
    return RewardParts(
        outcome=scored.outcome,
        f1=scored.f1,
        gamma_decay=scored.gamma_decay,
        citation_precision=precision,
        citation_recall=recall,
        rubric=rubric,
        abstention=scored.abstention,
        provenance_ok=provenance_ok,
        abstained=trace.abstained,
        fabricated_answer=scored.fabricated_answer,
        penalty=scored.penalty,
        total=scored.total,
        gamma_credits=scored.gamma_credits,
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
