"""``stillweb eval retrieval``: BEIR and TREC inputs, the TREC run file, ir_measures'
scores (identical when recomputed from the written file) and the bm25s baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stillweb.cli.main import main as cli_main
from stillweb.corpora.build.from_source import build_rows

pytestmark = pytest.mark.extra
ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("bm25s")
pytest.importorskip("Stemmer")

DOCS = [
    ("d1", "Lunor", "Lunor is a river city founded in 1204 on the Vell."),
    ("d2", "Ostra", "Ostra is the capital of Velland and its largest port."),
    ("d3", "Vell", "The Vell is a river that flows through Lunor to the sea."),
    ("d4", "Kest", "Kest is a mountain village known for cheese."),
]
QUERIES = {"q1": "which city was founded on the Vell river", "q2": "capital of Velland", "q3": "mountain cheese village"}


@pytest.fixture(scope="module")
def beir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("beir")
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in DOCS))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td3\t1\nq2\td2\t1\nq3\td4\t1\n")
    build_rows([folder], folder / "snap", progress=False)
    return folder


def test_scores_match_ir_measures_on_the_written_run_file(beir, tmp_path, capsys):
    run_file = tmp_path / "run.trec"
    args = ["eval", "retrieval", str(beir / "snap"), "--beir", str(beir), "--run", str(run_file), "--json"]
    assert cli_main(args + ["--baseline", "bm25s"]) == 0
    printed = json.loads(capsys.readouterr().out)["scores"]
    trec_qrels = tmp_path / "qrels.trec"
    trec_qrels.write_text("q1 0 d1 1\nq1 0 d3 1\nq2 0 d2 1\nq3 0 d4 1\n")
    measures = [ir_measures.parse_measure(m) for m in printed["stillweb"]]
    from_file = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(str(trec_qrels)),
                                           ir_measures.read_trec_run(str(run_file)))
    assert {str(m): pytest.approx(v) for m, v in from_file.items()} == printed["stillweb"]
    assert printed["stillweb"]["R@10"] == 1.0 and set(printed) == {"stillweb", "bm25s"}
    first = run_file.read_text().splitlines()[0].split()
    assert first[:2] == ["q1", "Q0"] and first[2] in {"d1", "d3"} and first[3] == "1" and first[5] == "stillweb"


def test_trec_inputs_and_table_output(beir, tmp_path, capsys):
    (tmp_path / "q.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    (tmp_path / "qrels.trec").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    assert cli_main(["eval", "retrieval", str(beir / "snap"), "--queries", str(tmp_path / "q.tsv"),
                     "--qrels", str(tmp_path / "qrels.trec")]) == 0
    out = capsys.readouterr().out
    assert "3 queries, 2 with qrels, 4 documents" in out and "nDCG@10" in out


def test_beir_folder_without_qrels_is_a_clear_error(beir, tmp_path, capsys):
    folder = tmp_path / "noqrels"
    folder.mkdir()
    (folder / "queries.jsonl").write_text((beir / "queries.jsonl").read_text())
    assert cli_main(["eval", "retrieval", str(beir / "snap"), "--beir", str(folder)]) == 2
    assert "BEIR folder has no qrels/test.tsv" in capsys.readouterr().err
    assert cli_main(["eval", "retrieval", str(beir / "snap")]) == 2
    assert "give --queries and --qrels" in capsys.readouterr().err


def test_an_unknown_baseline_names_the_choices(beir, capsys):
    from stillweb.corpora.errors import UsageError
    from stillweb.corpora.search.baselines import baseline_index

    with pytest.raises(UsageError, match="unknown baseline 'lucene': choose one of bm25s, pyserini"):
        baseline_index("lucene", ["a"])
    with pytest.raises(SystemExit):
        cli_main(["eval", "retrieval", str(beir / "snap"), "--beir", str(beir), "--baseline", "lucene"])
    assert "invalid choice: 'lucene' (choose from 'bm25s', 'pyserini')" in capsys.readouterr().err


@pytest.mark.slow  # starts a JVM (about 20 s)
def test_pyserini_baseline_on_the_same_rows(beir, tmp_path, capsys):
    pytest.importorskip("pyserini")
    pytest.importorskip("faiss")
    args = ["eval", "retrieval", str(beir / "snap"), "--beir", str(beir), "--json", "--k", "3"]
    assert cli_main(args + ["--baseline", "pyserini", "--baseline", "bm25s"]) == 0
    scores = json.loads(capsys.readouterr().out)["scores"]
    assert set(scores) == {"stillweb", "pyserini", "bm25s"}
    assert scores["pyserini"]["R@10"] == 1.0 and scores["pyserini"]["RR@10"] == 1.0, scores
    from stillweb.corpora.search import evaluation as ev
    from stillweb.corpora.snapshot.reading import Snapshot

    run = ev.run_baseline("pyserini", Snapshot.open(beir / "snap"), {**QUERIES, "blank": "  "}, k=2)
    assert run["blank"] == {} and max(run["q2"], key=run["q2"].get) == "d2" and len(run["q1"]) == 2
    assert all(score > 0 for scores in run.values() for score in scores.values())


def test_dense_and_hybrid_retrievers_are_scored_beside_bm25(beir, tmp_path, capsys, monkeypatch):
    import shutil

    import numpy as np

    from stillweb.corpora.search.dense_build import add_dense_index
    from support.dense import stub_vectors
    from support.embeddings_stub import MODEL, serve_embeddings
    from support.network import free_port

    snap = shutil.copytree(beir / "snap", tmp_path / "snap")
    ids, vectors = stub_vectors(snap)
    np.savez(tmp_path / "v.npz", ids=np.array(ids), vectors=vectors)
    add_dense_index(snap, model=MODEL, vectors_file=tmp_path / "v.npz", progress=False)
    with serve_embeddings(free_port()) as (url, _app):
        monkeypatch.setenv("STILLWEB_EMBEDDINGS_ENDPOINT", url)
        monkeypatch.setenv("STILLWEB_QUERY_EMBEDDINGS", str(tmp_path / "q.log"))
        assert cli_main(["eval", "retrieval", str(snap), "--beir", str(beir), "--json", "--retriever", "bm25",
                         "--retriever", "dense", "--retriever", "hybrid", "--k", "3"]) == 0
    scores = json.loads(capsys.readouterr().out)["scores"]
    assert set(scores) == {"stillweb", "stillweb-dense", "stillweb-hybrid"}
    assert all(0 < scores[name]["nDCG@10"] <= 1 for name in scores)
    monkeypatch.delenv("STILLWEB_EMBEDDINGS_ENDPOINT")  # replayed from the recorded query embeddings
    assert cli_main(["eval", "retrieval", str(snap), "--beir", str(beir), "--json", "--retriever", "hybrid",
                     "--k", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["scores"]["stillweb-hybrid"] == scores["stillweb-hybrid"]
