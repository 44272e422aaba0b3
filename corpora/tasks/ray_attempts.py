"""Task-generation attempts on Ray actors (``stillweb tasks generate --ray``; needs ``stillweb[ray]``).

Each actor opens the snapshot by path and builds its own fact graph once (as a
local worker process does), then computes batches of attempts; the driver
consumes the batches strictly in index order, so the task set is
byte-identical to a local run. ``ray`` is imported when generation starts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from stillweb.corpora.tasks.generate import GenerationParams, _init_worker, _run_batch

__all__ = ["attempt_batches_on_ray"]


class AttemptActor:
    """One process's fact graph and the attempts it computes (a Ray actor)."""

    def __init__(self, snapshot: str, params: GenerationParams) -> None:
        _init_worker(snapshot, params)

    def run(self, indexes: range) -> list:
        """(index, record, reason) for each attempt of ``indexes``."""
        return _run_batch(indexes)


def attempt_batches_on_ray(snapshot: str | Path, params: GenerationParams, batches: Sequence[range],
                           actors: int | None = None) -> Iterator[list]:
    """The results of ``batches`` in order, computed by ``actors`` actors (default: the cluster's CPUs)."""
    import ray
    from ray.util import ActorPool

    if not isinstance(snapshot, (str, Path)):
        raise TypeError("attempts on Ray open the snapshot by path: pass the snapshot directory, not a loaded world")
    if not ray.is_initialized():
        ray.init()  # joins the cluster of RAY_ADDRESS / `ray start`, or starts a local one
    count = actors or max(1, int(ray.cluster_resources().get("CPU", 1)))
    handles = [ray.remote(AttemptActor).options(num_cpus=1, scheduling_strategy="SPREAD").remote(str(snapshot), params)
               for _ in range(count)]
    try:
        yield from ActorPool(handles).map(lambda actor, indexes: actor.run.remote(indexes), batches)
    finally:
        for handle in handles:
            ray.kill(handle)
