"""A build killed mid-write (SIGKILL: no cleanup runs): the snapshot already at --out is intact, and the next
build of the same --out removes the leftover (a leftover of a build still running is left alone)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from stillweb.corpora.snapshot.manifest import verify_snapshot
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.build.snapshot_writer import remove_stale_builds

BUILD = [sys.executable, "-m", "stillweb.cli.main", "build", "synthetic", "--seed", "0", "--workers", "1"]


def leftovers(folder):
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


@pytest.mark.slow
def test_a_build_killed_mid_write_keeps_the_snapshot_and_the_next_build_cleans_up(small_snapshot, tmp_path):
    out = tmp_path / "snap"
    shutil.copytree(small_snapshot, out)
    manifest = (out / "manifest.json").read_bytes()
    process = subprocess.Popen([*BUILD, "--articles", "3000", "--out", str(out)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    building = tmp_path / f".snap.building-{process.pid}"
    for _ in range(1200):  # until the build writes its documents (the synthetic dump is written before)
        if (building / "docs.parquet").exists() or process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    process.wait()
    assert building.is_dir(), "the build ended before it was killed: the test saw no mid-write state"
    assert (out / "manifest.json").read_bytes() == manifest and verify_snapshot(out) == []
    assert len(Snapshot.open(out)) > 0
    assert leftovers(tmp_path) != []
    subprocess.run([*BUILD, "--articles", "60", "--out", str(out)], check=True, capture_output=True)
    assert leftovers(tmp_path) == [] and verify_snapshot(out) == []


def test_leftovers_of_a_running_build_stay(tmp_path):
    out = tmp_path / "snap"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    dead = tmp_path / f".snap.building-{gone}"
    alive = tmp_path / f".snap.building-{os.getppid()}"  # a live process (this test's parent)
    other = tmp_path / f".other.building-{gone}"  # another --out's
    for folder in (dead, alive, other, tmp_path / f".snap.source-{gone}", tmp_path / f".snap.old-{gone}"):
        folder.mkdir()
    removed = remove_stale_builds(out)
    assert sorted(path.name for path in removed) == sorted([dead.name, f".snap.old-{gone}", f".snap.source-{gone}"])
    assert leftovers(tmp_path) == sorted([alive.name, other.name])
