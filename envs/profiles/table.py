"""Difficulty profiles: per-task pass rates from a profile's episodes; filtering and re-scoring.

:func:`write_profile` sums a profile's episodes up per task into
``<task set>/profile/<policy>.parquet`` (sorted by task id): episodes played and
failed, passes, pass@1, pass@k (the unbiased estimator of Chen et al. 2021, "Evaluating
Large Language Models Trained on Code"), pass^k (tau-bench's reliability: all k tries pass,
:mod:`~stillweb.envs.profiles.passk`), mean turns and the truncation share, with the
policy's name, the endpoint's model id and the sampling settings on every row, and the
``max_turns`` the task's episodes ran under beside the reference agent's steps on it. An
episode passes when the agent answered and the outcome is 1; an episode whose policy
gave no action (``failure``) is not counted in the rates (it says nothing about the
task), only in ``failed_episodes``.

:func:`filter_by_pass_rate` keeps the tasks whose pass@1 lies in a band (DAPO's dynamic
sampling drops groups whose rewards are all 0 or all 1: such tasks waste rollouts) and
writes them as a new task set with its card; :func:`reference_truncations` names the
profiled tasks whose limit was below the reference agent's steps (their pass@1 measures the
turn cap, not the policy: ``tasks filter`` warns, and the card says so). :func:`reverify` re-plays the stored
actions under a reward config and rewrites the profile with the new scores.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.store.quality import format_task_stats, task_set_stats
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.canonical import canonical_json
from stillweb.corpora.tasks.store.files import read_tasks, task_set_dir, write_task_set
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.profiles.passk import pass_at_k, pass_hat_k
from stillweb.envs.profiles.runner import episodes_path, read_episodes, replay_actions
from stillweb.envs.core.turn_budget import reference_steps
from stillweb.envs.scoring.rewards import RewardConfig
from stillweb.envs.wikiqa.env import WikiQAEnv

__all__ = ["PROFILE_SCHEMA", "profile_path", "task_row", "write_profile", "read_profile", "filter_by_pass_rate", "reference_truncations", "reverify", "parse_band", "truncation_warning"]

PROFILE_SCHEMA = pa.schema([
    ("task_id", pa.string()), ("split", pa.string()), ("episodes", pa.int32()), ("failed_episodes", pa.int32()),
    ("passes", pa.int32()), ("pass_at_1", pa.float64()), ("k", pa.int32()), ("pass_at_k", pa.float64()),
    ("pass_hat_k", pa.float64()),
    ("mean_turns", pa.float64()), ("truncation_share", pa.float64()), ("max_turns", pa.int32()),
    ("reference_steps", pa.int32()), ("policy", pa.string()),
    ("model", pa.string()), ("sampling", pa.string()), ("snapshot_fingerprint", pa.string()),
])


def profile_path(snapshot: str | Path, task_set: str, policy_name: str) -> Path:
    """``<task set>/profile/<policy>.parquet``."""
    return task_set_dir(snapshot, task_set) / "profile" / f"{policy_name}.parquet"


def write_profile(snapshot: str | Path, task_set: str, policy_name: str, k: int) -> Path:
    """Sum the episodes file up per task (samples ``0..k-1``) into the profile parquet; returns its path."""
    header, records = read_episodes(episodes_path(snapshot, task_set, policy_name))
    if header is None:
        raise FileNotFoundError(f"no episodes of policy {policy_name!r} for task set {task_set!r} "
                                f"(run stillweb tasks profile first)")
    policy = header["policy"]
    by_task: dict[str, list[dict[str, Any]]] = {}
    for record in records.values():
        if record["sample"] < k:
            by_task.setdefault(record["task_id"], []).append(record)
    steps = {task.task_id: reference_steps(task) for split in SPLITS for task in _read_split(snapshot, task_set, split)}
    turns = _max_turns_by_split(header)
    rows = [{**task_row(task_id, episodes, k, policy, header["snapshot_fingerprint"]),
             "max_turns": turns(episodes[0]["split"]), "reference_steps": steps.get(task_id)}
            for task_id, episodes in sorted(by_task.items())]
    table = pa.Table.from_pylist(rows, schema=PROFILE_SCHEMA).replace_schema_metadata(
        {"stillweb.profile": canonical_json({"policy": policy, "env_kwargs": header["env_kwargs"],
                                              "limits": header.get("limits"), "k": k, "task_set": task_set,
                                              "package_version": PACKAGE_VERSION})})
    path = profile_path(snapshot, task_set, policy_name)
    staging = path.with_suffix(".parquet.tmp")
    pq.write_table(table, staging, compression="zstd")
    os.replace(staging, path)
    return path


def task_row(task_id: str, episodes: list[dict[str, Any]], k: int, policy: Mapping[str, Any],
             fingerprint: str) -> dict[str, Any]:
    """One task's profile row (without ``max_turns`` and ``reference_steps``) from its episode records."""
    played = [episode for episode in episodes if not episode.get("failure")]
    passes = sum(1 for episode in played if episode["terminated"] and episode["outcome"] >= 1.0)
    n = len(played)
    return {
        "task_id": task_id, "split": episodes[0]["split"], "episodes": n, "failed_episodes": len(episodes) - n,
        "passes": passes, "pass_at_1": passes / n if n else None, "k": k,
        "pass_at_k": pass_at_k(n, passes, k) if n else None, "pass_hat_k": pass_hat_k(n, passes, k) if n else None,
        "mean_turns": sum(episode["turns"] for episode in played) / n if n else None,
        "truncation_share": sum(1 for episode in played if episode["truncated"]) / n if n else None,
        "policy": policy["name"], "model": policy.get("model"),
        "sampling": json.dumps(policy.get("sampling"), sort_keys=True), "snapshot_fingerprint": fingerprint,
    }


