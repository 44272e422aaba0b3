"""``stillweb tasks import``: public QA files as task sets, evidence mapped, solvability reported."""

from __future__ import annotations

import bz2
import gzip
import json
import subprocess
import sys

import pytest

from stillweb.corpora.errors import StillwebError
from stillweb.corpora.tasks.importers import FieldNames, ImportOptions, import_tasks
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks
from support.qa_files import (HOTPOT, TWOWIKI, browsecomp_qrels, browsecomp_rows, context_snapshot, flashrag_rows,
                              kilt_rows, musique_rows, write_jsonl)

QUIET = ImportOptions(progress=False)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    """The fixture pages alone: the fixture-only formats' tests need no ``../shared/data``."""
    return context_snapshot(None, tmp_path_factory.mktemp("import") / "snap")


@pytest.fixture(scope="module")
def samples_snapshot(shared_data, tmp_path_factory):
    """The contexts of the shared HotpotQA and 2WikiMultihopQA samples with the fixture pages."""
    return context_snapshot(shared_data, tmp_path_factory.mktemp("import-samples") / "snap")


def _all(snapshot, name):
    return [task for split in SPLITS for task in read_tasks(snapshot, name, split)]


@pytest.mark.shared_data
def test_hotpotqa_sample_maps_every_supporting_fact(samples_snapshot, shared_data):
    summary = import_tasks(samples_snapshot, [shared_data / HOTPOT], "hotpot", QUIET)
    tasks = _all(samples_snapshot, "hotpot")
    source = json.loads((shared_data / HOTPOT).read_text(encoding="utf-8"))
    assert summary.tasks == len(tasks) == len(source) == 100 and summary.unmapped == {}
    by_id = {task.task_id: task for task in tasks}
    for question in source:
        task = by_id[question["_id"]]  # the source id is kept
        assert task.question == question["question"].strip() and task.answer == question["answer"]
        assert task.split == "train" and task.source == "hotpotqa" and task.answer_match == "em"
        assert task.hops == len({title for title, _index in question["supporting_facts"]})
        assert len(task.evidence) == len(question["supporting_facts"])
        for item, (title, _index) in zip(task.evidence, question["supporting_facts"]):
            assert item.doc_id >= 0 and item.doc_title == title
        assert task.solvability.evidence_present and task.solvability.question_hit is not None
        assert task.extra["type"] == question["type"] and task.extra["level"] == question["level"]
    card = (samples_snapshot / "tasks" / "hotpot" / "card.md").read_text()
    assert "229 of 229 items mapped" in card and "(hotpotqa)" in card


@pytest.mark.shared_data
def test_2wiki_sample_keeps_the_evidence_triples(samples_snapshot, shared_data):
    import_tasks(samples_snapshot, [shared_data / TWOWIKI], "twowiki", QUIET)
    tasks = _all(samples_snapshot, "twowiki")
    source = json.loads((shared_data / TWOWIKI).read_text(encoding="utf-8"))
    assert {t.task_id for t in tasks} == {q["_id"] for q in source}
    for task in tasks:
        question = next(q for q in source if q["_id"] == task.task_id)
        assert task.split == "dev"  # from the file name
        assert all(item.doc_id >= 0 for item in task.evidence)
        assert [[i.subject, i.relation, i.value] for i in task.evidence] == question["evidences"]
        assert task.extra["evidences_id"] == question["evidences_id"]
        assert task.solvability.answer_in_evidence


@pytest.mark.shared_data
@pytest.mark.slow
def test_passage_snapshot_finds_the_passage_holding_each_sentence(shared_data, tmp_path):
    passages = context_snapshot(shared_data, tmp_path / "passages", passages=40)
    summary = import_tasks(passages, [shared_data / HOTPOT], "hotpot", QUIET)
    assert summary.unmapped == {}
    from stillweb.corpora.snapshot.reading import Snapshot
    from stillweb.corpora.tasks.importers.evidence import holds

    kilt = import_tasks(passages, [write_jsonl(tmp_path / "kilt.jsonl", kilt_rows())], "kilt", QUIET)
    assert kilt.unmapped == {"missing_title": 1}  # wikipedia_id 1001 -> the first passage '1001-0'; 99999 is absent
    snap = Snapshot.open(passages)
    assert sorted(snap.source_id_of(doc) for task in _all(passages, "kilt") for doc in task.evidence_docs) == ["1001-0", "1002-0"]
    source = {q["_id"]: q for q in json.loads((shared_data / HOTPOT).read_text(encoding="utf-8"))}
    checked = 0
    for task in _all(passages, "hotpot"):
        context = dict((title, sentences) for title, sentences in source[task.task_id]["context"])
        for item, (title, index) in zip(task.evidence, source[task.task_id]["supporting_facts"]):
            if index < len(context[title]):  # the passage holds the sentence, or its start (it runs on)
                page = snap.passages_of(item.doc_id)
                following = page[page.index(item.doc_id):][:2]
                assert holds(" ".join(snap.text_of(doc) for doc in following), " ".join(context[title][index].split()))
                checked += 1
    assert checked >= 200  # of the sample's 229 supporting facts (a few name a sentence index past the paragraph)


