"""``stillweb eval retrieval``: BEIR and TREC inputs, the TREC run file, ir_measures'
scores (identical when recomputed from the written file) and the bm25s baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stillweb.cli.main import main as cli_main
from stillweb.corpora.build_from_source import build_rows

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