def _max_turns_by_split(header: Mapping[str, Any]):
    """``split -> max_turns`` of a profile's episodes (``None``: not known). A profile made before the limits
    were recorded has them only in its ``env_kwargs`` when they were explicit."""
    limits = header.get("limits") or {}
    explicit = header["env_kwargs"].get("max_turns")
    return lambda split: limits[split]["max_turns"] if split in limits else explicit


def reference_truncations(rows: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The profile rows whose ``max_turns`` is below the reference agent's steps on the task."""
    return [row for row in rows if row.get("max_turns") is not None and row.get("reference_steps") is not None
            and row["reference_steps"] > row["max_turns"]]


def truncation_warning(policy_name: str, rows: list[Mapping[str, Any]]) -> str | None:
    """One sentence naming how many tasks, and the worst, a profile's limits truncate the reference agent on."""
    short = reference_truncations(rows)
    if not short:
        return None
    worst = max(short, key=lambda row: (row["reference_steps"] - row["max_turns"], row["task_id"]))
    return (f"profile {policy_name!r} ran with max_turns below the reference agent's steps on {len(short)} of "
            f"{len(rows)} tasks (e.g. {worst['task_id']}: {worst['reference_steps']} steps, max_turns "
            f"{worst['max_turns']}): their pass@1 measures the turn cap, not the policy; profile again without "
            f"--max-turns (the task set's own limits)")


def read_profile(snapshot: str | Path, task_set: str, policy_name: str) -> list[dict[str, Any]]:
    """The rows of a profile (``FileNotFoundError`` naming the profiles that exist)."""
    path = profile_path(snapshot, task_set, policy_name)
    if not path.exists():
        found = sorted(p.stem for p in path.parent.glob("*.parquet")) if path.parent.is_dir() else []
        raise FileNotFoundError(f"no profile {policy_name!r} of task set {task_set!r} ({path}); "
                                f"profiles there: {found or 'none'}")
    return pq.read_table(path).to_pylist()


def parse_band(text: str) -> tuple[float, float]:
    """``"0.1:0.9"`` -> ``(0.1, 0.9)`` (``ValueError`` naming the bad value).

    >>> parse_band("0.1:0.9")
    (0.1, 0.9)
    """
    try:
        low, high = (float(part) for part in text.split(":"))
    except ValueError:
        raise UsageError(f"bad pass-rate band {text!r}: expected LOW:HIGH, e.g. 0.1:0.9") from None
    if not 0.0 <= low <= high <= 1.0:
        raise UsageError(f"bad pass-rate band {text!r}: need 0 <= LOW <= HIGH <= 1")
    return low, high


def filter_by_pass_rate(snapshot: str | Path, task_set: str, policy_name: str, band: tuple[float, float],
                        out_name: str) -> tuple[Path, int, int]:
    """Write the tasks of ``task_set`` whose pass@1 is in ``band`` as task set ``out_name``;
    returns (its directory, tasks kept, tasks profiled)."""
    if out_name == task_set:
        raise UsageError(f"the filtered set needs a new name, not {task_set!r}")
    rows = {row["task_id"]: row for row in read_profile(snapshot, task_set, policy_name)}
    tasks = [task for split in SPLITS for task in _read_split(snapshot, task_set, split)]
    low, high = band
    kept = [task for task in tasks if task.task_id in rows and rows[task.task_id]["pass_at_1"] is not None
            and low <= rows[task.task_id]["pass_at_1"] <= high]
    if not kept:
        raise UsageError(f"no task of {task_set!r} has pass@1 in [{low}, {high}] under {policy_name!r} "
                         f"({len(rows)} tasks profiled)")
    card = _filter_card(out_name, task_set, policy_name, band, kept, rows)
    path = write_task_set(snapshot, out_name, kept, lambda directory: (directory / "card.md").write_text(card, encoding="utf-8"))
    return path, len(kept), len(rows)


def _read_split(snapshot: str | Path, task_set: str, split: str) -> list[TaskRecord]:
    try:
        return read_tasks(snapshot, task_set, split)
    except FileNotFoundError:
        return []


def _filter_card(name: str, source: str, policy_name: str, band: tuple[float, float], kept: list[TaskRecord],
                 rows: Mapping[str, Mapping[str, Any]]) -> str:
    first = next(iter(rows.values()))
    rates = [rows[task.task_id]["pass_at_1"] for task in kept]
    histogram = {f"{bucket / 10:.1f}": sum(1 for rate in rates if min(int(rate * 10), 9) == bucket) for bucket in range(10)}
    splits = {split: sum(1 for task in kept if task.split == split) for split in SPLITS}
    lines = [
        f"# Task set `{name}`", "",
        f"- stillweb version: {PACKAGE_VERSION}",
        f"- snapshot fingerprint: `{first['snapshot_fingerprint']}`",
        f"- filtered from task set `{source}`: {len(kept)} of {len(rows)} profiled tasks kept",
        f"- difficulty band: pass@1 in [{band[0]}, {band[1]}] under policy `{policy_name}` "
        f"(model `{first['model']}`, sampling `{first['sampling']}`, k={first['k']})",
        f"- splits: {', '.join(f'{split}={count}' for split, count in splits.items())}",
        f"- pass@1 of the kept tasks by tenth: `{json.dumps(histogram)}`",
        *([f"- warning: {warning}"] if (warning := truncation_warning(policy_name, list(rows.values()))) else []),
        "",
        "## Quality figures", "",
        *format_task_stats(task_set_stats(kept)),
    ]
    return "\n".join(lines) + "\n"


def reverify(snapshot: str | Path, task_set: str, policy_name: str, k: int,
             reward: RewardConfig | Mapping[str, Any] | None = None) -> tuple[Path, int, int]:
    """Re-score the stored episodes under ``reward`` (default: the default config), rewrite the episodes
    file and the profile; returns (profile path, episodes re-scored, episodes whose reward changed)."""
    path = episodes_path(snapshot, task_set, policy_name)
    header, records = read_episodes(path)
    if header is None:
        raise FileNotFoundError(f"no episodes of policy {policy_name!r} for task set {task_set!r} in {path}")
    config = RewardConfig.from_value(reward)
    env_kwargs = {**header["env_kwargs"], "reward": config}
    envs: dict[str, WikiQAEnv] = {}
    rescored, changed = [], 0
    for episode_id in sorted(records):
        record = records[episode_id]
        if record.get("failure"):
            rescored.append(record)
            continue
        split = record["split"]
        env = envs.get(split) or envs.setdefault(split, WikiQAEnv(snapshot, task_set, split, **env_kwargs))
        new = replay_actions(env, record)
        changed += (new["reward"], new["outcome"]) != (record["reward"], record["outcome"])
        rescored.append(new)
    staging = path.with_suffix(".jsonl.tmp")
    lines = [canonical_json({**header, "reward": config})] + [canonical_json(record) for record in rescored]
    staging.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(staging, path)
    played = sum(1 for record in rescored if not record.get("failure"))
    return write_profile(snapshot, task_set, policy_name, k), played, changed
