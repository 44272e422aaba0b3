"""Chinese QA sets import: the CMRC 2018 trial file (``../shared/data/cmrc2018_trial.json``: 256
Chinese Wikipedia paragraphs, 1,002 questions) with each question's paragraph mapped as its
evidence, the same questions written in SQuAD's layout (CMRC 2018's train/dev files), and
SailorFog-QA's questions, Chinese ones included, as questions without evidence."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.errors import StillwebError
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.importers import ImportOptions, import_tasks
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks

QUIET = ImportOptions(progress=False, retrieval=False)
CMRC = "cmrc2018_trial.json"


def _paragraphs(shared_data):
    return json.loads((shared_data / CMRC).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def snapshot(shared_data, tmp_path_factory):
    """A row snapshot of the CMRC paragraphs (their context ids as source ids) and one page per title."""
    folder = tmp_path_factory.mktemp("cmrc")
    rows = [{"id": p["context_id"], "title": f"{p['title']} ({p['context_id']})", "text": p["context_text"]}
            for p in _paragraphs(shared_data)]
    (folder / "paragraphs.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                             encoding="utf-8")
    return build_rows([folder / "paragraphs.jsonl"], folder / "snap", progress=False).path


def _tasks(snapshot, name):
    return {task.task_id: task for split in SPLITS for task in read_tasks(snapshot, name, split)}


def test_cmrc_trial_imports_every_question_with_its_paragraph_as_evidence(snapshot, shared_data):
    summary = import_tasks(snapshot, [shared_data / CMRC], "cmrc", QUIET)
    # two of the 1,002 questions have no text (TRIAL_20_QUERY_0, TRIAL_776_QUERY_4): skipped and counted
    assert (summary.rows, summary.tasks, summary.skipped) == (1000, 1000, {"no_query_text": 2})
    assert summary.formats == {str(shared_data / CMRC): "cmrc2018"} and "questions skipped: no_query_text 2" in summary.line()
    assert "questions skipped (not counted above): no_query_text: 2" in (snapshot / "tasks" / "cmrc" / "card.md").read_text()
    tasks = _tasks(snapshot, "cmrc")
    opened = Snapshot.open(snapshot)
    by_question = {q["query_id"]: (p, q) for p in _paragraphs(shared_data) for q in p["qas"] if q["query_text"].strip()}
    assert set(tasks) == set(by_question)
    for task_id, (paragraph, question) in by_question.items():
        task = tasks[task_id]
        assert task.question == question["query_text"].strip() and task.source == "cmrc2018"
        assert task.answer == question["answers"][0].strip()
        assert [opened.source_id_of(doc) for doc in task.evidence_docs] == [paragraph["context_id"]]
    first = tasks["TRIAL_800_QUERY_0"]
    assert (first.question, first.answer, first.extra["title"]) == ("生命数耗完即算为什么？", "踢爆", "泡泡战士")
    assert opened.text_of(first.evidence_docs[0]).startswith("基于《跑跑卡丁车》与《泡泡堂》")
    # the answer is in its paragraph, with no spaces around it (Han text): found for nearly every question
    missed = sorted(task_id for task_id, t in tasks.items() if not t.solvability.answer_in_evidence)
    # the two left: a gold cut from its word (axr... of "jaxr..."), and 首集收视率为7.07 before "%，15岁"
    # (normalization drops the punctuation, so its digits run on into the next number's)
    assert missed == ["TRIAL_749_QUERY_0", "TRIAL_99_QUERY_1"], missed
    assert summary.solvability["evidence_mapped"] == summary.solvability["evidence_items"] == 1000
    with pytest.raises(StillwebError, match=r"item 189 question 4: question 'TRIAL_776_QUERY_4': field 'query_text'"):
        import_tasks(snapshot, [shared_data / CMRC], "strict", ImportOptions(progress=False, retrieval=False, strict=True))


def test_squad_layout_by_title_and_text_and_unanswerable(snapshot, shared_data, tmp_path):
    """The same paragraphs in SQuAD v2.0's layout (CMRC 2018's train/dev files use it), pretty-printed,
    without paragraph ids: mapped by the page title and the paragraph's text."""
    articles = [{"title": f"{p['title']} ({p['context_id']})", "paragraphs": [{
        "context": p["context_text"],
        "qas": [{"id": q["query_id"], "question": q["query_text"],
                 "answers": [{"text": a, "answer_start": p["context_text"].find(a)} for a in q["answers"]]}
                for q in p["qas"]]}]} for p in _paragraphs(shared_data)[:20]]
    articles[0]["paragraphs"][0]["qas"].append({"id": "impossible-1", "question": "泡泡战士的作者是谁？",
                                                "answers": [], "is_impossible": True})
    path = tmp_path / "cmrc2018_dev.json"
    path.write_text(json.dumps({"version": "v2.0", "data": articles}, ensure_ascii=False, indent=1), encoding="utf-8")
    summary = import_tasks(snapshot, [path], "squad", QUIET)
    tasks = _tasks(snapshot, "squad")
    assert summary.formats == {str(path): "squad"} and len(tasks) == summary.tasks == summary.rows
    assert {t.split for t in tasks.values()} == {"dev"}  # the file's name says it
    assert summary.solvability["evidence_mapped"] == summary.solvability["evidence_items"]
    impossible = tasks["impossible-1"]
    assert not impossible.answerable and impossible.answer == "" and impossible.evidence_docs


