"""SkyRL-gym: ``stillweb/WikiQA-v0`` as a registered ``BaseTextEnv`` (``skyrl_gym.make("stillweb-wikiqa", ...)``).

SkyRL-gym (0.4) environments are text in, messages out: ``init(prompt)``
returns the first prompt and metadata, ``step(action)`` returns a
``BaseTextEnvStepOutput`` (``observations`` as chat messages, ``reward``,
``done``, ``metadata``). :class:`StillwebTextEnv` is a
:class:`~stillweb.envs.wikiqa.env.WikiQAEnv` behind that interface: the action text
is parsed in the env's ``tool_format``, the observation is the env's own text
(as a ``user`` message), and the reward is the env's.

``env_config`` holds the :class:`WikiQAEnv` arguments (``snapshot`` required;
``tasks``, ``split``, ``tool_format``, ``max_turns``, ``reward``, ...); ``extras``
(SkyRL-train passes the dataset row's env extras) names the task:
``extras["task_id"]`` or ``extras["extra_info"]["task_id"]`` (as the verl
export writes it), else ``extras["seed"]`` picks one. ``env_config["env_id"]`` plays
``stillweb/Apps-v0`` or ``stillweb/Mixture-v0`` instead (its other keys are that env's kwargs).

>>> import skyrl_gym, stillweb.envs.integrations.skyrl  # registers "stillweb-wikiqa"  # doctest: +SKIP
>>> env = skyrl_gym.make("stillweb-wikiqa", env_config={"snapshot": "snap/", "tasks": "default"},
...                      extras={"task_id": "sw-..."})  # doctest: +SKIP
>>> prompt, metadata = env.init([])                  # doctest: +SKIP
>>> out = env.step('<tool_call>{"name": "search", "arguments": {"query": "..."}}</tool_call>')  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType
from skyrl_gym.envs.registration import register, registry

from stillweb.corpora.errors import UsageError
from stillweb.envs.integrations.episode import text_env
from stillweb.envs.mixture import MixtureEnv
from stillweb.envs.registration import MIXTURE_ENV_ID

__all__ = ["SKYRL_ENV_ID", "StillwebTextEnv", "register_skyrl_env"]

SKYRL_ENV_ID = "stillweb-wikiqa"


class StillwebTextEnv(BaseTextEnv):
    """An episode of a registered text environment (``env_id`` in ``env_config``, default ``stillweb/WikiQA-v0``;
    :func:`~stillweb.envs.integrations.episode.text_env`) as a SkyRL-gym text environment."""

    def __init__(self, env_config: Mapping[str, Any] | Any, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        settings = _plain(env_config)
        if "snapshot" not in settings:
            raise UsageError(f"env_config needs 'snapshot' (the snapshot directory); got keys {sorted(settings)}")
        if settings.get("env_id") == MIXTURE_ENV_ID:  # several registered envs, picked per reset from the seed
            self.env = MixtureEnv(**{key: value for key, value in settings.items() if key != "env_id"})
        else:
            self.env = text_env(**settings)  # any registered TextEnv: env_id in env_config
        self.max_turns = self.env.limits.max_turns if hasattr(self.env, "limits") else self.env.max_turns
        self.extras = _plain(extras or {})
        self.info: dict[str, Any] = {}

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Reset to the task named by ``extras``; returns the env's prompt (system and question) and metadata.

        The incoming ``prompt`` is replaced by the env's own, whose system text
        describes the tools in the env's ``tool_format``.
        """
        task_id = self.extras.get("task_id") or _plain(self.extras.get("extra_info") or {}).get("task_id")
        options = {"task_id": task_id} if task_id else None
        observation, self.info = self.env.reset(seed=self.extras.get("seed"), options=options)
        return list(self.info.get("messages") or [{"role": "user", "content": observation}]), _metadata(self.info)

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One env step: the observation as a ``user`` message (none once done), the env's reward."""
        observation, reward, terminated, truncated, self.info = self.env.step(action)
        self.turns += 1
        done = bool(terminated or truncated)
        observations = [] if done else [{"role": "user", "content": observation}]
        return BaseTextEnvStepOutput(observations=observations, reward=float(reward), done=done,
                                     metadata=_metadata(self.info), postprocessed_action=None)

    def get_metrics(self) -> dict[str, Any]:
        """Per-episode metrics: the reward parts once the episode ended."""
        parts = self.info.get("reward_parts") or {}
        return {key: value for key, value in parts.items() if isinstance(value, (int, float)) and not isinstance(value, bool)}

    def close(self) -> None:
        """Close the underlying env."""
        self.env.close()


def register_skyrl_env(env_id: str = SKYRL_ENV_ID) -> str:
    """Register :class:`StillwebTextEnv` with SkyRL-gym under ``env_id`` (idempotent); returns the id."""
    if env_id not in registry:
        register(id=env_id, entry_point="stillweb.envs.integrations.skyrl:StillwebTextEnv")
    return env_id


def _metadata(info: dict[str, Any]) -> dict[str, Any]:
    """The env's info without its message delta."""
    return {key: value for key, value in info.items() if key not in ("messages", "messages_kept")}


def _plain(config: Any) -> dict[str, Any]:
    """A plain dict of a mapping or an OmegaConf ``DictConfig``."""
    if isinstance(config, Mapping):
        return dict(config)
    try:
        from omegaconf import OmegaConf
    except ImportError:  # pragma: no cover - skyrl-gym depends on omegaconf
        raise TypeError(f"env_config must be a mapping, got {type(config).__name__}") from None
    return dict(OmegaConf.to_container(config, resolve=True))


register_skyrl_env()
