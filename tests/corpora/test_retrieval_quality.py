"""Retrieval quality on real multi-hop data: HotpotQA and 2WikiMultihopQA paragraphs cut
into passages (scripts/multihop_passages.py), qrels from the supporting facts. stillweb's
recall@10 of the question text must be at least bm25s's on the same rows, in the same run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stillweb.corpora import retrieval_eval as ev
from stillweb.corpora.build_from_source import build_rows
from stillweb.corpora.snapshot import Snapshot

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
