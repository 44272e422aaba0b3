"""Unanswerable tasks: proven empty, mixed in at a share, abstained on by the reference agent, deterministic."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from stillweb.cli.main import main
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.compose.generate import generate_task_list, generate_tasks
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.envs.wikiqa.solvability import solve_with_reference


@pytest.fixture(scope="module")
def unanswerable_tasks(small_snapshot):
    return generate_task_list(str(small_snapshot), GenerationParams(count=40, seed=1, unanswerable=1.0)).tasks


def test_both_kinds_are_made_and_marked(unanswerable_tasks):
    kinds = Counter(task.emptiness_proof.kind for task in unanswerable_tasks)
    assert set(kinds) == {"joint_empty", "missing_attribute"}
    for task in unanswerable_tasks:
        assert not task.answerable and task.answer == "" and task.golds == () and task.answer_doc is None
        assert task.evidence and task.formalization and task.shape.endswith("+unanswerable")


def test_every_constraint_is_satisfiable_alone_but_none_answers(unanswerable_tasks, small_snapshot):
    snapshot = Snapshot.open(small_snapshot)
    for task in unanswerable_tasks:
        proof = task.emptiness_proof
        for check in proof.constraints:  # plausible: each constraint holds for a real entity of the snapshot
            assert check.satisfied_by >= 1 and check.witness >= 0
            assert snapshot.facts(subject=check.witness, relation=check.relation) or \
                snapshot.facts(object=check.witness, relation=check.relation)
        (root, root_count), *_ = proof.candidates  # the root (target) comes first
        if proof.kind == "joint_empty":
            assert root_count == 0
        else:  # one entity is identified, and the snapshot never states the asked relation for it
            assert task.formalization[0] == (root, proof.relation, "?") and root_count == 1
            assert snapshot.facts(subject=proof.entity, relation=proof.relation) == []
            assert proof.stated_for >= 1 and snapshot.facts(relation=proof.relation)


@pytest.mark.parametrize("tool_format", ["tongyi", "openai", "search_r1"])
def test_the_reference_agent_searches_then_abstains(unanswerable_tasks, small_snapshot, tool_format):
    for task in unanswerable_tasks[:3]:
        result = solve_with_reference(small_snapshot, task.to_dict(), tool_format)
        assert result.solved and result.outcome == 1.0 and result.ending == "answered" and result.steps >= 2


def test_a_mixed_set_keeps_its_answerable_tasks_as_they_were(small_snapshot):
    mixed = generate_task_list(str(small_snapshot), GenerationParams(count=12, seed=0, unanswerable=0.3)).tasks
    pure = generate_task_list(str(small_snapshot), GenerationParams(count=40, seed=0)).tasks
    answerable = [task for task in mixed if task.answerable]
    assert answerable and len(answerable) < len(mixed)
    # The split is the set's (fill_empty_splits moves whole answer groups into an empty dev or test), so the
    # tasks are compared without it.
    assert {replace(task, split=None) for task in answerable} <= {replace(task, split=None) for task in pure}
    assert all(task.answerable and task.emptiness_proof is None for task in pure)


def test_share_zero_is_byte_identical_to_no_option(small_snapshot):
    plain = generate_tasks(small_snapshot, "u17-plain", GenerationParams(count=10, seed=3))
    zero = generate_tasks(small_snapshot, "u17-zero", GenerationParams(count=10, seed=3, unanswerable=0.0))
    for split in SPLITS:
        assert (small_snapshot / "tasks/u17-plain" / f"{split}.parquet").read_bytes() == \
            (small_snapshot / "tasks/u17-zero" / f"{split}.parquet").read_bytes()
    card = (small_snapshot / "tasks/u17-zero/card.md").read_text()
    assert card == (small_snapshot / "tasks/u17-plain/card.md").read_text().replace("u17-plain", "u17-zero")
    assert "unanswerable" not in card and plain.count == zero.count == 10


def test_emptiness_proofs_are_identical_bytes_in_two_processes(small_snapshot):
    for name in ("u17-a", "u17-b"):
        command = [sys.executable, "-m", "stillweb.cli.main", "tasks", "generate", str(small_snapshot), "--name", name,
                   "--count", "16", "--seed", "2", "--unanswerable", "0.5", "--verify", "0", "--no-progress"]
        subprocess.run(command, check=True, capture_output=True)
    for split in SPLITS:
        first = (small_snapshot / "tasks/u17-a" / f"{split}.parquet").read_bytes()
        assert first == (small_snapshot / "tasks/u17-b" / f"{split}.parquet").read_bytes()
    tasks = [task for split in SPLITS for task in read_tasks(small_snapshot, "u17-a", split)]
    unanswerable = [task for task in tasks if not task.answerable]
    assert unanswerable and all(task.emptiness_proof is not None for task in unanswerable)
    assert pq.read_schema(small_snapshot / "tasks/u17-a/train.parquet").field("emptiness_proof").type.num_fields == 6
    assert "- unanswerable (emptiness proven" in (small_snapshot / "tasks/u17-a/card.md").read_text()


def test_a_bad_share_is_named(small_snapshot, capsys):
    assert main(["tasks", "generate", str(small_snapshot), "--name", "u17-bad", "--count", "2", "--unanswerable", "1.5",
                 "--verify", "0", "--no-progress"]) == 2
    assert "unanswerable must be a share in [0, 1], got 1.5" in capsys.readouterr().err
