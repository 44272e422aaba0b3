"""CLI, exports, the reference-agent solvability proof, and real Wikipedia."""

from __future__ import annotations

import argparse
import json

import pyarrow.parquet as pq
import pytest

from stillweb.cli import tasks as tasks_cli
from stillweb.corpora.tasks.compose.generate import generate_task_list
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.wikiqa.solvability import ReferenceVerifier, solve_with_reference


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    tasks_cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.handler(args)


@pytest.fixture(scope="module")
def cli_set(small_snapshot):
    assert _run(["tasks", "generate", str(small_snapshot), "--name", "cli", "--count", "30", "--seed", "3",
                 "--verify", "8", "--no-progress"]) == 0
    return small_snapshot


def test_generate_writes_splits_card_and_oracle_steps(cli_set):
    directory = cli_set / "tasks" / "cli"
    assert sorted(p.name for p in directory.iterdir()) == ["card.md", "dev.parquet", "test.parquet", "train.parquet"]
    every = [t for split in ("train", "dev", "test") for t in read_tasks(cli_set, "cli", split)]
    assert len(every) == 30
    assert "verified: 8 tasks" in (directory / "card.md").read_text()
    steps = [t.oracle_steps for t in every if t.oracle_steps is not None]
    assert len(steps) == 8 and all(s >= 2 for s in steps)


def test_exports_load_with_their_tools(cli_set, tmp_path):
    from datasets import load_from_disk

    assert _run(["tasks", "export", str(cli_set), "cli", "--format", "jsonl", "--out", str(tmp_path / "j")]) == 0
    lines = (tmp_path / "j" / "train.jsonl").read_text().splitlines()
    assert lines and json.loads(lines[0])["question"]
    assert _run(["tasks", "export", str(cli_set), "cli", "--format", "hf", "--out", str(tmp_path / "h")]) == 0
    dataset = load_from_disk(str(tmp_path / "h" / "cli"))
    assert set(dataset) == {"train", "dev", "test"} and dataset["train"][0]["answer"]
    assert _run(["tasks", "export", str(cli_set), "cli", "--format", "verl", "--out", str(tmp_path / "v")]) == 0
    row = pq.read_table(tmp_path / "v" / "train.parquet").to_pylist()[0]
    assert set(row) == {"id", "question", "golden_answers", "data_source", "prompt", "ability", "reward_model", "extra_info"}
    assert row["prompt"][0]["role"] == "user" and row["reward_model"]["ground_truth"]["target"]


def test_bad_input_names_the_value(small_snapshot, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing-set"):
        _run(["tasks", "export", str(small_snapshot), "missing-set", "--format", "jsonl", "--out", str(tmp_path)])
    with pytest.raises(ValueError, match="workers must be a positive integer, got 0"):
        _run(["tasks", "generate", str(small_snapshot), "--name", "w", "--count", "3", "--workers", "0"])


def test_reference_agent_solves_a_sample(small_snapshot):
    result = generate_task_list(small_snapshot, GenerationParams(count=6, seed=11))
    for task in result.tasks:
        solved = solve_with_reference(small_snapshot, task)
        assert solved.solved, (task.question, solved)
    assert ReferenceVerifier(small_snapshot)(result.tasks[0]) >= 2


@pytest.mark.slow
@pytest.mark.shared_data
def test_real_wikipedia_gives_multi_hop_tasks(wiki_snapshot):
    # keyed questions only (issue 40): the 106-article sample links its pages through few facts, so it yields ~0.4
    # keyed tasks per 100 attempts (47 of 400 asked in 20,000 attempts, BENCHMARKS.md); give it a wide budget
    # issue 49: figures without their year, anthems and office holders are no longer said (8 of 10 in this budget);
    # real questions read two pages where a keyed chain through another page exists: none on this sample (4
    # page-to-page facts), so its one-page questions are kept and counted as such on the card
    result = generate_task_list(wiki_snapshot, GenerationParams(count=10, seed=0, attempts_per_task=300))
    assert len(result.tasks) >= 5 and result.rejections["too_few_pages"] == 0
    assert result.page_hops["one_page_no_chain"] == len(result.tasks) and result.page_hops["could"] == 0
    assert all(t.hops >= 2 and t.evidence for t in result.tasks)
    verifier = ReferenceVerifier(wiki_snapshot)
    assert all(verifier(t) is not None for t in result.tasks[:4])


def test_generate_verifies_a_default_sample_and_states_it(small_snapshot):
    assert _run(["tasks", "generate", str(small_snapshot), "--name", "dflt", "--count", "12", "--seed", "5",
                 "--no-progress"]) == 0
    every = [t for split in ("train", "dev", "test") for t in read_tasks(small_snapshot, "dflt", split)]
    assert all(t.oracle_steps is not None for t in every)  # 12 < the default sample of 50
    card = (small_snapshot / "tasks" / "dflt" / "card.md").read_text()
    assert "verified: 12 tasks (a sample of the first 50 kept tasks)" in card and "oracle steps: mean" in card
    with pytest.raises(ValueError, match="--verify must be -1"):
        _run(["tasks", "generate", str(small_snapshot), "--name", "x", "--count", "3", "--verify", "-2"])


def test_failed_verification_is_a_rejection_reason(small_snapshot):
    def every_other(task: dict) -> int | None:
        every_other.calls += 1
        return None if every_other.calls % 2 else 7

    every_other.calls = 0
    result = generate_task_list(small_snapshot, GenerationParams(count=5, seed=2, verify_limit=6), verifier=every_other)
    assert result.rejections["unsolvable"] == 3 and result.verified == 6
    assert [t.oracle_steps for t in result.tasks] == [7, 7, 7, None, None]
