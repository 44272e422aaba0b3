"""Sharded snapshots (issue 48): a row corpus built in three shards is opened with ``Snapshot.open`` and
searches exactly as tantivy searches the unsharded build of the same rows (doc ids, scores, titles, snippets,
source ids: the statistics are the collection's), across a shard boundary that cuts a title's passages, and
as its impact postings do up to float32 summation order (scores within 1e-6); shard groups
searched apart and merged by ``(-score, doc_id)`` give the whole index's top k; two processes build the
same fingerprint and results; what a shard cannot see is refused, naming it."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

from stillweb.cli.main import main
from stillweb.corpora.build.accounting import RowSkipError
from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.build.in_shards import build_rows_in_shards
from stillweb.corpora.errors import UsageError
from stillweb.corpora.search.shards import LocalGroup, RangeIndex, ShardedIndex, shard_index, whole_parameters
from stillweb.corpora.snapshot.manifest import SHARDED_FORMAT, SnapshotError, verify_snapshot
from stillweb.corpora.snapshot.reading import Snapshot
from support.rankings import same_as_tantivy
from support.sharded import search_pages, zipf_queries, zipf_rows

ROWS = 3000


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(rows file, the unsharded snapshot, the snapshot of the same rows in three shards)."""
    folder = tmp_path_factory.mktemp("sharded")
    rows = zipf_rows(folder / "rows.jsonl", ROWS)
    one = build_rows([rows], folder / "one", workers=1, progress=False).path
    three = build_rows_in_shards([rows], folder / "three", 3, workers=1, progress=False).path
    return rows, Snapshot.open(one), Snapshot.open(three)


