"""Sharded builds and task generation on Ray (a local 2-CPU runtime): the snapshot of a
sharded build equals the local build's, fingerprint and table bytes (plain XML page ranges,
bzip2 multistream, row corpora: JSON-lines byte ranges and parquet row groups; the same over a two-node
Cluster: tests/envs/on_ray/test_ray_cluster.py); ``tasks generate --ray`` writes the same task set bytes;
a sharded snapshot built as Ray tasks (issue 48) equals the one built here."""

from __future__ import annotations

import os

import pytest

from support.ray_env import multistream_copy, ray_work_log, row_corpus, same_snapshot
from stillweb.corpora.build.from_source import build_rows, build_synthetic, build_wikipedia
from stillweb.corpora.sources.corpus_formats import CorpusSpec
from stillweb.corpora.sources.wikipedia_xml import dump_shards
from stillweb.corpora.tasks.compose.params import ComposeParams
from stillweb.corpora.tasks.compose.generate import generate_tasks
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from support.snapshots import files_digest

pytest.importorskip("ray")
pytestmark = pytest.mark.extra("ray")


@pytest.fixture
def small_shards(monkeypatch):
    """Shards of 64 KiB, so a small source still makes several."""
    monkeypatch.setattr("stillweb.corpora.build.on_ray.SHARD_BYTES", 64 << 10)


def in_ray_workers(notes: list[dict], what: str, at_least: int) -> None:
    """At least ``at_least`` pieces of work ``what`` ran, each in a Ray worker process (not this driver)."""
    done = [note for note in notes if note["what"] == what]
    assert len(done) >= at_least and os.getpid() not in {note["pid"] for note in done}, (what, len(done), at_least)


@pytest.mark.slow
def test_sharded_synthetic_build_equals_the_local_build(ray_runtime, tmp_path, small_shards, monkeypatch):
    notes = ray_work_log(monkeypatch, tmp_path / "notes")
    local = build_synthetic(200, 5, tmp_path / "local", progress=False)
    assert notes() == []
    sharded = build_synthetic(200, 5, tmp_path / "sharded", progress=False, on_ray=True)
    same_snapshot(local, sharded)
    in_ray_workers(notes(), "dump_shard", 2)  # 200 articles make several 64 KiB page ranges


@pytest.mark.slow
def test_sharded_multistream_build_equals_the_local_build(ray_runtime, shared_data, tmp_path, small_shards, monkeypatch):
    notes = ray_work_log(monkeypatch, tmp_path / "notes")
    dump = multistream_copy(shared_data, tmp_path)
    shards = len(dump_shards(dump, 64 << 10))
    assert shards > 3
    local = build_wikipedia(dump, tmp_path / "local", progress=False)
    sharded = build_wikipedia(dump, tmp_path / "sharded", progress=False, on_ray=True)
    same_snapshot(local, sharded)
    in_ray_workers(notes(), "dump_shard", shards)


def test_sharded_chinese_dump_build_equals_the_local_build(ray_runtime, tmp_path, monkeypatch):
    """A zhwiki dump in page ranges of ~512 bytes: its pages written in the chosen script on the workers."""
    from support.zhwiki import write_zhwiki_dump

    monkeypatch.setattr("stillweb.corpora.build.on_ray.SHARD_BYTES", 512)
    notes = ray_work_log(monkeypatch, tmp_path / "notes")
    dump = write_zhwiki_dump(tmp_path / "zhwiki.xml")
    shards = len(dump_shards(dump, 512))
    assert shards > 3
    for script in ("hans", "hant"):
        local = build_wikipedia(dump, tmp_path / f"local-{script}", progress=False, script=script)
        sharded = build_wikipedia(dump, tmp_path / f"sharded-{script}", progress=False, on_ray=True, script=script)
        same_snapshot(local, sharded)
        assert sharded.manifest["parameters"]["script"] == script
    in_ray_workers(notes(), "dump_shard", 2 * shards)


def test_sharded_row_corpus_build_equals_the_local_build(ray_runtime, tmp_path, monkeypatch):
    monkeypatch.setattr("stillweb.corpora.build.on_ray.SHARD_BYTES", 8 << 10)
    notes = ray_work_log(monkeypatch, tmp_path / "notes")
    inputs = row_corpus(tmp_path / "rows")
    shards = CorpusSpec.detect(inputs).shards(8 << 10)
    assert sum(shard.start is not None for shard in shards) > 3 and sum(shard.part is not None for shard in shards) == 4
    local = build_rows(inputs, tmp_path / "local", progress=False)
    sharded = build_rows(inputs, tmp_path / "sharded", progress=False, on_ray=True)
    same_snapshot(local, sharded)
    in_ray_workers(notes(), "row_shard", len(shards))
    rows = local.manifest["counts"]["rows"]
    assert rows["skipped"] == {"bad_utf8": 1, "not_json": 1} and rows["missing_title"] == 1


def test_a_sharded_snapshot_built_as_ray_tasks_equals_the_one_built_here(ray_runtime, tmp_path, monkeypatch):
    """Rows with skips (bad JSON, bad UTF-8, no title) in passages of 4 words: Ray's counting pass places every shard
    where the build here does (first doc ids, titles before), so the fingerprints and tables are the same."""
    from stillweb.corpora.build.in_shards import build_rows_in_shards

    inputs = row_corpus(tmp_path / "rows")
    here = build_rows_in_shards(inputs, tmp_path / "here", 3, passages=4, workers=1, progress=False)
    notes = ray_work_log(monkeypatch, tmp_path / "notes")  # after the build here, whose shards note no Ray task
    on_ray = build_rows_in_shards(inputs, tmp_path / "ray", 3, passages=4, workers=1, progress=False, on_ray=True)
    assert on_ray.manifest["fingerprint"] == here.manifest["fingerprint"]
    assert on_ray.manifest["counts"] == here.manifest["counts"] and here.manifest["counts"]["rows"]["skipped"]
    for shard in here.manifest["shards"]:
        for name in ("docs.parquet", "facts.parquet"):
            assert (on_ray.path / shard["path"] / name).read_bytes() == (here.path / shard["path"] / name).read_bytes()
    in_ray_workers(notes(), "shard_build", 3)


@pytest.mark.slow
def test_task_generation_on_ray_writes_the_same_bytes(ray_runtime, small_snapshot, tmp_path, monkeypatch):
    notes = ray_work_log(monkeypatch, tmp_path / "notes")
    generate_tasks(small_snapshot, "ray-local", GenerationParams(count=30, seed=7, compose=ComposeParams(max_hops=5)))
    assert notes() == []
    generate_tasks(small_snapshot, "ray-sharded", GenerationParams(count=30, seed=7, compose=ComposeParams(max_hops=5)), on_ray=True)
    in_ray_workers(notes(), "attempts", 1)
    digests = [files_digest(small_snapshot / "tasks" / name) for name in ("ray-local", "ray-sharded")]
    assert digests[0] == digests[1]
