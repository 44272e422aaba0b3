"""Like a cluster on one machine (``ray.cluster_utils.Cluster``, two simulated nodes on
127.0.0.1): pool actors spread over the nodes; a lost node's actor is restarted on the
other and replayed; a multistream dump and a row corpus (JSON-lines byte ranges, parquet row
groups) built in shards over both nodes equal the local builds, and the shards ran as Ray tasks on each node
(support.ray_env.ray_work_log); a sharded snapshot (issue 48) built as Ray tasks on both nodes and searched by a
shard actor on each answers as the shards searched in one process, through Snapshot.search, /retrieve and the
environments."""

from __future__ import annotations

import gymnasium as gym
import pytest

from support.ray_env import ENV_ID, env_kwargs_for, multistream_copy, ray_work_log, row_corpus, same_snapshot
from stillweb.corpora.build.from_source import build_rows, build_wikipedia
from stillweb.corpora.canonical import canonical_json

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.extra("ray"), pytest.mark.slow]

from ray.cluster_utils import Cluster  # noqa: E402

from stillweb.envs.ray import EnvPool  # noqa: E402

NODE = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 100 * 2**20}


@pytest.fixture(scope="module")
def ray_cluster():
    """A head and a worker node on 127.0.0.1 (no dashboard), the driver connected for the whole module (tests/conftest.py
    keeps Ray up between its tests)."""
    # tests/conftest.py sets RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 before ray is imported; without it ray.init below would
    # dial this machine's network address instead of 127.0.0.1 and retry for ever: fail here instead.
    assert ray.util.get_node_ip_address() == "127.0.0.1", (
        "ray was imported before RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 was set (tests/conftest.py sets it): "
        f"ray.init(address='127.0.0.1:PORT') would dial {ray.util.get_node_ip_address()} and hang")
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    cluster.add_node(**NODE)
    ray.init(address=cluster.address, _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def test_pool_actors_spread_and_survive_a_lost_node(ray_cluster, small_snapshot):
    env_kwargs = env_kwargs_for(small_snapshot)
    pool = EnvPool(ENV_ID, 2, envs_per_actor=1, env_kwargs=env_kwargs, actor_options={"num_cpus": 0.5})
    local = EnvPool(ENV_ID, 2, envs_per_actor=2, env_kwargs=env_kwargs)  # the reference, on one actor
    try:
        nodes = [entry["node_id"] for entry in pool.memory()]
        assert len(set(nodes)) == 2, "SPREAD put both actors on one node"
        actions = ['<tool_call>{"name": "search", "arguments": {"query": "born"}}</tool_call>',
                   '<tool_call>{"name": "search", "arguments": {"query": "river"}}</tool_call>']
        first = [("reset", 3, None), ("reset", 4, None)]
        assert canonical_json(pool.run(first)) == canonical_json(local.run(first))
        assert canonical_json(pool.run([("step", a) for a in actions])) == canonical_json(local.run([("step", a) for a in actions]))
        worker_node = next(node for node in ray_cluster.worker_nodes)
        ray_cluster.remove_node(worker_node)
        again = [("step", actions[1]), ("step", actions[0])]
        assert canonical_json(pool.run(again)) == canonical_json(local.run(again))
        assert pool.restarts == 1
    finally:
        pool.close()
        local.close()
        ray_cluster.add_node(**NODE)
        ray_cluster.wait_for_nodes()


def ran_on_both_nodes(cluster, notes: list[dict], what: str) -> None:
    """The pieces of work ``what`` ran as Ray tasks on the head node and on the second node."""
    worker_node = next(iter(cluster.worker_nodes))
    nodes = {note["node"] for note in notes if note["what"] == what}
    assert nodes == {cluster.head_node.node_id, worker_node.node_id}, (what, nodes)


def test_sharded_wikipedia_build_over_two_nodes_equals_the_local_build(ray_cluster, shared_data, tmp_path, monkeypatch):
    assert len([node for node in ray.nodes() if node["Alive"]]) == 2
    monkeypatch.setattr("stillweb.corpora.build.on_ray.SHARD_BYTES", 64 << 10)
    notes = ray_work_log(monkeypatch, tmp_path / "notes")
    dump = multistream_copy(shared_data, tmp_path)
    local = build_wikipedia(dump, tmp_path / "local", progress=False)
    sharded = build_wikipedia(dump, tmp_path / "sharded", progress=False, on_ray=True)
    same_snapshot(local, sharded)
    assert local.manifest["counts"]["docs"] > 50
    ran_on_both_nodes(ray_cluster, notes(), "dump_shard")


def test_sharded_row_corpus_build_over_two_nodes_equals_the_local_build(ray_cluster, tmp_path, monkeypatch):
    assert len([node for node in ray.nodes() if node["Alive"]]) == 2
    monkeypatch.setattr("stillweb.corpora.build.on_ray.SHARD_BYTES", 8 << 10)
    notes = ray_work_log(monkeypatch, tmp_path / "notes")
    inputs = row_corpus(tmp_path / "rows")
    local = build_rows(inputs, tmp_path / "local", progress=False)
    sharded = build_rows(inputs, tmp_path / "sharded", progress=False, on_ray=True)
    same_snapshot(local, sharded)
    assert local.manifest["counts"]["rows"]["written"] == 798
    ran_on_both_nodes(ray_cluster, notes(), "row_shard")


def test_a_sharded_snapshot_built_and_searched_over_two_nodes(ray_cluster, tmp_path, monkeypatch):
    """Shards built as Ray tasks on both nodes (the fingerprint of the same build here), then searched by a shard
    actor on each node: ``Snapshot.search``, ``search_many``, Search-R1's ``/retrieve`` and WikiQA-v0's search tool
    (environments on pool actors, whose searches reach the shard actors) answer as the unsharded build of the rows."""
    from fastapi.testclient import TestClient

    from stillweb.corpora.build.in_shards import build_rows_in_shards
    from stillweb.corpora.search.shard_actors import serve_shards, stop_shards
    from stillweb.corpora.snapshot.reading import Snapshot
    from stillweb.server.app import make_app
    from support.sharded import search_pages, zipf_queries, zipf_rows

    rows = zipf_rows(tmp_path / "rows.jsonl", 1500)
    one = Snapshot.open(build_rows([rows], tmp_path / "one", workers=1, progress=False).path)
    here = build_rows_in_shards([rows], tmp_path / "here", 2, workers=1, progress=False)
    notes = ray_work_log(monkeypatch, tmp_path / "notes")
    sharded = build_rows_in_shards([rows], tmp_path / "sharded", 2, workers=1, progress=False, on_ray=True)
    assert sharded.manifest["fingerprint"] == here.manifest["fingerprint"]
    ran_on_both_nodes(ray_cluster, notes(), "shard_build")
    here = Snapshot.open(sharded.path)  # before the actors start: every shard searched in this process
    actors = serve_shards(sharded.path, actors=2, actor_options={"num_cpus": 0.25})
    tasks = [{"task_id": f"t{n}", "question": f"Which topic has the word t{n}x1?", "answer": f"Topic {n}",
              "evidence_docs": [5 * n]} for n in range(0, 300, 60)]
    env_kwargs = {"snapshot": str(sharded.path), "tasks": tasks, "max_turns": 4}
    pool = EnvPool(ENV_ID, 2, envs_per_actor=1, env_kwargs=env_kwargs, actor_options={"num_cpus": 0.25})
    try:
        assert len({ray.get(actor.describe.remote())["node_id"] for actor in actors}) == 2
        snapshot = Snapshot.open(sharded.path)
        assert type(snapshot._index).__name__ == "ShardedIndex"  # through the actors, not this process's shards
        queries = zipf_queries(1500, 60)
        searched = len([note for note in notes() if note["what"] == "shard_search"])
        assert search_pages(snapshot, queries) == search_pages(here, queries)  # as by_tantivy(one): test_sharded_snapshot
        assert snapshot.search_many(queries, 5) == here.search_many(queries, 5, workers=1)
        request = {"queries": queries[:20], "topk": 3}  # the documents (scores: float32 sums in another order)
        served = TestClient(make_app([sharded.path])).post("/retrieve", json=request).json()
        assert served == TestClient(make_app([one.path])).post("/retrieve", json=request).json()
        assert len([note for note in notes() if note["what"] == "shard_search"]) >= searched + len(queries) * 2 + 2
        resets = [("reset", seed, {"task_id": f"t{60 * seed}"}) for seed in range(2)]
        search = '<tool_call>{"name": "search", "arguments": {"query": "t60x1 w3"}}</tool_call>'
        in_process = [gym.make(ENV_ID, **env_kwargs) for _ in range(2)]
        expected = [canonical_json([env.reset(seed=seed, options=options) for env, (_, seed, options) in zip(in_process, resets)]),
                    canonical_json([env.step(search) for env in in_process])]
        before_pool = len([note for note in notes() if note["what"] == "shard_search"])
        assert [canonical_json(pool.run(resets)), canonical_json(pool.run([("step", search)] * 2))] == expected
        assert len([note for note in notes() if note["what"] == "shard_search"]) >= before_pool + 2
    finally:
        pool.close()
        assert stop_shards(sharded.path) == 2
