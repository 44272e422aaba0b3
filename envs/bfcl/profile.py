"""Difficulty profiles of ``BFCL-v0`` tasks: pass@k per task under a policy, in the profile table of
snapshot task sets (:mod:`stillweb.envs.profiles`: the same columns, the same pass@k), and the task
ids whose pass@1 falls in a band, to train on (``BfclEnv(tasks=...)``).

The policy is a :class:`~stillweb.envs.profiles.players.PolicySpec`: an OpenAI-compatible endpoint, the
reference agent (BFCL's ground truth) or the random-text agent. Each episode's seed is keyed by (task
id, sample), as in the other profiles, so a re-run plays the same episodes.

>>> from stillweb.envs.profiles import PolicySpec                             # doctest: +SKIP
>>> path = profile_bfcl("multi_turn_base", PolicySpec("reference", "reference"), "profiles/", k=2)  # doctest: +SKIP
>>> tasks_in_band(path, (0.2, 0.8))                                           # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.canonical import canonical_json
from stillweb.corpora.errors import UsageError
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.bfcl.env import BfclEnv
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.profiles.players import PolicySpec, sample_seed
from stillweb.envs.profiles.runner import episode_outcome, play_policy
from stillweb.envs.profiles.table import PROFILE_SCHEMA, task_row

__all__ = ["profile_bfcl", "tasks_in_band"]


def profile_bfcl(category: str, policy: PolicySpec, out: str | Path, k: int = 8, tasks: Sequence[str] | None = None,
                 **env_kwargs: Any) -> Path:
    """Play ``k`` episodes of each task of ``category`` (``tasks``: only these ids) and write the profile
    ``<out>/<category>.<policy name>.parquet``; returns its path."""
    if k < 1:
        raise UsageError(f"k must be at least 1, got {k}")
    env = BfclEnv(category, tasks=tasks, **env_kwargs)
    rows = []
    for task in env.tasks:
        episodes = [_episode(env, policy, task, sample) for sample in range(k)]
        steps = sum(len(turn) for turn in task.extra["ground_truth"]) + len(task.extra["turns"])
        rows.append({**task_row(task.task_id, episodes, k, policy.record(), env.data_fingerprint),
                     "max_turns": env.limits.max_turns, "reference_steps": steps})
    metadata = {"policy": policy.record(), "env_kwargs": dict(env_kwargs), "k": k, "task_set": f"BFCL-v0/{category}",
                "bfcl_version": env.bfcl_version, "package_version": PACKAGE_VERSION}
    table = pa.Table.from_pylist(rows, schema=PROFILE_SCHEMA).replace_schema_metadata(
        {"stillweb.profile": canonical_json(metadata)})
    path = Path(out) / f"{category}.{policy.name}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd")
    return path


def tasks_in_band(path: str | Path, band: tuple[float, float]) -> list[str]:
    """The task ids of a profile whose pass@1 is in ``band`` (inclusive), in the profile's order."""
    low, high = band
    return [row["task_id"] for row in pq.read_table(path).to_pylist()
            if row["pass_at_1"] is not None and low <= row["pass_at_1"] <= high]


def _episode(env: BfclEnv, policy: PolicySpec, task: TaskRecord, sample: int) -> dict[str, Any]:
    """One episode's record (the fields :func:`~stillweb.envs.profiles.table.task_row` reads)."""
    actions, terminated, truncated, info, failure = play_policy(env, policy, task, sample_seed(task.task_id, sample),
                                                                env.format.name)
    return {"split": "default", "sample": sample, "failure": failure,
            **episode_outcome(len(actions), terminated, truncated, info)}
