"""stillweb on Ray (the ``stillweb[ray]`` extra): environment pools, a vector env over them,
and async rollouts into a trajectory buffer.

- :class:`EnvPool`: environments on actors, batched reset/step, async refs, replay after faults.
- :class:`RayVectorEnv`: a ``gymnasium.vector.VectorEnv`` over a pool.
- :class:`RolloutService`, :class:`TrajectoryBuffer`: rLLM-style async rollouts, with a
  :class:`ScriptedPolicy`, an :class:`HttpPolicy` or a :class:`ChatPolicy` (OpenAI-compatible endpoint).

Nothing outside this subpackage (and the lazily imported Ray build/generation helpers)
imports ``ray``; ``import stillweb.envs`` does not.
"""

from stillweb.envs.agents.chat_policy import ChatPolicy
from stillweb.envs.ray.buffer import Trajectory, TrajectoryBuffer
from stillweb.envs.ray.pool import EnvPool, EnvPoolActor
from stillweb.envs.ray.policies import HttpPolicy, ScriptedPolicy
from stillweb.envs.ray.rollouts import EpisodeSpec, RolloutService, RolloutWorker
from stillweb.envs.ray.vector import RayVectorEnv

__all__ = [
    "ChatPolicy",
    "EnvPool",
    "EnvPoolActor",
    "EpisodeSpec",
    "HttpPolicy",
    "RayVectorEnv",
    "RolloutService",
    "RolloutWorker",
    "ScriptedPolicy",
    "Trajectory",
    "TrajectoryBuffer",
]
