"""Gymnasium environments over corpus snapshots; importing this package registers them.

- ``stillweb/WikiQA-v0`` (:class:`WikiQAEnv`): multi-turn deep research with tools.
- ``stillweb/Lookup-v0`` (:class:`LookupEnv`): single-turn sanity task.
- ``stillweb/Apps-v0`` (:class:`~stillweb.envs.apps.env.AppsEnv`): stateful app APIs, checked by the final state.
- ``stillweb/BFCL-v0`` (:class:`~stillweb.envs.bfcl.env.BfclEnv`): BFCL's multi-turn tasks, rewarded by BFCL's checker.
- ``stillweb/Mixture-v0`` (:class:`~stillweb.envs.mixture.MixtureEnv`): a seeded, weighted mixture of the others.
- ``stillweb/Remote-v0`` (:class:`~stillweb.envs.remote.RemoteEnv`): either of them served over HTTP.

>>> import gymnasium as gym, stillweb.envs
>>> "stillweb/WikiQA-v0" in gym.registry and "stillweb/Lookup-v0" in gym.registry
True
"""

from gymnasium.envs.registration import register, registry

from stillweb.envs.agents.loop import PlayedEpisode, play_episode, run_episode
from stillweb.envs.agents.scripted import RandomTextAgent, ReferenceAgent
from stillweb.envs.core.context import ContextConfig, ContextManager
from stillweb.envs.core.degenerate import ActionChecks
from stillweb.envs.runs.health import HealthConfig, HealthMonitor, VectorHealthMonitor
from stillweb.envs.lookup import LookupEnv
from stillweb.envs.mixture import MixtureEnv
from stillweb.envs.runs.recording import RecordEpisodes, replay
from stillweb.envs.scoring.rewards import RewardConfig
from stillweb.envs.core.task_loader import Task, load_tasks
from stillweb.envs.wikiqa.env import WikiQAEnv

__all__ = [
    "ActionChecks",
    "ContextConfig",
    "ContextManager",
    "HealthConfig",
    "HealthMonitor",
    "LookupEnv",
    "MixtureEnv",
    "PlayedEpisode",
    "RandomTextAgent",
    "RecordEpisodes",
    "ReferenceAgent",
    "RewardConfig",
    "Task",
    "VectorHealthMonitor",
    "WikiQAEnv",
    "load_tasks",
    "play_episode",
    "replay",
    "run_episode",
]

for _env_id, _entry_point in (
    ("stillweb/WikiQA-v0", "stillweb.envs.wikiqa.env:WikiQAEnv"),
    ("stillweb/Lookup-v0", "stillweb.envs.lookup:LookupEnv"),
    ("stillweb/Remote-v0", "stillweb.envs.remote:RemoteEnv"),
    ("stillweb/Apps-v0", "stillweb.envs.apps.env:AppsEnv"),
    ("stillweb/Mixture-v0", "stillweb.envs.mixture:MixtureEnv"),
    ("stillweb/BFCL-v0", "stillweb.envs.bfcl.env:BfclEnv"),
):
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry_point, disable_env_checker=True)
