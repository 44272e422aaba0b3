"""Synthetic builds end to end: determinism across processes and worker counts, fact recovery."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.cli.main import main as cli_main


def build_in_subprocess(out: Path, workers: int) -> None:
    subprocess.run(
        ["stillweb", "build", "synthetic", "--articles", "300", "--seed", "0", "--out", str(out),
         "--workers", str(workers), "--quiet"],
        check=True, capture_output=True, text=True,
    )


@pytest.mark.slow
def test_same_world_in_two_processes_with_different_worker_counts(tmp_path, small_snapshot):
    build_in_subprocess(tmp_path / "w1", workers=1)
    build_in_subprocess(tmp_path / "w2", workers=2)
    one, two = Snapshot.open(tmp_path / "w1"), Snapshot.open(tmp_path / "w2")
    assert one.fingerprint == two.fingerprint == Snapshot.open(small_snapshot).fingerprint
    for name in ("docs.parquet", "facts.parquet", "links.parquet", "redirects.parquet", "truth.parquet", "docs.arrow"):
        assert (tmp_path / "w1" / name).read_bytes() == (tmp_path / "w2" / name).read_bytes(), name
    query = "university founded by"
    assert [(r.doc_id, r.score, r.snippet) for r in one.search(query, k=10)] == \
           [(r.doc_id, r.score, r.snippet) for r in two.search(query, k=10)]


def test_other_seed_gives_another_world(tmp_path, small_snapshot):
    assert cli_main(["build", "synthetic", "--articles", "300", "--seed", "1", "--out", str(tmp_path / "s1"),
                     "--workers", "1", "--quiet"]) == 0
    assert Snapshot.open(tmp_path / "s1").fingerprint != Snapshot.open(small_snapshot).fingerprint


def test_ingestion_recovers_the_true_facts(small_snapshot, capsys):
    recovery = Snapshot.open(small_snapshot).manifest["counts"]["fact_recovery"]
    print(json.dumps(recovery))
    assert recovery["true"] > 1000
    assert recovery["recall"] >= 0.99
    assert recovery["precision"] >= 0.99


def test_snapshot_has_graph_pages_and_kinds(small_snapshot):
    snap = Snapshot.open(small_snapshot)
    counts = snap.manifest["counts"]
    assert counts["kinds"].get("disambiguation", 0) > 0 and counts["kinds"].get("list", 0) > 0
    assert counts["redirects"] > 0 and counts["links"] > counts["docs"]
    relations = set(snap.facts_table.column("relation").to_pylist())
    assert len(relations) >= 25
    entity = snap.facts_table.filter(snap.facts_table.column("object").to_numpy() >= 0)
    assert entity.num_rows > 0.3 * snap.facts_table.num_rows
    # every fact is stated in its evidence document's text
    for fact in snap.facts()[:500]:
        assert fact.value in snap.get(fact.evidence).text


def test_quickstart_on_a_small_world(tmp_path, capsys):
    args = ["quickstart", "--articles", "300", "--out", str(tmp_path / "q"), "--workers", "1",
            "--tasks", "20", "--verify", "3", "--episodes", "2"]
    assert cli_main(args) == 0
    out = capsys.readouterr().out
    assert Snapshot.open(tmp_path / "q").fingerprint in out
    assert "search 'university founded'" in out
    assert "verified: 3 tasks" in out and "3 solved" in out
    table = out.split("reference agent on", 1)[1]
    rows = [line.split() for line in table.splitlines() if line.strip().startswith("sw-")]
    assert len(rows) >= 1 and all(row[4] == "1.0" for row in rows)  # the outcome column
    assert cli_main(args) == 0  # a second run reuses the snapshot and the task set
    assert "generating" not in capsys.readouterr().out
