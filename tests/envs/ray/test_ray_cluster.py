"""Like a cluster on one machine (``ray.cluster_utils.Cluster``, two simulated nodes on
127.0.0.1): pool actors spread over the nodes; a lost node's actor is restarted on the
other and replayed; a multistream dump built in shards over both nodes equals the local build
(the row corpus on two nodes: tests/corpora/test_ray_build.py)."""

from __future__ import annotations

import os

import pytest

from support.paths import RAY_TEST_ENVIRONMENT
from support.ray_env import ENV_ID, env_kwargs_for, multistream_copy, same_snapshot
from stillweb.corpora.build_from_source import build_wikipedia
from stillweb.corpora.canonical import canonical_json

ray = pytest.importorskip("ray")
# Opt-in: on this shared machine (load 15+) the driver's ray.init(address=cluster.address) inside pytest
# hung in Node._init_gcs_client twice, while the same Cluster setup in a plain script connected; until
# a green run in CI, these run only with STILLWEB_RAY_CLUSTER_TESTS=1 (see the issue 14 note).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("STILLWEB_RAY_CLUSTER_TESTS") != "1",
                       reason="Ray Cluster tests are opt-in: set STILLWEB_RAY_CLUSTER_TESTS=1"),
]

from ray.cluster_utils import Cluster  # noqa: E402

from stillweb.envs.ray import EnvPool  # noqa: E402

NODE = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 100 * 2**20}


@pytest.fixture(scope="module")
def cluster():
    os.environ.update(RAY_TEST_ENVIRONMENT)
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    cluster.add_node(**NODE)
    ray.init(address=cluster.address, _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def test_pool_actors_spread_and_survive_a_lost_node(cluster, small_snapshot):
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
        worker_node = next(node for node in cluster.worker_nodes)
        cluster.remove_node(worker_node)
        again = [("step", actions[1]), ("step", actions[0])]
        assert canonical_json(pool.run(again)) == canonical_json(local.run(again))
        assert pool.restarts == 1
    finally:
        pool.close()
        local.close()
        cluster.add_node(**NODE)
        cluster.wait_for_nodes()


def test_sharded_wikipedia_build_over_two_nodes_equals_the_local_build(cluster, shared_data, tmp_path, monkeypatch):
    monkeypatch.setattr("stillweb.corpora.ray_build.SHARD_BYTES", 64 << 10)
    dump = multistream_copy(shared_data, tmp_path)
    local = build_wikipedia(dump, tmp_path / "local", progress=False)
    sharded = build_wikipedia(dump, tmp_path / "sharded", progress=False, on_ray=True)
    same_snapshot(local, sharded)
    assert local.manifest["counts"]["docs"] > 50
