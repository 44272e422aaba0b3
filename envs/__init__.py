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

import stillweb.envs.registration  # noqa: F401 - registers the environments' ids
from stillweb.envs.agents.loop import PlayedEpisode, play_episode, run_episode
from stillweb.envs.agents.scripted import RandomTextAgent, ReferenceAgent
from stillweb.envs.core.context import ContextConfig, ContextManager
from stillweb.envs.core.degenerate import ActionChecks
from stillweb.envs.runs.health import HealthConfig, HealthMonitor, VectorHealthMonitor
from stillweb.envs.lookup import LookupEnv
from stillweb.envs.mixture import MixtureEnv
from stillweb.envs.runs.recording import RecordEpisodes, replay
from stillweb.envs.scoring.rewards import RewardConfig
from stillweb.envs.core.task_loader import load_tasks
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
    "VectorHealthMonitor",
    "WikiQAEnv",
    "load_tasks",
    "play_episode",
    "replay",
    "run_episode",
]