def by_tantivy(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` searched by tantivy alone: without its impact postings (a sharded one: over ``index/``)."""
    index = {key: value for key, value in snapshot.manifest["index"].items() if key != "impacts"}
    return Snapshot(snapshot.path, dict(snapshot.manifest, index=index))


def test_a_sharded_snapshot_searches_as_the_unsharded_build(built):
    _rows, one, three = built
    assert one.manifest["index"]["impacts"] and three.manifest["index"]["impacts"] and type(three._index).__name__ == "ShardedIndex"
    assert all(Snapshot.open(three.path / "shard-0000").manifest["index"]["impacts"] for _ in [0])
    manifest = three.manifest
    assert manifest["format"] == SHARDED_FORMAT and manifest["index"]["statistics"].startswith("global")
    assert sum(shard["docs"] for shard in manifest["shards"]) == len(three) == len(one) == ROWS
    firsts = [shard["first_doc_id"] for shard in manifest["shards"]]
    assert firsts[0] == 0 and firsts == sorted(set(firsts)) and firsts[-1] < ROWS
    # a boundary falls inside a title's passages (five per title): its first passage is in the shard before
    assert any(firsts[1:][i] % 5 for i in range(2)), firsts
    # the titles either side of each boundary, whose title field is on their first passage only
    queries = zipf_queries(ROWS) + [f"Topic {first // 5 + step} w{step}" for first in firsts[1:] for step in (-1, 0, 1)]
    assert search_pages(three, queries) == search_pages(one, queries)  # the collection's statistics: every bit
    assert search_pages(three, queries[:10], k=100) == search_pages(one, queries[:10], k=100)
    tantivy_one, tantivy_three = by_tantivy(one), by_tantivy(three)  # tantivy over one index, over index/
    for doc_id in sorted({0, 1, ROWS - 1, *firsts[1:], *(first - 1 for first in firsts[1:])}):
        assert three.get(doc_id) == one.get(doc_id)
        assert three.contents_of(doc_id) == one.contents_of(doc_id)
        assert three.passages_of(doc_id) == one.passages_of(doc_id)
    assert three.resolve("Topic 7") == one.resolve("Topic 7") and three.nearest_titles("Topic 42") == one.nearest_titles("Topic 42")
    assert three.search_many(queries, 10, workers=2) == one.search_many(queries, 10, workers=2)  # workers open the shards
    assert search_pages(tantivy_three, queries) == search_pages(tantivy_one, queries)
    for query in queries:  # tantivy sums the same float32 values in another order than impact postings
        assert same_as_tantivy([(hit.doc_id, hit.score) for hit in three.search(query, 10)],
                               [(hit.doc_id, hit.score) for hit in tantivy_three.search(query, 10)]), query
    three.close()
    one.close()


def test_shard_groups_searched_apart_and_merged_give_the_whole_index(built):
    _rows, _one, three = built
    manifest, queries = three.manifest, zipf_queries(ROWS)
    shards = [(s["first_doc_id"], s["first_doc_id"] + s["docs"]) for s in manifest["shards"]]
    whole = by_tantivy(three)._index  # tantivy over every shard's segments
    ranges = lambda bounds: ShardedIndex([LocalGroup(RangeIndex(three.path / "index", whole_parameters(manifest), first, end))  # noqa: E731
                                          for first, end in bounds], whole)
    per_shard, uneven = ranges(shards), ranges([(0, 17), (17, 2500), (2500, ROWS)])
    impacts = [shard_index(three.path, manifest, shard) for shard in manifest["shards"]]
    pruned = ShardedIndex([LocalGroup(impacts[0]), LocalGroup(ShardedIndex([LocalGroup(i) for i in impacts[1:]], impacts[1]))], impacts[0])
    for k in (1, 10, 100):
        expected = [whole.search(query, k) for query in queries]
        assert per_shard.search_many(queries, k) == expected
        assert uneven.search_many(queries, k) == expected
        assert pruned.search_many(queries, k) == three._index.search_many(queries, k)  # groups of groups merge alike
    in_shard = RangeIndex(three.path / "index", whole_parameters(manifest), *shards[1]).search(queries[0], 100)
    assert len(in_shard) == 100 and in_shard == [hit for hit in whole.search(queries[0], ROWS) if shards[1][0] <= hit[0] < shards[1][1]][:100]
    alone = impacts[1].search(queries[0], 100)  # one shard's own postings: its doc ids, the collection's scores
    assert alone == [hit for hit in three._index.search(queries[0], ROWS) if shards[1][0] <= hit[0] < shards[1][1]][:100]


BUILD_AND_SEARCH = """
import json, sys
from pathlib import Path
from stillweb.corpora.build.in_shards import build_rows_in_shards
from stillweb.corpora.snapshot.reading import Snapshot
from support.rankings import same_as_tantivy
from support.sharded import search_pages, zipf_queries, zipf_rows

folder = Path(sys.argv[1])
rows = zipf_rows(folder / "rows.jsonl", 800)
result = build_rows_in_shards([rows], folder / "snap", 2, workers=1, progress=False)
snapshot = Snapshot.open(result.path)
print(json.dumps([snapshot.fingerprint, [s["fingerprint"] for s in snapshot.manifest["shards"]],
                  search_pages(snapshot, zipf_queries(800, 40))]))
"""


@pytest.mark.slow
def test_two_processes_build_the_same_sharded_snapshot_and_results(tmp_path):
    outputs = []
    for name, seed in (("a", "1"), ("b", "2")):
        (tmp_path / name).mkdir()
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join(sys.path)}
        outputs.append(subprocess.run([sys.executable, "-c", BUILD_AND_SEARCH, str(tmp_path / name)], check=True,
                                      capture_output=True, env=env).stdout)
    assert outputs[0] == outputs[1] and len(json.loads(outputs[0])[2]) == 40
    for shard in ("shard-0000", "shard-0001"):
        assert (tmp_path / "a" / "snap" / shard / "docs.parquet").read_bytes() == (tmp_path / "b" / "snap" / shard / "docs.parquet").read_bytes()


def test_what_a_shard_cannot_see_is_refused(tmp_path):
    rows = zipf_rows(tmp_path / "rows.jsonl", 200)
    with pytest.raises(UsageError, match="--dedupe id needs every row in one build"):
        build_rows_in_shards([rows], tmp_path / "out", 2, dedupe="id", progress=False)
    packed = tmp_path / "rows.jsonl.gz"
    packed.write_bytes(gzip.compress(rows.read_bytes()))
    with pytest.raises(UsageError, match=r"1 units of reading \(rows.jsonl.gz\).*decompress"):
        build_rows_in_shards([packed], tmp_path / "out", 2, progress=False)
    lines = rows.read_text(encoding="utf-8").splitlines()
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text("\n".join(lines + [lines[3]]) + "\n", encoding="utf-8")
    with pytest.raises(RowSkipError, match="duplicate source id 'r3' in shard-0000 and shard-0001"):
        build_rows_in_shards([repeated], tmp_path / "out", 2, workers=1, progress=False)
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.*"))


def test_a_shard_alone_damage_and_the_command_line(built, tmp_path, capsys):
    rows, _one, three = built
    with pytest.raises(SnapshotError, match=f"is a shard of a sharded snapshot.*open the sharded snapshot, {three.path}"):
        Snapshot.open(three.path / "shard-0002")
    assert Snapshot.open(three.path / "shard-0000").get(0) == three.get(0)  # the first shard is a snapshot of its own
    copy = tmp_path / "copy"
    shutil.copytree(three.path, copy, symlinks=True)
    assert verify_snapshot(copy) == []
    with (copy / "shard-0001" / "docs.parquet").open("r+b") as handle:
        handle.seek(100)
        handle.write(b"damage")
    assert verify_snapshot(copy) == ["shard-0001: damaged file (sha256 differs): docs.parquet"]
    (copy / "shard-0002" / "docs.arrow").unlink()
    with pytest.raises(SnapshotError, match="missing shard-0002/docs.arrow"):
        Snapshot.open(copy)
    assert main(["build", "corpus", str(rows), "--out", str(tmp_path / "cli"), "--shards", "2", "--workers", "1", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "counts: docs=3000, shards=2" in printed and Snapshot.open(tmp_path / "cli").fingerprint in printed
    assert main(["verify", str(tmp_path / "cli")]) == 0


def test_qa_evidence_maps_by_source_id_across_shards(tmp_path):
    """Tasks imported onto a sharded snapshot name the same documents as on the unsharded build (BrowseComp-Plus
    evidence given by the corpus's ids; one of them in the second shard)."""
    from stillweb.corpora.tasks.importers import ImportOptions, import_tasks
    from stillweb.corpora.tasks.store.files import read_tasks
    from support.qa_files import browsecomp_corpus_rows, browsecomp_rows, write_jsonl

    corpus = write_jsonl(tmp_path / "corpus.jsonl", browsecomp_corpus_rows())
    questions = write_jsonl(tmp_path / "browsecomp_plus_decrypted.jsonl", browsecomp_rows())
    evidence = {}
    for name, built in (("one", build_rows([corpus], tmp_path / "one", workers=1, progress=False)),
                        ("two", build_rows_in_shards([corpus], tmp_path / "two", 2, workers=1, progress=False))):
        assert import_tasks(built.path, [questions], "bcp", ImportOptions(progress=False)).unmapped == {}
        evidence[name] = [task.evidence_docs for task in read_tasks(built.path, "bcp", "test")]
    assert evidence["two"] == evidence["one"] and evidence["one"]
    second = Snapshot.open(tmp_path / "two").manifest["shards"][1]["first_doc_id"]
    assert max(doc for docs in evidence["two"] for doc in docs) >= second
