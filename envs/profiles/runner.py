"""Play k episodes per task with a policy, in parallel, appending each result as it finishes.

The episodes of a profile go to ``<task set>/profile/<policy>.episodes.jsonl``: a
header line (policy, environment settings, the limits each split's episodes ran under,
task set, snapshot fingerprint), then one
line per finished episode (its actions, turns, ending, outcome and reward, or the
``failure`` reason when the policy gave no action). A killed run loses at most the
episodes in flight: the next run reads the file, skips the episodes already done
(a failed episode is tried again) and appends the rest. Workers are forked
processes (``workers``) or Ray tasks (``on_ray``); results are written by the
driver only, so the file never interleaves.

Unless ``env_kwargs`` sets them, the limits are the environment's own defaults for the
task set (``max_turns`` 1.5x the p99 of the reference agent's steps,
:mod:`stillweb.envs.core.turn_budget`), so a profile measures the policy, not a turn cap.

Stored actions make episodes re-scorable: :func:`replay_actions` re-plays them
(the environment is deterministic) under another reward config.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import multiprocessing
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.processes import ignore_interrupts
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.store.files import task_set_dir
from stillweb.envs.agents.loop import PolicyFailure, play_episode as play
from stillweb.envs.profiles.players import PolicySpec, make_player, sample_seed
from stillweb.corpora.canonical import canonical_json
from stillweb.envs.wikiqa.env import WikiQAEnv

BATCH = 4  # episodes per worker task: small, so results stream to the file as they finish

__all__ = ["EpisodeJob", "ProfileRun", "episode_limits", "episodes_path", "play_policy", "read_episodes", "replay_actions",
           "run_episodes"]


@dataclass(frozen=True)
class EpisodeJob:
    """One episode to play: a task of a split, and which of its k samples."""

    task_id: str
    split: str
    sample: int

    @property
    def episode_id(self) -> str:
        """``<task_id>#<sample>``: unique within a profile."""
        return f"{self.task_id}#{self.sample}"


