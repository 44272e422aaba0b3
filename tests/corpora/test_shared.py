"""One snapshot cache per process (corpora.snapshot.shared): the task world, the environments and the verifier's
environments share one opened snapshot; a snapshot replaced at its path is opened anew."""

from __future__ import annotations

import os

from stillweb.corpora.snapshot.shared import shared_open, shared_snapshot
from stillweb.corpora.tasks.task_world import open_world
from stillweb.envs import WikiQAEnv
from stillweb.envs.wikiqa.solvability import ReferenceSolver


def test_one_opened_snapshot_for_the_world_and_the_environments(tiny_world, world_tasks):
    snapshot = shared_snapshot(tiny_world)
    assert open_world(tiny_world).snapshot is snapshot
    assert WikiQAEnv(str(tiny_world), world_tasks).snapshot is snapshot
    solver = ReferenceSolver(tiny_world)
    assert solver.solve(world_tasks[0]).solved  # the chain task
    env = solver.env
    results = [solver.solve(task) for task in world_tasks[1:]]  # other budgets (no evidence): the same env
    assert [result.task_id for result in results] == [task["task_id"] for task in world_tasks[1:]]
    assert solver.env is env and env.snapshot is snapshot


def test_a_replaced_snapshot_is_opened_again(tiny_world):
    before = shared_snapshot(tiny_world)
    manifest = tiny_world / "manifest.json"
    stat = manifest.stat()
    os.utime(manifest, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    after = shared_snapshot(tiny_world)
    assert after is not before and after.fingerprint == before.fingerprint
    assert shared_snapshot(tiny_world) is after


def test_any_opener_is_cached_by_resolved_path(tmp_path):
    opened = []
    def opener(path):
        opened.append(path)
        return object()
    assert shared_open(opener, tmp_path) is shared_open(opener, tmp_path / "." ) and len(opened) == 1


def test_the_replaced_one_is_closed(tmp_path):
    """A rebuilt snapshot's old opening stops its search workers (``close``) rather than leaking them."""
    class Opened:
        closed = False

        def close(self):
            self.closed = True

    stamp = tmp_path / "manifest.json"
    stamp.write_text("{}")
    def opener(path):
        return Opened()

    first = shared_open(opener, tmp_path, "manifest.json")
    os.utime(stamp, ns=(stamp.stat().st_atime_ns, stamp.stat().st_mtime_ns + 1_000_000_000))
    second = shared_open(opener, tmp_path, "manifest.json")
    assert second is not first and first.closed and not second.closed
