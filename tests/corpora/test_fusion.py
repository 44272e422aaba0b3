"""Hybrid search's fusion as the dense index's manifest records it (issue 50 item 3): z-score fusion for new
shipped-model indexes, reciprocal-rank fusion exactly as before for every index made earlier, identical bytes
in two processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from stillweb.corpora.errors import DataError
from stillweb.corpora.search.dense import fuse
from stillweb.corpora.search.fusion import SHIPPED_FUSION, Fusion, fuse_zscores, fusion_of, zscores
from stillweb.corpora.snapshot.manifest import write_manifest_as_is
from stillweb.corpora.snapshot.reading import Snapshot
from support.dense import DIMENSIONS, dense_copy
from support.embeddings_stub import serve_embeddings
from support.network import free_port

QUERIES = ["capital city river", "born in 1873 journalist", "Velland", "university founded", "album award",
           "the of a"]


@pytest.fixture(scope="module")
def recorded(small_snapshot, tmp_path_factory):
    """A dense snapshot (the stub model's vectors, no fusion recorded) and a store holding every query's embedding."""
    snapshot_path = dense_copy(small_snapshot, tmp_path_factory.mktemp("fusion") / "syn-300")
    store = snapshot_path.parent / "queries.log"
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, _app):
        snapshot = Snapshot.open(snapshot_path)
        snapshot.use_query_embeddings(endpoint=url, store=store)
        for query in QUERIES:
            snapshot.search(query, 1, mode="dense")
    return snapshot_path, store


def with_fusion(recorded, tmp_path, **dense_entry) -> Snapshot:
    """A copy of the recorded snapshot whose manifest's dense entry has ``dense_entry`` set (None: removed)."""
    source, store = recorded
    copy = shutil.copytree(source, tmp_path / "snap")
    manifest = json.loads((copy / "manifest.json").read_text())
    dense = {key: value for key, value in {**manifest["dense"], **dense_entry}.items() if value is not None}
    write_manifest_as_is(copy, dict(manifest, dense=dense))
    snapshot = Snapshot.open(copy)
    snapshot.use_query_embeddings(store=store)
    return snapshot


def test_zscores_floor_ties_and_empty_lists():
    assert zscores([]) == ([], 0.0)
    assert zscores([2.0, 2.0]) == ([0.0, 0.0], 0.0)  # no spread: every z is 0
    fused = fuse_zscores({"bm25": [(4, 3.0), (2, 1.0)], "dense": [(2, 0.5), (9, 0.25)]}, 10, {"bm25": 0.5, "dense": 0.5})
    assert fused == [(2, 0.0), (4, 0.0), (9, -1.0)]  # missing from a list: that list's lowest z; ties by doc id
    assert fuse_zscores({"bm25": [], "dense": [(2, 0.5), (9, 0.25)]}, 10, {"bm25": 0.5, "dense": 0.5}) == \
        [(2, 0.5), (9, -0.5)]  # BM25 found nothing (a stop-word query): the dense order alone
    assert fuse_zscores({"bm25": [(1, 2.0), (2, 1.0)], "dense": [(2, 0.5), (1, 0.25)]}, 1,
                        {"bm25": 0.25, "dense": 0.75}) == [(2, 0.5)]


def test_manifests_name_their_fusion():
    assert fusion_of(None) == fusion_of({}) == Fusion("rrf", 100, {"bm25": 1.0, "dense": 1.0}, 60)
    assert fusion_of({"fusion_weights": {"bm25": 1.0, "dense": 2.0}}).weights == {"bm25": 1.0, "dense": 2.0}
    assert fusion_of({"fusion": SHIPPED_FUSION}) == Fusion("zscore", 500, {"bm25": 0.5, "dense": 0.5})
    for bad in ({"method": "comb-mnz", "depth": 10, "weights": {"bm25": 1, "dense": 1}},
                {"method": "zscore", "depth": 0, "weights": {"bm25": 1, "dense": 1}},
                {"method": "zscore", "depth": 10, "weights": {"bm25": 1}}, "zscore"):
        with pytest.raises(DataError, match="fusion .* is not one this stillweb knows"):
            fusion_of({"fusion": bad})


@pytest.mark.parametrize("weights", [None, {"bm25": 1.0, "dense": 2.0}])
def test_an_old_manifest_fuses_by_rrf_as_before(recorded, tmp_path, weights):
    """Indexes made before the fusion was recorded (none, or the shipped model's fusion_weights 1:2) rank as the
    earlier code ranked them: RRF (k=60) of BM25's and dense's top 100."""
    snapshot = with_fusion(recorded, tmp_path, fusion=None, fusion_weights=weights)
    for query in QUERIES:
        bm25 = [hit.doc_id for hit in snapshot.search(query, 100)]
        dense = [hit.doc_id for hit in snapshot.search(query, 100, mode="dense")]
        hybrid = [(hit.doc_id, hit.score) for hit in snapshot.search(query, 10, mode="hybrid")]
        assert hybrid == fuse({"bm25": bm25, "dense": dense}, 10, weights)


def test_zscore_hybrid_is_the_recorded_fusion(recorded, tmp_path):
    """The shipped fusion against numpy's mean and standard deviation over each ranking's top 500."""
    snapshot = with_fusion(recorded, tmp_path, fusion=SHIPPED_FUSION)
    assert len(snapshot) < 500  # so each list is the whole ranking
    for query in QUERIES:
        lists = {"bm25": snapshot._index.search(query, 500),
                 "dense": snapshot._dense.search(snapshot.query_embedder.embed(query, snapshot.path), 500)}
        normalized = {}
        for name, hits in lists.items():
            scores = np.array([score for _, score in hits])
            z = (scores - scores.mean()) / scores.std() if len(scores) and scores.std() > 0 else np.zeros(len(scores))
            normalized[name] = (dict(zip((doc_id for doc_id, _ in hits), z)), z.min() if len(z) else 0.0)
        union = set().union(*(table for table, _ in normalized.values()))
        reference = sorted(((doc_id, sum(0.5 * table.get(doc_id, floor) for table, floor in normalized.values()))
                            for doc_id in union), key=lambda item: (-item[1], item[0]))[:10]
        hybrid = snapshot.search(query, 10, mode="hybrid")
        assert [hit.doc_id for hit in hybrid] == [doc_id for doc_id, _ in reference], query
        assert [hit.score for hit in hybrid] == pytest.approx([score for _, score in reference], abs=1e-9)


FUSED = textwrap.dedent("""
    import json, sys
    from stillweb.corpora.snapshot.reading import Snapshot
    snapshot = Snapshot.open(sys.argv[1])
    snapshot.use_query_embeddings(store=sys.argv[2])
    print(json.dumps([[(hit.doc_id, repr(hit.score)) for hit in snapshot.search(query, 20, mode="hybrid")]
                      for query in json.loads(sys.argv[3])]))
""")


def test_fused_rankings_are_identical_in_two_processes(recorded, tmp_path):
    snapshot = with_fusion(recorded, tmp_path, fusion=SHIPPED_FUSION)
    outputs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, OMP_NUM_THREADS=seed)
        outputs.append(subprocess.run([sys.executable, "-c", FUSED, str(snapshot.path), str(recorded[1]),
                                       json.dumps(QUERIES)], capture_output=True, env=env, check=True).stdout)
    assert outputs[0] == outputs[1]
    here = [[(hit.doc_id, repr(hit.score)) for hit in snapshot.search(query, 20, mode="hybrid")] for query in QUERIES]
    assert json.loads(outputs[0]) == json.loads(json.dumps(here))
