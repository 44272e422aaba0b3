"""A truncated or corrupted snapshot file: ``stillweb verify`` names it (exit 1), and opening or using the
snapshot raises a SnapshotError naming the file and how to find the rest, never a pyarrow or tantivy traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from stillweb.corpora.snapshot.manifest import SnapshotError, read_manifest
from stillweb.corpora.snapshot.reading import Snapshot

# The files Snapshot.open (or its first search, fact and title lookups) reads.
READ_FILES = ["docs.arrow", "docs.parquet", "facts.parquet", "links.parquet", "redirects.parquet", "index/meta.json"]


def damage(path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # corrupted: the last 64 bytes (a parquet footer, the end of an Arrow file or of a JSON file) flipped
        path.write_bytes(data[:-64] + bytes(byte ^ 0xFF for byte in data[-64:]))


def use(snapshot_path) -> None:
    snapshot = Snapshot.open(snapshot_path)
    snapshot.search("river", 5)
    snapshot.facts(subject=0)
    snapshot.resolve("no such title")


@pytest.fixture()
def copy(small_snapshot, tmp_path):
    path = tmp_path / "snap"
    shutil.copytree(small_snapshot, path)
    return path


@pytest.mark.parametrize("how", ["truncated", "corrupted"])
@pytest.mark.parametrize("name", READ_FILES)
def test_opening_a_damaged_snapshot_names_the_file(copy, name, how):
    damage(copy / name, how)
    with pytest.raises(SnapshotError) as raised:
        use(copy)
    message = str(raised.value)
    assert str(copy / name) in message or (name.startswith("index/") and str(copy / "index") in message), message
    assert f"stillweb verify {copy}" in message and "\n" not in message


@pytest.mark.parametrize("name", ["docs.arrow", "facts.parquet", "index/meta.json", "truth.parquet", "manifest.json"])
def test_verify_names_the_damaged_file(copy, name):
    damage(copy / name, "corrupted")
    result = subprocess.run([sys.executable, "-m", "stillweb.cli.main", "verify", str(copy)], capture_output=True,
                            text=True, timeout=120)
    assert "Traceback" not in result.stderr
    if name == "manifest.json":
        assert result.returncode == 2 and f"damaged manifest {copy / name}" in result.stderr
    else:
        assert result.returncode == 1 and f"damaged file (sha256 differs): {name}" in result.stdout + result.stderr


def test_a_segment_file_cut_short_names_the_index(copy):
    segment = sorted(path for path in (copy / "index").iterdir() if path.suffix == ".idx")[0]
    damage(segment, "truncated")
    with pytest.raises(SnapshotError, match=f"cannot open the search index {copy / 'index'}"):
        use(copy)
    assert read_manifest(copy)["files"]  # the manifest itself is fine: verify names the segment
