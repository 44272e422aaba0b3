"""Importing each public format from small files written from its published schema, and the set in
use: Search-R1's prompt and verl export (round trip), abstention on MuSiQue's unanswerable
questions, citations of mapped evidence in WikiQA-v0."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from stillweb.corpora.errors import StillwebError
from stillweb.corpora.tasks.store.export import SEARCH_R1_PREFIX, export_tasks, search_r1_prompt
from stillweb.corpora.tasks.importers import ImportOptions, import_tasks
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import read_tasks
from support.qa_files import (HOTPOT, browsecomp_corpus_rows, browsecomp_qrels, browsecomp_rows, context_snapshot,
                              kilt_rows, musique_rows, search_r1_table, write_jsonl, write_parquet)

QUIET = ImportOptions(progress=False)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    """The fixture pages alone: the fixture-only formats' tests need no ``../shared/data``."""
    return context_snapshot(None, tmp_path_factory.mktemp("formats") / "snap")


@pytest.fixture(scope="module")
def samples_snapshot(shared_data, tmp_path_factory):
    """The contexts of the shared HotpotQA and 2WikiMultihopQA samples with the fixture pages."""
    return context_snapshot(shared_data, tmp_path_factory.mktemp("formats-samples") / "snap")


def _tasks(snapshot, name):
    return {task.task_id: task for split in SPLITS for task in read_tasks(snapshot, name, split)}


def _doc_title(snapshot, doc):
    from stillweb.corpora.snapshot.reading import Snapshot

    return Snapshot.open(snapshot).title_of(doc)


def test_search_r1_parquet_recovers_question_answers_and_split(snapshot, tmp_path):
    path = write_parquet(tmp_path / "train.parquet", search_r1_table("train"))
    import_tasks(snapshot, [path], "sr1", QUIET)
    tasks = _tasks(snapshot, "sr1")
    task = tasks["nq-train-0"]
    assert (task.question, task.golds, task.split) == ("When was Lunor Bay founded?", ("1712", "in 1712"), "train")
    assert task.source == "search_r1" and task.answer_match == "em" and task.extra["data_source"] == "nq"


def test_musique_supporting_paragraphs_sub_questions_and_unanswerable(snapshot, tmp_path):
    import_tasks(snapshot, [write_jsonl(tmp_path / "musique_full_v1.0_dev.jsonl", musique_rows())], "msq", QUIET)
    tasks = _tasks(snapshot, "msq")
    answerable, unanswerable = tasks["2hop__1_2"], tasks["2hop__1_3"]
    assert [_doc_title(snapshot, d) for d in answerable.evidence_docs] == ["Marra Tellin", "Ivo Brandt"]
    assert answerable.golds == ("sculptor", "sculpture artist") and answerable.split == "dev" and answerable.hops == 2
    assert answerable.solvability.evidence_present and len(answerable.solvability.sub_question_hits) == 2
    assert answerable.solvability.answer_in_evidence
    assert not unanswerable.answerable and unanswerable.answer == "" and unanswerable.emptiness_proof.kind == "source_label"
    assert "unanswerable (the source marks them" in (snapshot / "tasks" / "msq" / "card.md").read_text()

    from stillweb.envs.wikiqa.env import WikiQAEnv

    env = WikiQAEnv(snapshot, tasks="msq", split="dev", tool_format="search_r1")
    env.reset(options={"task_id": "2hop__1_3"})
    assert env.step("<abstain>No document gives the teacher's birth year.</abstain>")[1] == 1.0
    env.reset(options={"task_id": "2hop__1_3"})
    assert env.step("<answer>1921</answer>")[1] == 0.0


def test_musique_sub_questions_search_the_earlier_steps_answers(snapshot, tmp_path):
    # MuSiQue's step "#1 >> occupation" searched as written finds no gold page; with #1 replaced
    # by step 1's answer ("Ivo Brandt") it finds his page. The steps as written stay in extra.
    import_tasks(snapshot, [write_jsonl(tmp_path / "musique_ans_v1.0_dev.jsonl", musique_rows())], "msq-sub", QUIET)
    task = _tasks(snapshot, "msq-sub")["2hop__1_2"]
    assert task.solvability.sub_question_hits == (True, True)
    assert task.extra["sub_questions_searched"] == ["Who taught Marra Tellin?", "Ivo Brandt >> occupation"]
    assert [step["question"] for step in task.extra["question_decomposition"]] == \
           ["Who taught Marra Tellin?", "#1 >> occupation"]


