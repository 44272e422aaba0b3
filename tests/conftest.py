"""Shared test fixtures: small snapshots built once per session, and the real data folder.

Tests that read ``../shared/data`` take the ``shared_data`` fixture (or carry the
``shared_data`` marker). They skip where the folder is absent, except when
``STILLWEB_REQUIRE_SHARED_DATA=1`` (set by ``.ci/run``): then a skip of such a
test is reported as a failure, so CI cannot pass by quietly not testing on
real data.

Tests of an optional extra (``stillweb[ray]``...) carry the ``extra`` marker and
``pytest.importorskip`` the library: they skip where the extra is not installed,
except when ``STILLWEB_REQUIRE_EXTRAS=1`` (set by ``.ci/run``), where such a
skip, or any module skipped at collection, is a failure. Tests of the bubblewrap
sandbox carry the ``sandbox`` marker: a failure instead of a skip under
``STILLWEB_REQUIRE_SANDBOX=1``. These switches live in the plugin
:mod:`support.require`; ``pytester`` runs pytest on tiny modules to test them.

Ray tests share one local runtime (``ray_runtime``: 2 CPUs, 127.0.0.1, no dashboard),
kept from one Ray test module to the next when nothing else runs in between; the two-node
tests (tests/envs/on_ray/test_ray_cluster.py) start a ``ray.cluster_utils.Cluster`` of their own.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.paths import RAY_TEST_ENVIRONMENT, SHARED_DATA, WIKI_SAMPLE  # noqa: F401 - WIKI_SAMPLE re-exported

# Before anything imports ray: ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER once, at import. With it 0 a driver's
# ray.init(address="127.0.0.1:PORT") dials 127.0.0.1; with ray's Linux default it swaps the loopback address for
# this machine's network address (ray.util.get_node_ip_address()), where a cluster bound to 127.0.0.1 does not listen,
# and retries for ever in Node._init_gcs_client (ray issue #59110 for `ray start --address`).
os.environ.update(RAY_TEST_ENVIRONMENT)

# pytest-xdist (the README's -n auto) runs a worker per core; torch and OpenBLAS would also spread each operation over
# every core, and on busy cores those threads wait on each other at every one (a GRPO step took twice the CPU time
# and several times the wall time). Each worker gets its share of the cores, read by the libraries at their import.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))

# A shell without job control (a CI script's `cmd &`, `nohup cmd &`) starts background jobs with SIGINT ignored, and an
# ignored signal stays ignored through fork and exec: the commands the Ctrl-C tests interrupt would never see their
# SIGINT. A handler, unlike SIG_IGN, is reset to the default at exec, so the commands start as at a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from stillweb.corpora.snapshot.reading import Snapshot  # noqa: E402
from support.tiny_world import build_tiny_world, chain_task, simple_tasks  # noqa: E402

pytest_plugins = ["pytester", "support.require", "support.xdist_groups"]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real test data (``../shared/data``); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real test data not found at {SHARED_DATA}")
    return SHARED_DATA


_RAY_STAYS_UP: set[str] = set()  # node ids of the tests after which the local Ray runtime is kept


@pytest.fixture(scope="module")
def ray_runtime():
    """A local Ray runtime: 2 CPUs, bound to 127.0.0.1, no dashboard. Started by the first module that asks
    for it and kept while the next test to run is in a module that uses it too (Ray start-up is ~5 s);
    shut down before any other module's tests run (:func:`pytest_runtest_teardown`)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False,
                 object_store_memory=200 * 2**20, log_to_driver=False, configure_logging=False)
    return ray


@pytest.hookimpl(trylast=True)  # after -m/-k deselection
def pytest_collection_modifyitems(items):
    """Note the tests after which Ray stays up: those whose next running test is in a ``ray_runtime`` module, or in the
    same module as they are when that module uses ``ray_cluster`` (whose driver connects once per module)."""
    runtime_modules = {item.path for item in items if "ray_runtime" in getattr(item, "fixturenames", ())}
    cluster_modules = {item.path for item in items if "ray_cluster" in getattr(item, "fixturenames", ())}
    following = None  # the module of the next test that runs (tests skipped unconditionally do not count)
    for item in reversed(items):
        if following in runtime_modules or (following == item.path and following in cluster_modules):
            _RAY_STAYS_UP.add(item.nodeid)
        if not _skipped_unconditionally(item):
            following = item.path


def _skipped_unconditionally(item) -> bool:
    return any(mark.name == "skip" or (mark.name == "skipif" and mark.args and mark.args[0] is True)
               for mark in item.iter_markers())


