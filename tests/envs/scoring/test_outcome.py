"""The one outcome scorer: any environment's counts, the task's answer-match rule, penalties, gamma decay."""

from __future__ import annotations

import pytest

from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.core.counts import AppCounts, EpisodeCounts
from stillweb.envs.scoring.rewards import RewardConfig, score_outcome
from stillweb.envs.wikiqa.citations import EpisodeTrace, score_episode

TASK = TaskRecord.from_dict({"question": "When?", "answer": "12 February 1809"})


def test_core_counts_are_scored_and_penalized_without_citation_counts():
    counts = EpisodeCounts(unknown_tool=1, format_error=2)
    config = RewardConfig(penalty_unknown_tool=0.1, penalty_format_error=0.2)
    score = score_outcome(TASK, "1809-02-12", config, steps=2, counts=counts)
    assert (score.outcome, score.penalty) == (1.0, pytest.approx(0.5)) and score.total == pytest.approx(0.5)
    assert score.as_dict()["counts"] == {"unknown_tool": 1, "bad_arguments": 0, "format_error": 2}
    app = score_outcome(TASK, "wrong", config, counts=AppCounts(fabricated_id=3))  # a count with no weight: reported
    assert app.outcome == 0.0 and app.counts["fabricated_id"] == 3 and app.penalty == 0.0


def test_the_task_s_rule_decides_and_the_config_overrides_it():
    em_task = TaskRecord.from_dict({"question": "When?", "answer": "12 February 1809", "answer_match": "em"})
    assert score_outcome(em_task, "1809-02-12").outcome == 0.0 and score_outcome(TASK, "1809-02-12").outcome == 1.0
    assert score_outcome(em_task, "1809-02-12", RewardConfig(answer_match="stillweb")).outcome == 1.0
    assert score_outcome(TASK, None).outcome == 0.0 and score_outcome(TASK, "1809-02-12", gate=False).outcome == 0.0


def test_gamma_decay_and_abstention():
    decayed = score_outcome(TASK, "February 12, 1809", RewardConfig(outcome=0.0, gamma_decay=1.0, gamma=0.5), steps=3)
    assert decayed.gamma_credits == (0.25, 0.5, 1.0) and decayed.total == 0.25
    unanswerable = TaskRecord.from_dict({"question": "q", "answer": "", "answerable": False,
                                         "emptiness": {"kind": "source_label", "detail": "unanswerable"}})
    abstained = score_outcome(unanswerable, "not stated", abstained=True)
    guessed = score_outcome(unanswerable, "Paris", RewardConfig(penalty_fabricated_answer=1.0))
    assert (abstained.outcome, abstained.abstention, guessed.fabricated_answer, guessed.total) == (1.0, 1.0, True, -1.0)


def test_wikiqa_citations_layer_on_the_same_score():
    task = TaskRecord.from_dict({"question": "q", "answer": "Town", "evidence_docs": [4]})
    config = RewardConfig(citation_recall=0.5, penalty_bad_citation=0.25, citation_gate=True)
    trace = EpisodeTrace(answer="Town", steps=2, cited=(4, 9), seen_docs=frozenset({4}), observation_text="town")
    parts = score_episode(task, trace, config)
    base = score_outcome(task, "Town", config, steps=2, counts=parts.counts,
                         parts={"citation_precision": 0.5, "citation_recall": 1.0, "rubric": 0.0})
    assert (parts.outcome, parts.total, parts.penalty) == (base.outcome, base.total, base.penalty) == (1.0, 1.25, 0.25)
    ungated = score_episode(task, EpisodeTrace(answer="Town", steps=2, cited=(9,)), config)
    assert ungated.outcome == 0.0 and not ungated.provenance_ok


def test_a_judged_outcome_replaces_the_answer_match_and_reports_beside_the_checks():
    from stillweb.envs.scoring.rewards import JudgedScore

    impossible = TaskRecord.from_dict({"question": "Delete it", "answer": "", "answerable": False})
    assert score_outcome(TASK, "wrong", judged=1.0).outcome == 1.0 and score_outcome(TASK, "1809", judged=0.0).outcome == 0.0
    assert score_outcome(impossible, None, abstained=True, judged=0.0).outcome == 0.0  # the check decides, not abstaining
    answered = score_outcome(impossible, "Done.", RewardConfig(penalty_fabricated_answer=1.0), judged=1.0)
    assert (answered.outcome, answered.fabricated_answer, answered.total) == (1.0, True, 0.0)
    layered = score_outcome(TASK, None, RewardConfig(abstention=0.5), parts={"abstention": 1.0}, judged=0.0)
    assert layered.total == 0.5 and layered.as_dict()["abstention"] == 1.0  # a layer's part replaces the scorer's
    judged = JudgedScore({"outcome": 1.0, "abstention": 0.0}, score_outcome(TASK, "x", steps=3, judged=1.0))
    assert judged.as_dict()["abstention"] == 0.0 and judged.as_dict()["gamma_credits"] == [1.0 * 0.95 ** 2, 0.95, 1.0]
    assert (judged.total, judged.outcome) == (1.0, 1.0)