def test_kilt_provenance_by_wikipedia_id_unmapped_counted_and_strict(snapshot, tmp_path):
    path = write_jsonl(tmp_path / "nq-dev-kilt.jsonl", kilt_rows())
    summary = import_tasks(snapshot, [path], "kilt", QUIET)
    tasks = _tasks(snapshot, "kilt")
    assert tasks["-101"].golds == ("fishermen from Osk", "Osk fishermen")
    assert [_doc_title(snapshot, d) for d in tasks["-101"].evidence_docs] == ["Lunor Bay"]
    assert tasks["-102"].solvability.unmapped == ("missing_title",) and summary.unmapped == {"missing_title": 1}
    assert "| missing_title | 1 |" in (snapshot / "tasks" / "kilt" / "card.md").read_text()
    assert "unmapped: missing_title 1" in summary.line()
    with pytest.raises(StillwebError, match=r"nq-dev-kilt.jsonl line 2: evidence item .*'No Such Page'.* missing_title"):
        import_tasks(snapshot, [path], "kilt-strict", ImportOptions(progress=False, strict=True))
    kept = import_tasks(snapshot, [path], "kilt-ev", ImportOptions(progress=False, require_evidence=True))
    assert set(_tasks(snapshot, "kilt-ev")) == {"-101"} and kept.dropped_no_evidence == 1


def test_browsecomp_plus_docids_are_the_evidence_and_texts_stay_out(snapshot, tmp_path):
    import_tasks(snapshot, [write_jsonl(tmp_path / "browsecomp_plus_decrypted.jsonl", browsecomp_rows())], "bcp", QUIET)
    task = _tasks(snapshot, "bcp")["770"]
    assert task.source == "browsecomp_plus" and task.golds == ("sculptor",)
    assert [_doc_title(snapshot, d) for d in task.evidence_docs] == ["Marra Tellin", "Ivo Brandt"]
    assert [(item.subject, item.relation) for item in task.evidence] == [("bc-7", "evidence_doc"), ("bc-8", "evidence_doc")]
    assert task.extra == {"gold_docs": ["bc-8"], "negative_docs": ["1002"], "evidence_docs": ["bc-7", "bc-8"]}
    assert task.solvability.evidence_present and task.solvability.answer_in_evidence


def test_browsecomp_plus_over_a_snapshot_of_its_corpus_layout(tmp_path):
    # Tevatron/browsecomp-plus-corpus rows (docid, text, url) build a snapshot that keeps docid as
    # the source id, so the queries' docids map with nothing unmapped
    from stillweb.corpora.build.from_source import build_rows

    corpus = build_rows([write_jsonl(tmp_path / "corpus.jsonl", browsecomp_corpus_rows())], tmp_path / "bcp-corpus",
                        workers=1, progress=False).path
    summary = import_tasks(corpus, [write_jsonl(tmp_path / "browsecomp_plus_decrypted.jsonl", browsecomp_rows())], "bcp",
                           QUIET)
    assert summary.unmapped == {} and summary.solvability["evidence_mapped"] == 2
    task = _tasks(corpus, "bcp")["770"]
    from stillweb.corpora.snapshot.reading import Snapshot

    opened = Snapshot.open(corpus)
    assert [opened.source_id_of(doc) for doc in task.evidence_docs] == ["bc-7", "bc-8"]
    assert task.solvability.answer_in_evidence


