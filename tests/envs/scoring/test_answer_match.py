"""The answer-match rule stored with a task set: em is Search-R1's exact match (checked against verl's
scorer through the environment), f1 HotpotQA's token F1, and RewardConfig overrides the set's rule."""

from __future__ import annotations

import pytest

from stillweb.corpora.tasks.answer_match import em_score, f1_score, subem_score
from stillweb.corpora.tasks.importers import ImportOptions, import_tasks
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.scoring.rewards import RewardConfig
from stillweb.envs.wikiqa.citations import EpisodeTrace, score_episode
from support.qa_files import (HOTPOT, TWOWIKI, browsecomp_rows, context_snapshot, flashrag_rows, kilt_rows, musique_rows,
                              search_r1_table, write_jsonl, write_parquet)


def _outcome(task, answer, **config):
    return score_episode(task, EpisodeTrace(answer=answer, steps=1), RewardConfig(**config)).outcome


def test_the_sets_rule_decides_and_reward_config_overrides_it():
    task = TaskRecord.from_dict({"question": "When?", "answer": "12 February 1809", "answer_match": "em"})
    assert _outcome(task, "1809-02-12") == 0.0 and _outcome(task, "12 february, 1809!") == 1.0
    assert _outcome(task, "1809-02-12", answer_match="stillweb") == 1.0
    assert _outcome(TaskRecord.from_dict({"question": "When?", "answer": "12 February 1809"}), "1809-02-12") == 1.0  # stillweb
    hotpot = TaskRecord.from_dict({"question": "Who?", "answer": "Charles Darwin", "answer_match": "f1"})
    assert _outcome(hotpot, "Darwin") == pytest.approx(2 / 3)
    assert _outcome(hotpot, "Darwin", answer_match="subem") == 0.0 and _outcome(hotpot, "Sir Charles Darwin", answer_match="subem") == 1.0
    with pytest.raises(ValueError, match="unknown answer match 'exact'"):
        RewardConfig(answer_match="exact")


def test_hotpot_f1_treats_yes_and_no_as_whole_answers():
    assert f1_score("yes", ["no"]) == 0.0 and f1_score("yes it is", ["yes"]) == 0.0 and f1_score("Yes.", ["yes"]) == 1.0
    assert em_score("the  Beatles", ["Beatles"]) == 1.0 and subem_score("Beatles", ["The Beatles band"]) == 0.0


def _candidates(golds):
    for gold in golds:
        yield from (gold, gold.upper(), gold.lower(), f"The {gold}", f"a {gold}", f"{gold}.", f"{gold}!?",
                    f"  {gold}  ", gold.replace(" ", "   "), gold.replace("-", " "), gold.replace(",", ""),
                    f"{gold} and more", f"not {gold}", f"{gold}s")
    yield from ("wrong answer", "the", "!!!", "yes", "no")


@pytest.mark.extra
@pytest.mark.shared_data
def test_em_outcome_equals_verls_search_r1_scorer_for_every_imported_task(shared_data, tmp_path):
    verl_em = pytest.importorskip("verl.utils.reward_score.search_r1_like_qa_em")
    from stillweb.envs.wikiqa.env import WikiQAEnv

    snapshot = context_snapshot(shared_data, tmp_path / "snap")
    files = [shared_data / HOTPOT, shared_data / TWOWIKI, write_jsonl(tmp_path / "test.jsonl", flashrag_rows()),
             write_parquet(tmp_path / "train.parquet", search_r1_table()),
             write_jsonl(tmp_path / "musique_dev.jsonl", musique_rows()), write_jsonl(tmp_path / "kilt.jsonl", kilt_rows()),
             write_jsonl(tmp_path / "browsecomp_plus.jsonl", browsecomp_rows())]
    import_tasks(snapshot, files, "em", ImportOptions(progress=False, answer_match="em", retrieval=False))
    checked = 0
    for split in SPLITS:
        tasks = read_tasks(snapshot, "em", split)
        if not tasks:
            continue
        env = WikiQAEnv(snapshot, tasks="em", split=split, tool_format="search_r1")
        for task in tasks:
            for candidate in _candidates(task.golds or ("1921",)):  # an unanswerable task: any answer earns 0
                env.reset(options={"task_id": task.task_id})
                action = f"<answer>{candidate}</answer>"
                _obs, reward, terminated, _trunc, info = env.step(action)
                expected = verl_em.compute_score(action, {"target": list(task.golds)})
                assert terminated and (reward, info["reward_parts"]["outcome"]) == (expected, expected), (task.task_id, candidate)
                checked += 1
    assert checked > 1500
