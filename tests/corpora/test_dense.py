"""Dense and hybrid search (issue 37): a dense index added to a built snapshot from a vectors file or an
embeddings server, exact integer ranking, frozen query embeddings, and every bad input named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from stillweb.corpora.search.dense import EXACT_FLOAT32_DIMENSIONS, _dots, fuse, quantize, quantize_many, top_k, vector_norms
from stillweb.corpora.search.dense_build import add_dense_index
from stillweb.corpora.search.embeddings import EmbeddingsError, QueryNotRecorded
from stillweb.corpora.errors import DataError, UsageError
from stillweb.corpora.snapshot.manifest import verify_snapshot
from stillweb.corpora.snapshot.reading import Snapshot
from support.dense import DIMENSIONS, dense_copy, stub_vectors, tree_digest
from support.embeddings_stub import MODEL, hashing_embedding, serve_embeddings
from support.network import free_port

QUERIES = ["capital city river", "born in 1873 journalist", "Velland", "university founded", "album award"]


@pytest.fixture(scope="module")
def dense_snapshot(small_snapshot, tmp_path_factory):
    return dense_copy(small_snapshot, tmp_path_factory.mktemp("dense") / "syn-300")


@pytest.fixture()
def plain_copy(small_snapshot, tmp_path):
    import shutil

    return shutil.copytree(small_snapshot, tmp_path / "syn-300")


def reference_ranking(snapshot_path, query: str, k: int) -> list[int]:
    """Brute force in exact Python integers and fractions: the ranking dense search must give."""
    from fractions import Fraction

    vectors = np.load(snapshot_path / "dense" / "vectors.npy").astype(np.int64)
    q = quantize(hashing_embedding(query, DIMENSIONS)).astype(np.int64)
    keys = []
    for doc_id, row in enumerate(vectors):
        dot, norm_sq = int(row @ q), int(row @ row)
        keys.append((-(Fraction(dot * abs(dot), norm_sq) if norm_sq else Fraction(0)), doc_id))  # sign * dot^2 / |d|^2
    return [doc_id for _key, doc_id in sorted(keys)[:k]]


def test_quantize_is_symmetric_int8_per_vector():
    assert quantize([0.5, -1.0, 0.25]).tolist() == [64, -127, 32]
    assert quantize([0.0, 0.0]).tolist() == [0, 0]
    assert quantize_many([[2.0, 1.0], [-3.0, 0.0]]).tolist() == [[127, 64], [-127, 0]]
    with pytest.raises(DataError, match="NaN"):
        quantize([1.0, float("nan")])


@pytest.mark.parametrize("dimensions", [384, EXACT_FLOAT32_DIMENSIONS + 7])  # float32 sums, then float64 sums
def test_dot_products_are_exact_integers(dimensions):
    rng = np.random.default_rng(dimensions)
    vectors = rng.integers(-127, 128, size=(5000, dimensions), dtype=np.int8)
    vectors[0] = 127  # the largest possible dot product
    query = np.full(dimensions, 127, dtype=np.int8)
    exact = vectors.astype(np.int64) @ query.astype(np.int64)
    assert _dots(vectors, query).tolist() == exact.astype(np.float64).tolist()


def test_a_batch_ranks_as_one_by_one():
    from stillweb.corpora.search.dense import QUERY_CHUNK, DenseIndex

    rng = np.random.default_rng(7)
    index = DenseIndex.__new__(DenseIndex)
    index.info, index.vectors = {"dimensions": 48}, rng.integers(-127, 128, size=(3000, 48), dtype=np.int8)
    index.norms = vector_norms(index.vectors)
    queries = rng.standard_normal((QUERY_CHUNK * 2 + 3, 48))
    queries[4] = 0.0  # a zero query: every score 0, doc id order
    assert index.search_many(queries, 7) == [index.search(query, 7) for query in queries]
    assert index.search(queries[4], 3) == [(0, 0.0), (1, 0.0), (2, 0.0)]


def test_top_k_orders_ties_by_doc_id_across_the_cut():
    scores = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0])
    assert top_k(scores, 3) == [1, 3, 2]
    assert top_k(scores, 10) == [1, 3, 2, 4, 5, 0]


def test_fusion_weights_and_ties():
    assert fuse({"bm25": [1, 2], "dense": [2, 1]}, 2) == [(1, 1 / 61 + 1 / 62), (2, 1 / 62 + 1 / 61)]
    assert [doc for doc, _ in fuse({"bm25": [5], "dense": [4]}, 2)] == [4, 5]  # equal scores: doc id order


def test_dense_index_from_a_vectors_file(dense_snapshot, small_snapshot):
    snapshot = Snapshot.open(dense_snapshot)
    assert snapshot.fingerprint == Snapshot.open(small_snapshot).fingerprint
    assert verify_snapshot(dense_snapshot) == []
    info = snapshot.dense_info
    assert (info["model"], info["dimensions"], info["docs"], info["from"]) == (MODEL, DIMENSIONS, len(snapshot), "vectors file")
    assert np.load(dense_snapshot / "dense" / "vectors.npy").dtype == np.int8


def test_dense_search_matches_brute_force_and_is_frozen(dense_snapshot, tmp_path):
    store = tmp_path / "queries.log"
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, app):
        snapshot = Snapshot.open(dense_snapshot)
        snapshot.use_query_embeddings(endpoint=url, store=store)
        for query in QUERIES:
            assert [hit.doc_id for hit in snapshot.search(query, 10, mode="dense")] == \
                reference_ranking(dense_snapshot, query, 10)
        recorded_calls = app.state.calls
        assert recorded_calls == len(QUERIES)
        again = [[hit for hit in snapshot.search(query, 10, mode="hybrid")] for query in QUERIES]
        assert app.state.calls == recorded_calls  # every later call reads the record
    offline = Snapshot.open(dense_snapshot)  # no server: the records answer
    offline.use_query_embeddings(store=store)
    assert [offline.search(query, 10, mode="hybrid") for query in QUERIES] == again
    with pytest.raises(QueryNotRecorded, match="retriever='bm25'"):
        offline.search("a query nobody recorded", 5, mode="dense")


def test_the_first_record_wins_across_recorders(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from stillweb.corpora.search.embeddings import EmbeddingsClient, QueryEmbeddingStore

    store_path = tmp_path / "q.log"
    with serve_embeddings(free_port(), dimensions=DIMENSIONS, mode="noisy") as (url, app):
        client = EmbeddingsClient(url, MODEL)
        recorders = [QueryEmbeddingStore(store_path) for _ in range(4)]  # four open logs, as four processes have
        with ThreadPoolExecutor(4) as pool:
            vectors = list(pool.map(lambda store: store.get_or_record(MODEL, "river city", lambda t: client.embed([t])[0]),
                                    recorders * 3))
        assert app.state.calls == 1  # the lock makes later recorders read the record instead of asking again
        assert client.embed(["river city"])[0] != vectors[0]  # the server itself no longer repeats that vector
    assert all(vector == vectors[0] for vector in vectors)
    assert len(QueryEmbeddingStore(store_path)) == 1 and len(store_path.read_bytes().splitlines()) == 1
    with store_path.open("ab") as log:
        log.write(b"0123 {\"torn")  # a recorder killed mid-line
    after_damage = QueryEmbeddingStore(store_path)
    assert after_damage.get(QueryEmbeddingStore.key(MODEL, "river city")) == vectors[0]
    after_damage.get_or_record(MODEL, "lake", lambda text: [1.0, 2.0])  # the next record starts on a new line
    assert QueryEmbeddingStore(store_path).get(QueryEmbeddingStore.key(MODEL, "lake")) == [1.0, 2.0]


def test_hybrid_is_rrf_of_the_two_rankings(dense_snapshot, tmp_path):
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, _app):
        snapshot = Snapshot.open(dense_snapshot)
        snapshot.use_query_embeddings(endpoint=url, store=tmp_path / "q.log")
        for query in QUERIES:
            bm25 = [hit.doc_id for hit in snapshot.search(query, 100)]
            dense = [hit.doc_id for hit in snapshot.search(query, 100, mode="dense")]
            hybrid = [(hit.doc_id, hit.score) for hit in snapshot.search(query, 10, mode="hybrid")]
            assert hybrid == fuse({"bm25": bm25, "dense": dense}, 10)


def test_endpoint_build_equals_vectors_build(plain_copy, dense_snapshot):
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, app):
        info = add_dense_index(plain_copy, model=MODEL, endpoint=url, batch_size=50, progress=False)
    assert app.state.calls == -(-len(Snapshot.open(plain_copy)) // 50)
    assert info["vectors_sha256"] == Snapshot.open(dense_snapshot).dense_info["vectors_sha256"]
    assert verify_snapshot(plain_copy) == []


@pytest.mark.parametrize("mode, reason", [("error", "HTTP 500"), ("slow", "did not answer within"),
                                          ("wrong_dimensions", "32 dimensions; expected 64")])
def test_a_bad_endpoint_fails_the_build_and_keeps_the_snapshot(plain_copy, mode, reason):
    before = tree_digest(plain_copy)
    with serve_embeddings(free_port(), dimensions=DIMENSIONS, mode=mode, slow_s=3.0) as (url, _app):
        with pytest.raises(EmbeddingsError, match=reason):
            add_dense_index(plain_copy, model=MODEL, endpoint=url, batch_size=100, timeout=0.5, progress=False)
    assert tree_digest(plain_copy) == before
    assert sorted(path.name for path in plain_copy.parent.iterdir()) == ["syn-300"]  # no temporary left


def test_an_endpoint_that_is_down_fails_the_build(plain_copy):
    before = tree_digest(plain_copy)
    with pytest.raises(EmbeddingsError, match="unreachable.*is it running"):
        add_dense_index(plain_copy, model=MODEL, endpoint=f"http://127.0.0.1:{free_port()}/v1", progress=False)
    assert tree_digest(plain_copy) == before


def test_vectors_for_unknown_or_missing_ids_are_counted_and_named(plain_copy, tmp_path):
    ids, vectors = stub_vectors(plain_copy)
    bad = tmp_path / "bad.npz"
    np.savez(bad, ids=np.array(ids[3:] + ["nope-1", "nope-2"]), vectors=np.vstack([vectors[3:], vectors[:2]]))
    before = tree_digest(plain_copy)
    with pytest.raises(DataError) as caught:
        add_dense_index(plain_copy, model=MODEL, vectors_file=bad, progress=False)
    message = str(caught.value)
    assert "2 ids of no document in the snapshot: 'nope-1', 'nope-2'" in message
    assert f"3 documents without a vector: {ids[0]!r}, {ids[1]!r}, {ids[2]!r}" in message
    assert "--ignore-unknown" in message
    assert tree_digest(plain_copy) == before
    with pytest.raises(DataError, match="3 documents without a vector") as caught:
        add_dense_index(plain_copy, model=MODEL, vectors_file=bad, ignore_unknown=True, progress=False)
    assert "nope" not in str(caught.value)


def test_vectors_as_npy_with_ids_and_as_parquet(plain_copy, tmp_path, dense_snapshot):
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids, vectors = stub_vectors(plain_copy)
    expected = Snapshot.open(dense_snapshot).dense_info["vectors_sha256"]
    np.save(tmp_path / "v.npy", vectors[::-1])
    (tmp_path / "ids.txt").write_text("\n".join(ids[::-1]) + "\n")
    with pytest.raises(UsageError, match="--ids"):
        add_dense_index(plain_copy, model=MODEL, vectors_file=tmp_path / "v.npy", progress=False)
    info = add_dense_index(plain_copy, model=MODEL, vectors_file=tmp_path / "v.npy", ids_file=tmp_path / "ids.txt",
                           progress=False)
    assert info["vectors_sha256"] == expected
    pq.write_table(pa.table({"id": ids, "embedding": vectors.tolist()}), tmp_path / "v.parquet")
    assert add_dense_index(plain_copy, model=MODEL, vectors_file=tmp_path / "v.parquet",
                           progress=False)["vectors_sha256"] == expected


def test_bad_build_arguments_and_bad_vectors_are_named(plain_copy, tmp_path):
    ids, vectors = stub_vectors(plain_copy)
    for options, message in (({"endpoint": "http://127.0.0.1:1/v1", "batch_size": 0}, "--batch-size must be"),
                             ({"endpoint": "http://127.0.0.1:1/v1", "max_chars": -1}, "--max-chars must be"),
                             ({"endpoint": "http://127.0.0.1:1/v1", "timeout": 0}, "timeout must be a positive"),
                             ({"endpoint": "ftp://x"}, "http"), ({}, "exactly one of")):
        with pytest.raises(UsageError, match=message):
            add_dense_index(plain_copy, model=MODEL, progress=False, **options)
    vectors[5, 3] = np.nan
    np.savez(tmp_path / "nan.npz", ids=np.array(ids[::-1]), vectors=vectors[::-1])
    with pytest.raises(DataError, match=f"the vector of id {ids[5]!r} \\(row {len(ids) - 6} of the file\\) has NaN"):
        add_dense_index(plain_copy, model=MODEL, vectors_file=tmp_path / "nan.npz", progress=False)


def test_unknown_mode_and_no_dense_index_say_what_to_do(small_snapshot, dense_snapshot):
    with pytest.raises(UsageError, match="unknown mode 'semantic': choose one of bm25, dense, hybrid"):
        Snapshot.open(dense_snapshot).search("river", 3, mode="semantic")
    with pytest.raises(UsageError, match="unknown mode 'x'"):
        Snapshot.open(dense_snapshot).search_many(["river"], 3, mode="x")
    with pytest.raises(UsageError, match=r"no dense index.*stillweb build dense .* --endpoint URL --model NAME"):
        Snapshot.open(small_snapshot).search("river", 3, mode="hybrid")


def test_query_with_wrong_dimensions_is_named(dense_snapshot, tmp_path):
    with serve_embeddings(free_port(), dimensions=DIMENSIONS * 2) as (url, _app):
        snapshot = Snapshot.open(dense_snapshot)
        snapshot.use_query_embeddings(endpoint=url, store=tmp_path / "q.log")
        with pytest.raises(DataError, match="128,.*64 dimensions"):
            snapshot.search("river", 3, mode="dense")


@pytest.mark.slow
def test_search_many_dense_equals_one_by_one(dense_snapshot, tmp_path):
    queries = [f"{word} city" for word in ("river", "capital", "born", "album", "award", "school", "war", "lake")] * 3
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, _app):
        snapshot = Snapshot.open(dense_snapshot)
        snapshot.use_query_embeddings(endpoint=url, store=tmp_path / "q.log")
        for mode in ("dense", "hybrid"):
            one_by_one = [snapshot.search(query, 10, mode=mode) for query in queries]
            assert snapshot.search_many(queries, 10, workers=2, mode=mode) == one_by_one
        snapshot.close()


RANKINGS = textwrap.dedent("""
    import json, sys
    from stillweb.corpora.snapshot.reading import Snapshot
    snapshot = Snapshot.open(sys.argv[1])
    snapshot.use_query_embeddings(endpoint=sys.argv[2] or None, store=sys.argv[3])
    queries = json.loads(sys.argv[4])
    print(json.dumps({mode: [[(h.doc_id, h.score, h.title, h.snippet) for h in snapshot.search(q, 10, mode=mode)]
                             for q in queries] for mode in ("dense", "hybrid")}))