def test_flashrag_jsonl_compressed_and_split_by_file_name(snapshot, tmp_path):
    rows = flashrag_rows()
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    (tmp_path / "test.jsonl.gz").write_bytes(gzip.compress(text))
    (tmp_path / "more.jsonl.bz2").write_bytes(bz2.compress(text.replace(b'"test_', b'"more_')))
    summary = import_tasks(snapshot, [tmp_path / "test.jsonl.gz", tmp_path / "more.jsonl.bz2"], "flash", QUIET)
    tasks = {task.task_id: task for task in _all(snapshot, "flash")}
    assert summary.tasks == 4 and tasks["test_0"].split == "test"
    assert tasks["test_0"].golds == ("1712", "in 1712") and tasks["test_0"].extra == {"metadata": {"source": "fixture"}}
    assert tasks["test_0"].solvability.evidence_items == 0  # FlashRAG names no evidence
    # the unsplit file: its two answers are different, each group placed by hash; a shared answer shares a split
    shared = [{"id": f"s{i}", "question": f"q{i}?", "golden_answers": ["Same"]} for i in range(20)]
    import_tasks(snapshot, [write_jsonl(tmp_path / "shared.jsonl", shared)], "shared", QUIET)
    assert len({task.split for task in _all(snapshot, "shared")}) == 1


def test_zstd_and_plain_csv_with_field_options(snapshot, tmp_path):
    import pyarrow as pa

    path = tmp_path / "qa.csv"
    path.write_text('qid,q,a,note\n7,Who taught Marra Tellin?,"[""Ivo Brandt"", ""Brandt""]",x\n8,What is Osk?,a fishing village,y\n')
    compressed = tmp_path / "qa.csv.zst"
    with pa.CompressedOutputStream(str(compressed), "zstd") as stream:
        stream.write(path.read_bytes())
    options = ImportOptions(progress=False, fields=FieldNames("q", "a", "qid"))
    import_tasks(snapshot, [compressed], "plain", options)
    tasks = {task.task_id: task for task in _all(snapshot, "plain")}
    assert tasks["7"].golds == ("Ivo Brandt", "Brandt") and tasks["8"].answer == "a fishing village"
    assert tasks["7"].extra == {"note": "x"} and tasks["7"].source == "plain"


def test_bad_rows_name_file_line_and_field(snapshot, tmp_path):
    rows = [*flashrag_rows(), {"id": "x", "question": "q?", "golden_answers": []}]
    bad = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(StillwebError, match=r"bad.jsonl line 3: field 'golden_answers'"):
        import_tasks(snapshot, [bad], "bad", QUIET)
    no_question = write_jsonl(tmp_path / "noq.jsonl", [{"id": "1", "question": " ", "golden_answers": ["a"]}])
    with pytest.raises(StillwebError, match=r"noq.jsonl line 1: field 'question'"):
        import_tasks(snapshot, [no_question], "bad", QUIET)
    assert not (snapshot / "tasks" / "bad").exists()


def test_unknown_and_wrong_formats_say_what_is_known(snapshot, tmp_path):
    flash = write_jsonl(tmp_path / "f.jsonl", flashrag_rows())
    with pytest.raises(StillwebError, match="known formats: search_r1, kilt, musique"):
        import_tasks(snapshot, [flash], "x", ImportOptions(format="natural_questions", progress=False))
    with pytest.raises(StillwebError, match="not kilt .* it looks like flashrag"):
        import_tasks(snapshot, [flash], "x", ImportOptions(format="kilt", progress=False))
    odd = write_jsonl(tmp_path / "odd.jsonl", [{"foo": 1}])
    with pytest.raises(StillwebError, match="cannot tell the format .* known formats"):
        import_tasks(snapshot, [odd], "x", QUIET)


def test_a_task_id_repeated_across_files_names_both(snapshot, tmp_path):
    first = write_jsonl(tmp_path / "a.jsonl", flashrag_rows())
    second = write_jsonl(tmp_path / "b.jsonl", flashrag_rows()[1:])
    with pytest.raises(StillwebError, match=r"'test_1' repeated: .*a.jsonl line 2 and .*b.jsonl line 1"):
        import_tasks(snapshot, [first, second], "x", QUIET)


