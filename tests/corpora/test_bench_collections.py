"""scripts/bench_collections.py: public test collections (SMART format, NPL) as BEIR folders, dev sets first."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_collections.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_collections", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_collections"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_cranfield_queries_are_renumbered_and_grades_follow_cleverdon(tmp_path):
    """Cranfield's query file skips ids (001, 002, 004) while its qrels count queries 1, 2, 3; a code of 1
    (a complete answer) is the highest grade and -1 (no interest) is not relevant."""
    bench = _module()
    checkout = tmp_path / "sources" / "lailaglez+belief-network-irs" / "cran"  # a plain checkout, not a git dir
    checkout.mkdir(parents=True)
    (checkout / "cran.all.1400").write_text(".I 1\n.T\nwing flow .\n.A\nx\n.W\nwing flow .\n  a study of wings .\n"
                                            ".I 2\n.T\nshock waves\n.W\nshock waves in air\n")
    (checkout / "cran.qry").write_text(".I 001\n.W\nwings ?\n.I 002\n.W\nshocks ?\n.I 004\n.W\nnothing judged\n")
    (checkout / "cranqrel").write_text("1 1 1\n1 2 4\n2 2 -1\n3 1 2 \n")
    summary = bench.prepare(tmp_path / "out", tmp_path / "sources", ("cranfield",))
    assert summary[0][:3] == ("cranfield", 2, 2)
    folder = tmp_path / "out" / "cranfield"
    assert _lines(folder / "corpus.jsonl")[0] == {"_id": "1", "title": "wing flow .", "text": "wing flow . a study of wings ."}
    assert {q["_id"]: q["text"] for q in _lines(folder / "queries.jsonl")} == {"1": "wings ?", "3": "nothing judged"}
    assert (folder / "qrels" / "test.tsv").read_text().splitlines() == ["query-id\tcorpus-id\tscore", "1\t1\t4", "1\t2\t1", "3\t1\t3"]


def test_npl_records_and_eval_sets_order(tmp_path):
    bench = _module()
    checkout = tmp_path / "sources" / "stefreschke+Information-Retrieval" / "npl"
    checkout.mkdir(parents=True)
    (checkout / "doc-text").write_text("1\ncompact memories\nof bits\n   /\n2\nan analogue computer\n   /\n")
    (checkout / "query-text").write_text("1\nMEMORIES\n/\n2\nNOT JUDGED\n/\n")
    (checkout / "rlv-ass").write_text("1\n    1    2\n   /\n")
    bench.prepare(tmp_path / "out", tmp_path / "sources", ("npl",))
    folder = tmp_path / "out" / "npl"
    assert [row["text"] for row in _lines(folder / "corpus.jsonl")] == ["compact memories of bits", "an analogue computer"]
    assert _lines(folder / "queries.jsonl") == [{"_id": "1", "text": "memories"}]
    sets = bench.eval_sets(tmp_path / "out")
    assert [s.role for s in sets] == sorted((s.role for s in sets), key=lambda role: role != bench.DEV)
    assert {s.name for s in sets if s.role == bench.DEV} == {"cranfield", "cisi", "hotpotqa-2wiki, tune half"}
    assert ("hotpotqa-2wiki, confirm half", "test") in {(s.name, s.split) for s in sets if s.role == bench.HELD_OUT}