""")


def test_dense_and_hybrid_rankings_are_identical_in_two_processes(dense_snapshot, tmp_path):
    store = str(tmp_path / "q.log")
    runs = []
    with serve_embeddings(free_port(), dimensions=DIMENSIONS) as (url, _app):
        for endpoint, threads in ((url, "1"), ("", "2")):  # the second process reads the records, other threads
            env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, PYTHONHASHSEED=threads)
            runs.append(subprocess.run([sys.executable, "-c", RANKINGS, str(dense_snapshot), endpoint, store,
                                        json.dumps(QUERIES)], capture_output=True, env=env, check=True).stdout)
    assert runs[0] == runs[1]
    assert len(json.loads(runs[0])["dense"]) == len(QUERIES)


def test_cli_build_dense(plain_copy, tmp_path, capsys):
    from stillweb.cli.main import main

    ids, vectors = stub_vectors(plain_copy)
    np.savez(tmp_path / "v.npz", ids=np.array(ids), vectors=vectors)
    assert main(["build", "dense", str(plain_copy), "--vectors", str(tmp_path / "v.npz"), "--model", MODEL]) == 0
    assert f"{len(ids)} vectors of {DIMENSIONS} dimensions" in capsys.readouterr().out
    assert main(["info", str(plain_copy)]) == 0
    assert f"dense:        {MODEL} ({DIMENSIONS} dimensions, from the vectors file)" in capsys.readouterr().out
    assert main(["build", "dense", str(plain_copy), "--endpoint", "http://127.0.0.1:1/v1", "--model", MODEL,
                 "--quiet"]) == 2
    assert "unreachable" in capsys.readouterr().err
    assert Snapshot.open(plain_copy).dense_info["from"] == "vectors file"  # the failed build changed nothing


def test_an_open_snapshot_keeps_working_through_the_swap(plain_copy, tmp_path):
    before = Snapshot.open(plain_copy)
    expected = [before.search("river capital", 5), before.get(3)]
    ids, vectors = stub_vectors(plain_copy)
    np.savez(tmp_path / "v.npz", ids=np.array(ids), vectors=vectors)
    add_dense_index(plain_copy, model=MODEL, vectors_file=tmp_path / "v.npz", progress=False)
    assert [before.search("river capital", 5), before.get(3)] == expected
    assert before.facts(subject=3) == Snapshot.open(plain_copy).facts(subject=3)
    assert before.dense_info is None and Snapshot.open(plain_copy).dense_info["model"] == MODEL
