"""``stillweb tasks polish`` against a local OpenAI-compatible stub (issue 35 item 5): faithful rewrites are
kept, the others counted by reason, the model and sampling go into the card, the source set never changes,
and two runs give the same bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stillweb.corpora.tasks.phrase.polish import REJECTIONS, constant_forms, rewrite_problem
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.prove.resolve import FactTables
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks, task_set_dir
from support.chat_stub import serve
from support.network import free_port

MODEL = "stub/rewriter"


def rewrite_kinds(tasks: list[TaskRecord]) -> dict[str, str]:
    """Which rewrite the stub gives each question: round-robin over the tasks by id ("drop" only where the
    question states a constant to drop, else "empty")."""
    kinds = {}
    for index, task in enumerate(sorted(tasks, key=lambda task: task.task_id)):
        kind = ("good", "leak", "drop", "good", "empty", "same")[index % 6]
        kinds[task.question] = "empty" if kind == "drop" and not constant_forms(task) else kind
    return kinds


def rewriter_app(answers: dict[str, str], kinds: dict[str, str]):
    """A chat endpoint that rewrites each question in the way ``kinds`` says."""
    from fastapi import FastAPI

    app = FastAPI()

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": MODEL, "object": "model"}]}

    @app.post("/v1/chat/completions")
    def complete(body: dict) -> dict:
        question = body["messages"][-1]["content"]
        kind = kinds[question]
        text = {"good": f"Here is a puzzle for you. {question}", "leak": f"{question} Is it {answers[question]}?",
                "drop": "Which one is it?", "empty": "", "same": question}[kind]
        return {"choices": [{"message": {"role": "assistant", "content": text}}], "model": MODEL}

    return app


@pytest.fixture(scope="module")
def polished(tasks_snapshot, tmp_path_factory):
    """Two polish runs of the set ``hard`` (in fresh processes) over copies of the snapshot; their CLI output."""
    import shutil

    tasks = [task for split in SPLITS for task in read_tasks(tasks_snapshot, "hard", split)]
    answers = {task.question: task.answer for task in tasks}
    runs = []
    with serve(rewriter_app(answers, rewrite_kinds(tasks)), free_port()) as url:
        for run in range(2):
            snapshot = tmp_path_factory.mktemp(f"polish{run}") / "snap"
            shutil.copytree(tasks_snapshot, snapshot)
            result = subprocess.run([sys.executable, "-m", "stillweb.cli.main", "tasks", "polish", str(snapshot), "hard",
                                     "--policy", url, "--temperature", "0.5", "--no-progress"],
                                    capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, result.stderr
            runs.append((snapshot, result.stdout))
    return tasks, runs


def test_faithful_rewrites_are_kept_and_the_others_counted(polished):
    tasks, [(snapshot, output), _] = polished
    new = {task.task_id: task for split in SPLITS for task in read_tasks(snapshot, "hard-polished", split)}
    assert set(new) == {task.task_id for task in tasks}
    expected_kept, kinds = 0, rewrite_kinds(tasks)
    for task in tasks:
        kind = kinds[task.question]
        if kind == "good":
            expected_kept += 1
            assert new[task.task_id].question == f"Here is a puzzle for you. {task.question}"
        else:
            assert new[task.task_id].question == task.question, kind
    assert expected_kept >= 2 and f"kept {expected_kept} of {len(tasks)} rewrites by {MODEL}" in output
    card = (task_set_dir(snapshot, "hard-polished") / "card.md").read_text()
    assert f"Rewritten by `{MODEL}` (max_tokens 512, temperature 0.5, top_p 1.0)" in card
    assert all(reason in card for reason in REJECTIONS)
    source = {task.task_id: task.question for split in SPLITS for task in read_tasks(snapshot, "hard", split)}
    assert source == {task.task_id: task.question for task in tasks}  # the source set is never rewritten


def test_two_processes_write_the_same_bytes(polished):
    _, runs = polished
    digests = [{split: (task_set_dir(snapshot, "hard-polished") / f"{split}.parquet").read_bytes() for split in SPLITS}
               for snapshot, _ in runs]
    assert digests[0] == digests[1]


def test_each_rejection_reason(tasks_snapshot):
    task = next(task for task in read_tasks(tasks_snapshot, "hard", "train") if constant_forms(task))
    tables = FactTables(tasks_snapshot)
    form = next(form for form in constant_forms(task) if form in task.question)  # "Architect" is said "an architect"
    assert rewrite_problem(task, None) == "no_reply"
    assert rewrite_problem(task, "x" * 3000) == "too_long"
    assert rewrite_problem(task, task.question) == "unchanged"
    assert rewrite_problem(task, task.question.replace(form, "someone")) == "constant_missing"
    assert rewrite_problem(task, f"{task.question} ({task.answer})") == "answer_leaked"
    assert rewrite_problem(task, f"Tell me: {task.question}", tables) is None
    broken = TaskRecord.from_dict({**task.to_dict(), "formalization": [["?", "no_such_relation", f"C@{form}"]]})
    assert rewrite_problem(broken, f"Tell me: {broken.question}", tables) is None  # the same (failing) re-proof


def test_polish_refuses_to_rewrite_in_place_and_names_a_missing_set(tasks_snapshot):
    for argv, message in ((["hard", "--out", "hard"], "never rewrites a set in place"),
                          (["nope"], "no task set 'nope'")):
        result = subprocess.run([sys.executable, "-m", "stillweb.cli.main", "tasks", "polish", str(tasks_snapshot), *argv,
                                 "--policy", "http://127.0.0.1:9/v1", "--model", "m"], capture_output=True, text=True)
        assert result.returncode == 2 and message in result.stderr, result.stderr
