"""Run as a script: on a two-node ``ray.cluster_utils.Cluster`` (127.0.0.1), a row corpus built in
shards (JSON-lines byte ranges, parquet row groups) equals the local build; prints the fingerprint.

A script, not a pytest fixture: on this shared machine ``ray.init(address=cluster.address)`` hung
inside pytest (``Node._init_gcs_client``) while the same setup in a plain process connects.
Usage: ``python tests/support/ray_cluster_rows.py WORKDIR``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.paths import RAY_TEST_ENVIRONMENT  # noqa: E402

os.environ.update(RAY_TEST_ENVIRONMENT)

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from stillweb.corpora import ray_build  # noqa: E402
from stillweb.corpora.build_from_source import build_rows  # noqa: E402
from support.ray_env import row_corpus, same_snapshot  # noqa: E402

NODE = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 100 * 2**20}


def main(workdir: Path) -> None:
    """Build the corpus locally and on the two-node cluster; assert the snapshots are the same."""
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    cluster.add_node(**NODE)
    ray.init(address=cluster.address, _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
    try:
        assert len([node for node in ray.nodes() if node["Alive"]]) == 2
        ray_build.SHARD_BYTES = 8 << 10
        inputs = row_corpus(workdir / "rows")
        local = build_rows(inputs, workdir / "local", progress=False)
        sharded = build_rows(inputs, workdir / "sharded", progress=False, on_ray=True)
        same_snapshot(local, sharded)
        print(f"same snapshot {local.manifest['fingerprint']} rows {local.manifest['counts']['rows']['written']}")
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
