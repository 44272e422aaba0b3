"""verifiers: a stillweb task set as verifiers' OpenEnv taskset (``verifiers.v1.tasksets.openenv``).

verifiers 0.4 (the ``v1`` API) ships an OpenEnv bridge: ``OpenEnvTaskset`` yields one
task per set of ``reset`` arguments, and ``OpenEnvEnv.run`` plays it against an
OpenEnv server (``base_url``): it fetches the action schema from ``/schema``, turns
each model reply into an action with ``parse_action`` (for stillweb's one-field
``StillwebAction`` the raw reply becomes ``{"text": reply}``), steps the server's
``GenericEnvClient`` and records the summed step rewards as ``openenv_reward``.
:func:`openenv_taskset` builds that taskset for a stillweb task set, one task per
task id, against a :func:`stillweb.envs.integrations.openenv.create_app` server, so
the reward is the environment's own. Use a text format (``tongyi``, the default, or
``search_r1``) on the server: a JSON reply would be read as an action object.

>>> taskset = openenv_taskset("http://127.0.0.1:8000", "snap/", "default", split="train")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from verifiers.v1.tasksets.openenv import OpenEnvConfig, OpenEnvTaskset

from stillweb.envs.integrations.episode import text_env
from stillweb.envs.core.task_loader import TaskSource

__all__ = ["openenv_config", "openenv_taskset"]


def openenv_config(base_url: str, snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train",
                   limit: int | None = None, env_id: str = "stillweb/WikiQA-v0") -> OpenEnvConfig:
    """verifiers' ``OpenEnvConfig``: ``base_url`` and one ``{"task_id": ...}`` reset per task (the first ``limit``);
    ``env_id`` is the server's environment (any registered text environment)."""
    task_ids = [task.task_id for task in text_env(snapshot, tasks, split, env_id).tasks][:limit]  # the env's own resolution
    return OpenEnvConfig(id="openenv", base_url=base_url, resets=[{"task_id": task_id} for task_id in task_ids])


def openenv_taskset(base_url: str, snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train",
                    limit: int | None = None, env_id: str = "stillweb/WikiQA-v0") -> OpenEnvTaskset:
    """verifiers' ``OpenEnvTaskset`` over a stillweb OpenEnv server (see the module docstring)."""
    return OpenEnvTaskset(openenv_config(base_url, snapshot, tasks, split, limit, env_id))