@pytest.hookimpl(trylast=True)  # after the test's fixtures are torn down
def pytest_runtest_teardown(item, nextitem):
    """Shut Ray down unless the next test to run keeps it (:func:`pytest_collection_modifyitems`)."""
    ray = sys.modules.get("ray")
    if item.nodeid not in _RAY_STAYS_UP and ray is not None and ray.is_initialized():
        ray.shutdown()


@pytest.fixture(scope="session")
def small_snapshot(tmp_path_factory) -> Path:
    """Path to a 300-article synthetic snapshot (seed 0), built once per session."""
    from stillweb.corpora.build.from_source import build_synthetic

    out = tmp_path_factory.mktemp("snapshots") / "synthetic-300-s0"
    build_synthetic(300, 0, out, workers=1, progress=False)
    return out


@pytest.fixture(scope="session")
def wiki_snapshot(tmp_path_factory, shared_data) -> Path:
    """Path to a snapshot of the real 2016 Wikipedia sample, built once per session."""
    from stillweb.corpora.build.from_source import build_wikipedia

    out = tmp_path_factory.mktemp("snapshots") / "enwiki-sample"
    build_wikipedia(shared_data / WIKI_SAMPLE, out, workers=1, progress=False)
    return out


@pytest.fixture(scope="session")
def tasks_snapshot(small_snapshot, tmp_path_factory) -> Path:
    """A copy of ``small_snapshot`` with a generated task set ``hard`` (20 tasks: the generator fills every split from 20 on), built once per session."""
    from support.snapshots import snapshot_with_tasks

    return snapshot_with_tasks(small_snapshot, tmp_path_factory.mktemp("tasks-snapshot") / "snap", "hard", count=20)


@pytest.fixture(scope="session")
def small_server_url(small_snapshot) -> Iterator[str]:
    """A ``stillweb`` server process over ``small_snapshot``, started once per session (its URL)."""
    from support.network import served

    with served([small_snapshot]) as url:
        yield url


@pytest.fixture(scope="session")
def live_http() -> Iterator[str]:
    """The changing HTTP search API of the frozen-tool tests (``support.live_services``), started once per session (its URL)."""
    from support.live_services import start
    from support.network import serving

    with serving(lambda port: start("http", port)) as url:
        yield url


@pytest.fixture(scope="session")
def reference_trace():
    """``trace(snapshot, tasks, task_id)``: the reference agent's episode in-process (openai format):
    a list of ``(tool name, arguments, observation, reward, info)``, one per step (default limits)."""
    from stillweb.envs import ReferenceAgent, WikiQAEnv
    from stillweb.sandboxes.formats import get_format

    def trace(snapshot, tasks, task_id, split="train", max_turns=None):
        env = WikiQAEnv(snapshot, tasks, split, tool_format="openai", max_calls_per_turn=1, max_turns=max_turns,
                        tools=["search", "open", "find", "calculator", "answer"])
        observation, info = env.reset(options={"task_id": task_id})
        agent = ReferenceAgent(env.tasks.by_id(task_id), tool_format="openai")
        parser, steps, done = get_format("openai"), [], False
        while not done:
            action = agent.act(observation)
            parsed = parser.parse(action)
            if parsed.answer is not None:
                name, arguments = "answer", {"text": parsed.answer, "citations": parsed.citations}
            else:
                name, arguments = parsed.calls[0].name, parsed.calls[0].arguments
            observation, reward, terminated, truncated, info = env.step(action)
            steps.append((name, arguments, observation, reward, info))
            done = terminated or truncated
        return steps

    return trace


@pytest.fixture(scope="session")
def tiny_world(tmp_path_factory) -> Path:
    """Path of the tiny world snapshot."""
    return build_tiny_world(tmp_path_factory.mktemp("env") / "tiny")


@pytest.fixture(scope="session")
def world_tasks(tiny_world) -> list[dict]:
    """The chain task followed by the simple ones."""
    return [chain_task(Snapshot.open(tiny_world))] + simple_tasks()


@pytest.fixture(scope="session")
def apps_snapshot(small_snapshot, tmp_path_factory) -> Path:
    """A copy of ``small_snapshot`` with the app task set ``core`` (72 tasks, 40 users), built once per session."""
    import shutil

    from stillweb.corpora.apps.tasks import generate_app_tasks

    path = tmp_path_factory.mktemp("apps-snapshot") / "snap"
    shutil.copytree(small_snapshot, path)
    generate_app_tasks(path, "core", 72)
    return path
