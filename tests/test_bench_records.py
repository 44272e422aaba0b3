"""Benchmark records (BENCHMARKS.md, filed by scripts/bench_common.py): a snapshot is named by how to rebuild it,
never by a path of the machine a run was on, and a run states the load average, not who shares the machine."""

from __future__ import annotations

import importlib.util
import json
import re
import sys

from support.paths import REPO

_spec = importlib.util.spec_from_file_location("bench_common", REPO / "scripts" / "bench_common.py")
bench_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_common)

MACHINE_PATH = re.compile(r"(?<![\w.~$-])/(?:tmp|work|home|root|Users|mnt|scratch|data)/\S*")
WHO_SHARES = re.compile(r"engineers|shared by \W?\d|shared machine|cores shared", re.I)


def test_benchmarks_md_names_no_path_of_the_machine_a_run_was_on():
    lines = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8").splitlines()
    found = [f"{number}: {MACHINE_PATH.search(line).group()}" for number, line in enumerate(lines, 1)
             if MACHINE_PATH.search(line)]
    assert found == [], "name a snapshot by its rebuild command (bench_common.rebuild_command), a scratch folder $SCRATCH"


def test_bench_scripts_name_no_folder_of_this_machine_nor_who_shares_it():
    scripts = sorted((REPO / "scripts").glob("bench_*.py"))
    assert len(scripts) > 10
    found = {script.name: sorted(set(re.findall(r"/(?:work|home|root|Users)/\S*", text) + WHO_SHARES.findall(text)))
             for script in scripts if (text := script.read_text(encoding="utf-8"))}
    assert {name: words for name, words in found.items() if words} == {}


def test_the_patterns_see_what_they_must():
    assert MACHINE_PATH.search("--snapshot /work/coord/snapshots/syn-30k") and MACHINE_PATH.search("`/tmp/i40/syn5k`")
    assert not MACHINE_PATH.search("`../shared/data/x.bz2`, /view/episodes, $SCRATCH/stillweb-bench, 1/5/15 min")
    assert WHO_SHARES.search("(2 cores shared by 8 engineers)") and not WHO_SHARES.search("load average 1.0, 2 cores")


def _fake_snapshot(folder, name: str, source: dict, parameters: dict, **extra):
    (folder / name).mkdir(parents=True)
    manifest = {"name": name, "source": source, "parameters": parameters, "index": {}, **extra}
    (folder / name / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder / name


def test_a_filed_run_names_its_snapshots_by_their_rebuild_commands_and_states_the_load(tmp_path, monkeypatch):
    synthetic = _fake_snapshot(tmp_path / "coord", "syn-30k", {"kind": "synthetic", "articles": 30000, "seed": 0},
                               {"articles": 30000, "seed": 0})
    real = _fake_snapshot(tmp_path, "enwiki", {"kind": "wikipedia-xml", "file": "enwiki.xml.bz2"}, {"skip_bad": False},
                          dense={"model": "BAAI/bge-small-en-v1.5"})
    benchmarks = tmp_path / "BENCHMARKS.md"
    monkeypatch.setattr(bench_common, "BENCHMARKS", benchmarks)
    monkeypatch.setattr(sys, "argv", [str(REPO / "scripts" / "bench_x.py"), "--snapshot", str(synthetic),
                                      f"--real={real}", "--dir", str(tmp_path / "work"), "--count", "5"])
    bench_common.append_section("Area: a run", "figures")
    text = benchmarks.read_text(encoding="utf-8")
    assert str(tmp_path) not in text
    assert ("- command: `python scripts/bench_x.py --snapshot snapshots/syn-30k --real=snapshots/enwiki "
            "--dir $SCRATCH/work --count 5`") in text
    assert ("- snapshot `snapshots/syn-30k`: `stillweb build synthetic --articles 30000 --seed 0 "
            "--out snapshots/syn-30k`") in text
    assert ("- snapshot `snapshots/enwiki`: `stillweb build wikipedia enwiki.xml.bz2 --out snapshots/enwiki; "
            "stillweb build dense snapshots/enwiki --model BAAI/bge-small-en-v1.5`") in text
    assert re.search(r"^- load average [\d.]+ / [\d.]+ / [\d.]+ \(1/5/15 min\) when filed$", text, flags=re.M)
    assert bench_common.snapshot_phrase(synthetic) == (
        "`snapshots/syn-30k` (`stillweb build synthetic --articles 30000 --seed 0 --out snapshots/syn-30k`)")


def test_a_path_near_the_repository_stays_relative(tmp_path):
    command, notes = bench_common.recorded_command([str(REPO.parent / "shared" / "data" / "x.bz2"), "plain"], cwd=REPO)
    assert (command, notes) == ("../shared/data/x.bz2 plain", [])
