"""Difficulty profiles of a task set under a policy (NeMo-Gym's ``profile``/``reverify``, verifiers' pass@k).

- :func:`profile_tasks`: play k episodes per task (:mod:`.runner`, resumable, forked workers
  or Ray) and write ``<task set>/profile/<policy>.parquet`` (:mod:`.table`).
- :func:`~.table.filter_by_pass_rate`: a new task set of the tasks in a pass-rate band
  (:func:`~.table.truncation_warning` when the profile's limits cut the reference agent short).
- :func:`~.table.reverify`: re-score the stored episodes under another reward config.
- :class:`~.players.PolicySpec`: an OpenAI-compatible endpoint, or the reference/random agent.

>>> from stillweb.envs.profiles import PolicySpec, ProfileRun, profile_tasks  # doctest: +SKIP
>>> profile_tasks(ProfileRun("snap/", "hard", PolicySpec("reference", "reference"), k=4), workers=2)  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from stillweb.envs.profiles.passk import mean_pass_rates, pass_hat_k
from stillweb.envs.profiles.players import AGENTS, PolicySpec, sample_seed
from stillweb.envs.profiles.runner import ProfileRun, episodes_path, read_episodes, run_episodes
from stillweb.envs.profiles.table import filter_by_pass_rate, parse_band, profile_path, read_profile, reference_truncations, reverify, truncation_warning, write_profile
from stillweb.envs.profiles.passk import pass_at_k

__all__ = ["AGENTS", "PolicySpec", "ProfileRun", "episodes_path", "filter_by_pass_rate", "mean_pass_rates", "parse_band", "pass_at_k",
           "pass_hat_k",
           "profile_path", "profile_tasks", "read_episodes", "read_profile", "reference_truncations", "reverify",
           "sample_seed", "truncation_warning", "write_profile"]


def profile_tasks(run: ProfileRun, workers: int = 1, on_ray: bool = False) -> Path:
    """Play the episodes of ``run`` not yet played and write its profile; returns the profile's path."""
    run_episodes(run, workers=workers, on_ray=on_ray)
    return write_profile(run.snapshot, run.task_set, run.policy.name, run.k)