@dataclass(frozen=True)
class ProfileRun:
    """What a profile plays: the snapshot, its task set, the policy and the environment's settings."""

    snapshot: str
    task_set: str
    policy: PolicySpec
    k: int = 8
    splits: tuple[str, ...] = SPLITS
    env_kwargs: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.k < 1:
            raise UsageError(f"k must be at least 1, got {self.k}")
        unknown = sorted(set(self.splits) - set(SPLITS))
        if unknown:
            raise UsageError(f"unknown splits {unknown}; expected some of {SPLITS}")

    @property
    def tool_format(self) -> str:
        """The environment's call format (the agents write in it)."""
        return str(dict(self.env_kwargs or {}).get("tool_format", "tongyi"))

    def header(self, fingerprint: str, limits: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        """The first line of the episodes file (what must match for a run to resume it); ``limits``: each
        split's :func:`episode_limits`."""
        return {"type": "header", "task_set": self.task_set, "snapshot_fingerprint": fingerprint,
                "policy": self.policy.record(), "env_kwargs": dict(self.env_kwargs or {}),
                "limits": {split: dict(limits[split]) for split in sorted(limits)}}

    def make_env(self, split: str) -> WikiQAEnv:
        """The environment playing ``split``'s tasks."""
        return WikiQAEnv(self.snapshot, self.task_set, split, **dict(self.env_kwargs or {}))


def episodes_path(snapshot: str | Path, task_set: str, policy_name: str) -> Path:
    """Where a profile's episodes are appended."""
    return task_set_dir(snapshot, task_set) / "profile" / f"{policy_name}.episodes.jsonl"


def read_episodes(path: Path) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """(header, latest record per episode id) of an episodes file; a torn last line (a kill) is ignored."""
    if not path.exists():
        return None, {}
    header, records = None, {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # the line a kill cut short; its episode is played again
            if record.get("type") == "header":
                header = record
            elif record.get("type") == "episode":
                records[record["episode_id"]] = record
    return header, records


def episode_limits(env: WikiQAEnv, env_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The limits ``env``'s episodes run under, and whether they are the task set's defaults or explicit."""
    explicit = "max_turns" in dict(env_kwargs or {})
    return {**dataclasses.asdict(env.limits), "source": "explicit" if explicit else "task set"}


def run_episodes(run: ProfileRun, workers: int = 1, on_ray: bool = False) -> Path:
    """Play every episode of ``run`` not yet done; returns the episodes file."""
    envs = _split_envs(run)
    if not envs:
        raise UsageError(f"task set {run.task_set!r} has no tasks in the splits {list(run.splits)}: "
                         "pick other splits (--split) or generate tasks")
    fingerprint = next(iter(envs.values())).snapshot.fingerprint
    jobs = [EpisodeJob(task.task_id, split, sample) for split, env in envs.items() for task in env.tasks
            for sample in range(run.k)]
    path = episodes_path(run.snapshot, run.task_set, run.policy.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    header, done = read_episodes(path)
    expected = run.header(fingerprint, {split: episode_limits(env, run.env_kwargs) for split, env in envs.items()})
    if header is not None and {**header, "reward": None} != {**expected, "reward": None}:  # reverify sets "reward"
        raise UsageError(f"{path} holds a profile with other settings ({_difference(header, expected)}): "
                         "use another policy name, or delete the file to start over")
    todo = [job for job in jobs if job.episode_id not in done or done[job.episode_id].get("failure")]
    _truncate_torn_line(path)
    with path.open("a", encoding="utf-8") as out:
        if header is None:
            out.write(canonical_json(expected) + "\n")
        for record in _play_all(run, todo, workers, on_ray):
            out.write(canonical_json(record) + "\n")
            out.flush()
    return path


def _split_envs(run: ProfileRun) -> dict[str, WikiQAEnv]:
    """An environment per split of ``run`` that has tasks (a set may have an empty dev or test split)."""
    envs = {}
    for split in run.splits:
        try:
            envs[split] = _env(run, split)
        except ValueError as error:
            if "no tasks" not in str(error):
                raise
    return envs


def _play_all(run: ProfileRun, jobs: list[EpisodeJob], workers: int, on_ray: bool) -> Iterator[dict[str, Any]]:
    """Records of ``jobs`` as they finish (in job order on one worker)."""
    if not jobs:
        return
    batches = [jobs[start:start + BATCH] for start in range(0, len(jobs), BATCH)]
    if on_ray:
        yield from _play_on_ray(run, batches)
    elif workers <= 1:
        for job in jobs:
            yield profile_episode(_env(run, job.split), run, job)
    else:
        # leaving the block (also at Ctrl-C or an error) terminates the workers; they ignore SIGINT themselves
        with multiprocessing.get_context("fork").Pool(workers, initializer=ignore_interrupts) as pool:
            for records in pool.imap_unordered(functools.partial(play_batch, run), batches):
                yield from records


def _play_on_ray(run: ProfileRun, batches: list[list[EpisodeJob]]) -> Iterator[dict[str, Any]]:
    import ray

    remote = ray.remote(num_cpus=1)(play_batch)
    pending = [remote.remote(run, batch) for batch in batches]
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        yield from ray.get(done[0])


def play_batch(run: ProfileRun, jobs: Iterable[EpisodeJob]) -> list[dict[str, Any]]:
    """Play ``jobs`` in this process; their records."""
    return [profile_episode(_env(run, job.split), run, job) for job in jobs]


_ENVS: dict[tuple[str, str], WikiQAEnv] = {}  # per process: a worker plays many batches of one run


def _env(run: ProfileRun, split: str) -> WikiQAEnv:
    """This process's environment for ``split`` of ``run`` (made once; forked workers inherit the driver's)."""
    key = _env_key(run, split)
    if key not in _ENVS:
        _ENVS[key] = run.make_env(split)
    return _ENVS[key]


def _env_key(run: ProfileRun, split: str) -> tuple[str, str]:
    return canonical_json({"snapshot": run.snapshot, "task_set": run.task_set, "env": dict(run.env_kwargs or {})}), split


def profile_episode(env: WikiQAEnv, run: ProfileRun, job: EpisodeJob) -> dict[str, Any]:
    """One episode's record (played by :func:`~stillweb.envs.agents.loop.play_episode`); a policy that gives
    no action ends it with ``failure`` set."""
    seed = sample_seed(job.task_id, job.sample)
    actions, terminated, truncated, info, failure = play_policy(env, run.policy, env.tasks.by_id(job.task_id), seed,
                                                                run.tool_format)
    record = {"type": "episode", "episode_id": job.episode_id, "task_id": job.task_id, "split": job.split,
              "sample": job.sample, "seed": seed, "actions": actions, "failure": failure}
    return {**record, **episode_outcome(len(actions), terminated, truncated, info)}


def play_policy(env: Any, policy: PolicySpec, task: Any, seed: int,
                tool_format: str) -> tuple[list[str], bool, bool, dict[str, Any], str | None]:
    """Play ``task`` in ``env`` (reset with ``seed``) with ``policy`` through the one episode loop: (actions,
    terminated, truncated, the last info, the failure reason when the policy gave no action)."""
    played = play(env, policy=make_player(policy, task, seed, tool_format), seed=seed, options={"task_id": task.task_id})
    return played.actions, played.terminated, played.truncated, played.info, played.failure


def episode_outcome(turns: int, terminated: bool, truncated: bool, info: Mapping[str, Any]) -> dict[str, Any]:
    """The scored fields of an episode record, from its last step's info."""
    return {"turns": turns, "terminated": terminated, "truncated": truncated,
            "outcome": float(info.get("outcome", 0.0)), "reward": float(info.get("reward_parts", {}).get("total", 0.0)),
            "ending": info.get("termination_reason") or info.get("truncation_reason")}


def replay_actions(env: WikiQAEnv, record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` re-scored: its actions re-played in ``env`` (whose reward config may differ)."""
    actions = iter(record["actions"])

    def recorded(_observation: str, _info: Mapping[str, Any]) -> str:
        action = next(actions, None)
        if action is None:
            raise PolicyFailure("the recorded actions ran out")
        return action

    played = play(env, policy=recorded, seed=record["seed"], options={"task_id": record["task_id"]})
    return {**record, **episode_outcome(len(record["actions"]), played.terminated, played.truncated, played.info)}


def _truncate_torn_line(path: Path) -> None:
    """Cut a last line a kill left without its newline, so appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def _difference(stored: Mapping[str, Any], expected: Mapping[str, Any]) -> str:
    keys = sorted(key for key in set(stored) | set(expected) if stored.get(key) != expected.get(key))
    return ", ".join(f"{key}: stored {stored.get(key)!r}, now {expected.get(key)!r}" for key in keys)