def test_cli_imports_and_stats_show_solvability(samples_snapshot, shared_data, tmp_path):
    run = [sys.executable, "-m", "stillweb.cli.main", "tasks"]
    result = subprocess.run([*run, "import", str(samples_snapshot), str(shared_data / TWOWIKI), "--name", "cli2",
                             "--answer-match", "f1", "--no-progress"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "imported 2 of 2 questions (2wikimultihopqa)" in result.stdout and "unmapped: none" in result.stdout
    assert {task.answer_match for task in _all(samples_snapshot, "cli2")} == {"f1"}
    stats = subprocess.run([*run, "stats", str(samples_snapshot), "cli2"], capture_output=True, text=True, timeout=300)
    assert "gold evidence present: 2 (100.0%)" in stats.stdout and "long_value" not in stats.stdout, stats.stderr
    bad = subprocess.run([*run, "import", str(samples_snapshot), str(shared_data / TWOWIKI), "--name", "x", "--format", "kilt"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "it looks like 2wikimultihopqa" in bad.stderr
    helped = subprocess.run([*run, "import", "--help"], capture_output=True, text=True, timeout=300)
    assert "examples:" in helped.stdout and "--answer-match" in helped.stdout


@pytest.mark.shared_data
def test_two_processes_write_identical_task_set_bytes(samples_snapshot, shared_data, tmp_path):
    import shutil

    # with MuSiQue (sub-questions searched with earlier answers) and BrowseComp-Plus queries whose
    # evidence comes from qrels files
    musique = write_jsonl(tmp_path / "musique_ans_v1.0_dev.jsonl", musique_rows())
    light = write_jsonl(tmp_path / "bcp.jsonl", [{k: row[k] for k in ("query_id", "query", "answer")}
                                                 for row in browsecomp_rows()])
    qrels = [arg for path in browsecomp_qrels(tmp_path) for arg in ("--qrels", str(path))]
    outputs = []
    for run, hash_seed in enumerate(("1", "2")):
        copy = tmp_path / f"copy{run}"
        shutil.copytree(samples_snapshot, copy)
        shutil.rmtree(copy / "tasks", ignore_errors=True)
        env = {"PYTHONHASHSEED": hash_seed, "TZ": "UTC" if run else "Asia/Tokyo", "PATH": "/usr/bin:/bin"}
        result = subprocess.run([sys.executable, "-m", "stillweb.cli.main", "tasks", "import", str(copy),
                                 str(shared_data / HOTPOT), str(shared_data / TWOWIKI), str(musique), str(light), *qrels,
                                 "--name", "both", "--no-progress"],
                                capture_output=True, text=True, timeout=300, env=env)
        assert result.returncode == 0, result.stderr
        outputs.append({p.name: p.read_bytes() for p in sorted((copy / "tasks" / "both").iterdir())})
    assert outputs[0] == outputs[1] and set(outputs[0]) == {"card.md", "train.parquet", "dev.parquet", "test.parquet"}
    tasks = {task.task_id: task for task in _all(copy, "both")}
    assert tasks["2hop__1_2"].extra["sub_questions_searched"][1] == "Ivo Brandt >> occupation"
    assert len(tasks["770"].evidence_docs) == 2 and b"qrel_evidence.txt" in outputs[0]["card.md"]


def test_hash_split_keeps_each_answer_in_one_split(snapshot, tmp_path):
    rows = [{"id": f"r{i}", "question": f"question {i}?", "golden_answers": [f"Answer {i % 40}", f"alias {i % 7}"]}
            for i in range(300)]
    import_tasks(snapshot, [write_jsonl(tmp_path / "unsplit.jsonl", rows[:150])], "hashed", QUIET)
    splits_of = {}
    for task in _all(snapshot, "hashed"):
        for gold in task.golds:
            splits_of.setdefault(gold, set()).add(task.split)
    assert all(len(splits) == 1 for splits in splits_of.values())
    few = [{"id": f"f{i}", "question": f"q{i}?", "golden_answers": [f"Only {i}"]} for i in range(60)]
    import_tasks(snapshot, [write_jsonl(tmp_path / "few.jsonl", few)], "few", QUIET)
    assert {task.split for task in _all(snapshot, "few")} == set(SPLITS)  # distinct answers spread by hash


@pytest.mark.shared_data
def test_titles_resolve_through_redirects(wiki_snapshot, tmp_path):
    import shutil

    from stillweb.corpora.snapshot.reading import Snapshot

    wiki_snapshot = shutil.copytree(wiki_snapshot, tmp_path / "wiki")  # the session's snapshot stays without task sets
    snap = Snapshot.open(wiki_snapshot)
    alias, doc = sorted(snap.redirects.items())[0]
    row = {"id": "k1", "input": "what is it", "output": [{"answer": "it", "provenance": [{"title": alias}]}]}
    import_tasks(wiki_snapshot, [write_jsonl(tmp_path / "kilt.jsonl", [row])], "redirected", QUIET)
    [task] = _all(wiki_snapshot, "redirected")
    assert task.evidence_docs == (doc,) and task.solvability.evidence_present
