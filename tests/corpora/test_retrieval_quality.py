"""Retrieval quality on real multi-hop data: HotpotQA and 2WikiMultihopQA paragraphs cut
into passages (scripts/multihop_passages.py), qrels from the supporting facts. stillweb's
recall@10 of the question text must be at least bm25s's on the same rows, in the same run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stillweb.corpora.search import evaluation as ev
from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.snapshot.reading import Snapshot

pytestmark = [pytest.mark.extra, pytest.mark.shared_data]
pytest.importorskip("ir_measures")
pytest.importorskip("bm25s")
pytest.importorskip("Stemmer")

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "multihop_passages.py"
DATASETS = ("hotpotqa_train_100.json", "2wikimultihopqa_dev_2.json")


@pytest.mark.parametrize("sentences", [1, 2, 3])
def test_stillweb_recall_at_10_is_at_least_bm25s(shared_data, tmp_path, sentences):
    folder = tmp_path / "multihop"
    subprocess.run([sys.executable, str(SCRIPT), *(str(shared_data / d) for d in DATASETS), "--out", str(folder),
                    "--sentences", str(sentences)], check=True, capture_output=True)
    snapshot = Snapshot.open(build_rows([folder], tmp_path / "snap", progress=False).path)
    queries_path, qrels_path = ev.beir_paths(folder)
    queries, qrels = ev.load_queries(queries_path), ev.load_qrels(qrels_path)
    assert len(queries) == 102 and len(snapshot) > 1014  # passages share their page titles
    ours = ev.evaluate(qrels, ev.run_snapshot(snapshot, queries))
    baseline = ev.evaluate(qrels, ev.run_bm25s(snapshot, queries))
    assert ours["R@10"] >= baseline["R@10"], (ours, baseline)
    assert ours["R@10"] > 0.7


def _at_least_both_baselines(shared_data, tmp_path, sentences: int) -> Snapshot:
    """Build the HotpotQA / 2Wiki questions' context as rows of ``sentences`` sentences and check that this
    code's recall@10 and nDCG@10 are at least bm25s's and Pyserini's on the same rows, in the same run."""
    pytest.importorskip("pyserini")
    pytest.importorskip("faiss")
    folder = tmp_path / "multihop"
    subprocess.run([sys.executable, str(SCRIPT), *(str(shared_data / d) for d in DATASETS), "--out", str(folder),
                    "--sentences", str(sentences)], check=True, capture_output=True)
    snapshot = Snapshot.open(build_rows([folder], tmp_path / "snap", progress=False).path)
    assert snapshot.manifest["index"]["query"] == "term counts"
    queries_path, qrels_path = ev.beir_paths(folder)
    queries, qrels = ev.load_queries(queries_path), ev.load_qrels(qrels_path)
    ours = ev.evaluate(qrels, ev.run_snapshot(snapshot, queries))
    for name in ("bm25s", "pyserini"):
        theirs = ev.evaluate(qrels, ev.run_baseline(name, snapshot, queries))
        assert ours["R@10"] >= theirs["R@10"] and ours["nDCG@10"] >= theirs["nDCG@10"], (name, ours, theirs)
    return snapshot


@pytest.mark.slow  # starts a JVM for Pyserini (about 20 s)
def test_passages_rank_at_least_as_well_as_bm25s_and_pyserini(shared_data, tmp_path):
    """Issues 37 and 50: on 2-sentence passages, recall@10 and nDCG@10 of the question text are at least the
    better of bm25s's and Pyserini's (Lucene BM25 as Search-R1 runs it) on the same rows, in the same run
    (format 3: 0.842 / 0.767 against Pyserini's 0.826 / 0.750 when written). A regression guard over all 102
    questions, half of which chose the settings; the figures on data not tuned on are
    scripts/bench_retrieval.py's and scripts/bench_bm25.py's."""
    _at_least_both_baselines(shared_data, tmp_path, 2)


@pytest.mark.slow  # starts a JVM for Pyserini (about 20 s)
def test_paragraphs_rank_at_least_as_well_as_bm25s_and_pyserini(shared_data, tmp_path):
    """Issue 50 (a): HotpotQA / 2Wiki context paragraphs, one row each (1,014 rows, 102 questions): format 5's
    recall@10 and nDCG@10 are at least the better of bm25s's and Pyserini's on the same rows, in the same run
    (0.902 / 0.839 against bm25s 0.892 / 0.784 when written; format 4 ranked 0.882 / 0.819). Half the
    questions chose the settings (scripts/bench_bm25.py shows the halves apart)."""
    assert len(_at_least_both_baselines(shared_data, tmp_path, 1000)) == 1014


@pytest.mark.slow  # builds the dump sample's pages twice
def test_format_4_pages_find_known_items_better_than_bm25s_and_format_3(wiki_snapshot, tmp_path):
    """Issue 43: 5-word known-item queries drawn from the dump sample's own pages (a keyed place in each
    page's text): format 4 (a page as its best passage) has recall@10 and nDCG@10 at least bm25s's and above
    format 3's (one document per page, title^2) on the same pages, in the same run (nDCG@10 0.94 against
    bm25s 0.85 and format 3 0.79 when written)."""
    from stillweb.corpora.search.index import INDEX_PARAMETERS
    from stillweb.corpora.keyed import KeyedRng
    from stillweb.corpora.build.snapshot_writer import copy_with_index

    snapshot = Snapshot.open(wiki_snapshot)
    assert snapshot.manifest["index"]["passage_words"] == 100  # pages rank as format 4 made them (format 5 too)
    format_3 = Snapshot.open(copy_with_index(wiki_snapshot, tmp_path / "format3", INDEX_PARAMETERS, "stillweb-snapshot/3"))
    queries, qrels = {}, {}
    for doc in range(len(snapshot)):
        words = snapshot.text_of(doc).split()
        start = KeyedRng(0, "quality-known-item", doc).integer(0, max(0, len(words) - 5))
        queries[f"k{doc}"] = " ".join(words[start : start + 5])
        qrels[f"k{doc}"] = {snapshot.source_id_of(doc) or str(doc): 1}  # run_snapshot names documents so
    ours = ev.evaluate(qrels, ev.run_snapshot(snapshot, queries))
    before = ev.evaluate(qrels, ev.run_snapshot(format_3, queries))
    theirs = ev.evaluate(qrels, ev.run_bm25s(snapshot, queries))
    assert ours["R@10"] >= theirs["R@10"] and ours["nDCG@10"] >= theirs["nDCG@10"], (ours, theirs)
    assert ours["nDCG@10"] > before["nDCG@10"], (ours, before)
