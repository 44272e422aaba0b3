"""An import of questions without evidence checks how they fit the corpus (a golden answer in BM25's top k
passages) by default, reports it on the card and the console, and warns with the share when fewer than
half fit (FlashRAG's NQ sample over its own 1,000-passage sample corpus: 0 of 17 had the gold in the top 3)."""

from __future__ import annotations

from stillweb.cli.main import main
from stillweb.corpora.tasks.importers import ImportOptions, import_tasks
from stillweb.corpora.tasks.store.files import read_tasks
from support.wiki18 import NQ_ROWS, build_wiki18, write_rows

OTHER_QUESTIONS = [  # NQ-style questions this corpus cannot answer
    {"id": "x0", "question": "who sang thriller", "golden_answers": ["Michael Jackson"]},
    {"id": "x1", "question": "when did the titanic sink", "golden_answers": ["1912"]},
    {"id": "x2", "question": "capital of velland", "golden_answers": ["Ostra"]},  # this one fits
]


def test_fitting_questions_are_counted_and_do_not_warn(tmp_path):
    snapshot, _ = build_wiki18(tmp_path / "w")
    summary = import_tasks(snapshot, [write_rows(tmp_path / "nq_test.jsonl", NQ_ROWS)], "nq", ImportOptions(progress=False))
    tasks = read_tasks(snapshot, "nq", "test")
    assert [task.solvability.answer_in_top_k for task in tasks] == [True] * len(NQ_ROWS)
    assert summary.solvability["fit_checked"] == len(NQ_ROWS) and summary.warning is None
    card = (snapshot / "tasks" / "nq" / "card.md").read_text(encoding="utf-8")
    assert f"- answer string in BM25's top 10 (questions without evidence): {len(NQ_ROWS)} (100.0%)" in card
    assert "retrieval check: no question names evidence" in card


def test_questions_that_do_not_fit_warn_with_the_share(tmp_path, capsys):
    snapshot, _ = build_wiki18(tmp_path / "w")
    questions = write_rows(tmp_path / "other.jsonl", OTHER_QUESTIONS)
    assert main(["tasks", "import", str(snapshot), str(questions), "--name", "other", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "answer in BM25 top 10: 1 of 3" in captured.out
    assert captured.err.startswith("warning: 1 of 3 questions (33.3%) have a golden answer in BM25's top 10")
    assert "--no-retrieval-check" in captured.err
    tasks = {task.task_id: task for split in ("train", "dev", "test") for task in read_tasks(snapshot, "other", split)}
    assert {task_id: task.solvability.answer_in_top_k for task_id, task in tasks.items()} == {"x0": False, "x1": False,
                                                                                             "x2": True}
    assert "(fewer than half: the questions do not fit this corpus)" in (
        snapshot / "tasks" / "other" / "card.md").read_text(encoding="utf-8")
    assert main(["tasks", "import", str(snapshot), str(questions), "--name", "other2", "--no-progress",
                 "--no-retrieval-check"]) == 0
    assert capsys.readouterr().err == ""