def test_browsecomp_plus_qrels_give_the_doc_lists_evidence(snapshot, tmp_path):
    # the repository's evaluate_run.py needs only query_id, query and answer; the judgements are
    # also in topics-qrels/, read with --qrels
    import_tasks(snapshot, [write_jsonl(tmp_path / "full.jsonl", browsecomp_rows())], "bcp-full", QUIET)
    full = _tasks(snapshot, "bcp-full")
    light = [{key: row[key] for key in ("query_id", "query", "answer")} for row in browsecomp_rows()]
    evidence, golds = browsecomp_qrels(tmp_path)
    from stillweb.cli.main import main

    assert main(["tasks", "import", str(snapshot), str(write_jsonl(tmp_path / "light.jsonl", light)), "--name",
                 "bcp-qrels", "--qrels", str(evidence), "--qrels", str(golds), "--no-progress"]) == 0
    task = _tasks(snapshot, "bcp-qrels")["770"]
    assert task.evidence_docs == full["770"].evidence_docs
    assert [(item.subject, item.relation) for item in task.evidence] == [("bc-7", "evidence_doc"), ("bc-8", "evidence_doc")]
    card = (snapshot / "tasks" / "bcp-qrels" / "card.md").read_text()
    assert "`qrel_evidence.txt` (1 judgements of query ids not imported), `qrel_golds.txt` (0 " in card
    # the full file and its qrels together name each doc once
    import_tasks(snapshot, [write_jsonl(tmp_path / "both.jsonl", browsecomp_rows())], "bcp-both",
                 ImportOptions(progress=False, qrels=(evidence, golds)))
    assert _tasks(snapshot, "bcp-both")["770"].evidence_docs == full["770"].evidence_docs


def test_browsecomp_plus_bad_documents_and_qrels_lines_are_named(snapshot, tmp_path):
    row = dict(browsecomp_rows()[0], gold_docs=["bc-8"])
    with pytest.raises(StillwebError, match=r"bad.jsonl line 1: field 'gold_docs': gold_docs\[0\] is 'bc-8': each "
                                            r"document is \{'docid'"):
        import_tasks(snapshot, [write_jsonl(tmp_path / "bad.jsonl", [row])], "bcp-bad", QUIET)
    qrels = tmp_path / "qrel_evidence.txt"
    qrels.write_text("770 Q0 bc-7 1\n770 bc-8\n", encoding="utf-8")
    with pytest.raises(StillwebError, match=r"qrel_evidence.txt: line 2: '770 bc-8' is not a qrels line; expected "
                                            r"'qid docid rel' \(BEIR\) or 'qid 0 docid rel' \(TREC\)"):
        import_tasks(snapshot, [write_jsonl(tmp_path / "ok.jsonl", browsecomp_rows())], "bcp-bad",
                     ImportOptions(progress=False, qrels=(qrels,)))
    assert not (snapshot / "tasks" / "bcp-bad").exists()


@pytest.mark.shared_data
def test_verl_export_is_search_r1s_layout_and_imports_back_the_same_tasks(samples_snapshot, shared_data, tmp_path):
    import_tasks(samples_snapshot, [shared_data / HOTPOT], "hp", ImportOptions(progress=False, answer_match="f1"))
    original = _tasks(samples_snapshot, "hp")
    files = export_tasks(samples_snapshot, "hp", "verl", tmp_path / "verl")
    rows = pq.read_table(files[0]).to_pylist()
    assert set(rows[0]) == {"id", "question", "golden_answers", "data_source", "prompt", "ability", "reward_model", "extra_info"}
    first = original[rows[0]["extra_info"]["task_id"]]
    assert rows[0]["data_source"] == "hotpotqa" and rows[0]["ability"] == "fact-reasoning"
    assert rows[0]["prompt"] == [{"role": "user", "content": search_r1_prompt(first.question)}]
    assert rows[0]["reward_model"] == {"style": "rule", "ground_truth": {"target": list(first.golds)}}
    import_tasks(samples_snapshot, files, "hp-back", ImportOptions(progress=False, retrieval=False))
    back = _tasks(samples_snapshot, "hp-back")
    assert set(back) == set(original)
    for task_id, task in original.items():
        again = back[task_id]
        assert (again.question, again.golds, again.split, again.evidence_docs, again.answer_match) == \
               (task.question, task.golds, task.split, task.evidence_docs, "f1")
    # over another snapshot the exported doc ids mean nothing: each is counted, none is kept
    from stillweb.corpora.build.from_source import build_rows

    other = build_rows([write_jsonl(tmp_path / "other.jsonl", [{"id": "1", "title": "Elsewhere", "text": "Nothing here."}])],
                       tmp_path / "other", workers=1, progress=False).path
    moved = import_tasks(other, files, "moved", ImportOptions(progress=False, retrieval=False))
    assert moved.unmapped == {"other_snapshot": sum(len(task.evidence_docs) for task in original.values())}