def test_squad_questions_without_answers_are_counted_and_row_errors_name_the_item(snapshot, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"version": "1.1", "data": [
        {"title": "A", "paragraphs": [{"context": "文本", "qas": [{"id": "q1", "question": "问？",
                                                                  "answers": [{"text": "文"}]}]}]},
        {"title": "B", "paragraphs": [{"context": "文本", "qas": [{"id": "q2", "question": "问？", "answers": []}]}]},
    ]}, ensure_ascii=False), encoding="utf-8")
    summary = import_tasks(snapshot, [path], "bad", QUIET)
    assert (summary.tasks, summary.skipped) == (1, {"no_answers": 1})
    path.write_text(json.dumps({"data": [{"title": "A", "paragraphs": [{"qas": []}]}]}), encoding="utf-8")
    with pytest.raises(StillwebError, match=r"bad\.json data item 0: field 'context': no paragraphs\[0\]\.context"):
        import_tasks(snapshot, [path], "bad2", QUIET)


def test_sailorfog_chinese_questions_import_as_questions(snapshot, shared_data):
    path = shared_data / "sailorfog-QA.jsonl"
    summary = import_tasks(snapshot, [path], "sailorfog", QUIET)
    tasks = list(_tasks(snapshot, "sailorfog").values())
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    # 20 lines (the data README says 19), 10 of them Chinese
    assert summary.tasks == summary.rows == len(rows) == 20 and summary.formats == {str(path): "plain"}
    chinese = [t for t in tasks if any("\u4e00" <= c <= "\u9fff" for c in t.question)]
    assert len(chinese) == 10  # SailorFog-QA's released Chinese questions
    assert sorted((t.question, t.answer) for t in chinese) == sorted(
        (r["question"].strip(), r["answer"].strip()) for r in rows if any("\u4e00" <= c <= "\u9fff" for c in r["question"]))
    assert all(not t.evidence_docs and t.answerable for t in tasks)


def test_cmrc_import_is_byte_identical_in_two_processes(snapshot, shared_data, tmp_path):
    script = ("import sys; from stillweb.corpora.tasks.importers import ImportOptions, import_tasks; "
              "import_tasks(sys.argv[1], [sys.argv[2]], sys.argv[3], ImportOptions(progress=False, retrieval=False))")
    digests = []
    for name in ("twice_a", "twice_b"):
        subprocess.run([sys.executable, "-c", script, str(snapshot), str(shared_data / CMRC), name], check=True)
        folder = snapshot / "tasks" / name
        digests.append([(path.name, path.read_bytes()) for path in sorted(folder.iterdir()) if path.suffix == ".parquet"])
    assert digests[0] == digests[1] and digests[0]
