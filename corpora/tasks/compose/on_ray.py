"""Task-generation attempts on Ray actors (``stillweb tasks generate --ray``; needs ``stillweb[ray]``).

Each actor (an :class:`~stillweb.corpora.tasks.compose.attempts.AttemptWorker`) opens the
snapshot by path and builds its own fact graph once (as a local worker process
does), then computes batches of attempts; the driver consumes the batches
strictly in index order, so the task set is byte-identical to a local run. ``ray`` is imported when generation starts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from stillweb.corpora.tasks.compose.attempts import Attempt, AttemptWorker, GenerationParams

__all__ = ["attempt_batches_on_ray"]


def attempt_batches_on_ray(snapshot: str | Path, params: GenerationParams, batches: Sequence[range],
                           actors: int | None = None) -> Iterator[list[Attempt]]:
    """The results of ``batches`` in order, computed by ``actors`` actors (default: the cluster's CPUs)."""
    import ray
    from ray.util import ActorPool

    if not isinstance(snapshot, (str, Path)):
        raise TypeError("attempts on Ray open the snapshot by path: pass the snapshot directory, not a loaded world")
    if not ray.is_initialized():
        ray.init()  # joins the cluster of RAY_ADDRESS / `ray start`, or starts a local one
    count = actors or max(1, int(ray.cluster_resources().get("CPU", 1)))
    handles = [ray.remote(AttemptWorker).options(num_cpus=1, scheduling_strategy="SPREAD").remote(str(snapshot), params)
               for _ in range(count)]
    try:
        yield from ActorPool(handles).map(lambda actor, indexes: actor.run.remote(indexes), batches)
    finally:
        for handle in handles:
            ray.kill(handle)