@pytest.mark.shared_data
def test_wikiqa_plays_an_imported_set_prompt_and_citations(samples_snapshot, shared_data):
    from stillweb.envs.wikiqa.env import WikiQAEnv

    import_tasks(samples_snapshot, [shared_data / HOTPOT], "play", QUIET)
    task = next(iter(_tasks(samples_snapshot, "play").values()))
    env = WikiQAEnv(samples_snapshot, tasks="play", tool_format="search_r1")
    observation, _info = env.reset(options={"task_id": task.task_id})
    assert observation == search_r1_prompt(task.question) == SEARCH_R1_PREFIX + task.question + "\n"
    assert search_r1_prompt(" who wrote it ") == SEARCH_R1_PREFIX + "who wrote it?\n"  # nq_search.py's '?' 
    tongyi = WikiQAEnv(samples_snapshot, tasks="play", reward={"citation_recall": 1.0, "outcome": 0.0})
    observation, _info = tongyi.reset(options={"task_id": task.task_id})
    assert observation.startswith(tongyi.system_prompt)
    reward, info = tongyi.step(tongyi.format.write_answer(task.answer, list(task.evidence_docs)))[1::3]
    assert info["reward_parts"]["citation_recall"] == 1.0 == reward and info["reward_parts"]["outcome"] == 1.0



@pytest.mark.shared_data
def test_the_reference_agent_solves_imported_hotpotqa_tasks_from_their_mapped_evidence(samples_snapshot, shared_data):
    from stillweb.envs.agents.scripted import ReferenceAgent
    from stillweb.envs.agents.loop import run_episode
    from stillweb.envs.wikiqa.env import WikiQAEnv

    import_tasks(samples_snapshot, [shared_data / HOTPOT], "solved", QUIET)
    env = WikiQAEnv(samples_snapshot, tasks="solved")
    summaries = [run_episode(env, lambda task: ReferenceAgent(task), options={"task_id": task_id}) for task_id in _tasks(samples_snapshot, "solved")]
    assert sum(summary["reward"] for summary in summaries) >= 95  # 99 of 100 when written (em over the found text)


def test_jsonl_and_hf_exports_take_imported_sets_with_their_nested_source_fields(snapshot, tmp_path):
    import json

    from datasets import load_from_disk

    import_tasks(snapshot, [write_jsonl(tmp_path / "nq-dev-kilt.jsonl", kilt_rows())], "exported", QUIET)
    [saved] = export_tasks(snapshot, "exported", "hf", tmp_path / "hf")
    dataset = load_from_disk(str(saved))
    assert {split: len(rows) for split, rows in dataset.items()} == {"train": 0, "dev": 2, "test": 0}
    row = dataset["dev"][0]
    assert json.loads(row["output"]) == kilt_rows()[0]["output"] and row["answer_match"] == "em"
    lines = export_tasks(snapshot, "exported", "jsonl", tmp_path / "jsonl")[1].read_text().splitlines()
    assert json.loads(lines[0])["meta"] == {} and json.loads(lines[0])["solvability"]["evidence_items"] == 1


def test_an_import_pauses_the_garbage_collector_and_gives_it_back(snapshot, tmp_path, monkeypatch):
    import gc

    from stillweb.corpora.tasks.importers import pipeline

    path = write_jsonl(tmp_path / "nq-dev-kilt.jsonl", kilt_rows())
    seen, read_all = [], pipeline._read_all
    monkeypatch.setattr(pipeline, "_read_all", lambda *args: seen.append(gc.isenabled()) or read_all(*args))
    import_tasks(snapshot, [path], "kilt-gc", QUIET)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(StillwebError, match="maps to no document"):
        import_tasks(snapshot, [path], "kilt-gc-strict", ImportOptions(progress=False, strict=True))
    assert gc.isenabled()
    gc.disable()  # a caller's own choice stays
    try:
        import_tasks(snapshot, [path], "kilt-gc-off", QUIET)
        assert not gc.isenabled()
    finally:
        gc.enable()
