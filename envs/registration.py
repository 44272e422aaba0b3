"""The environments' Gymnasium ids, registered on import (entry points are strings: nothing is imported).

Any module that makes an environment by id imports this module at its top
(``import stillweb.envs.registration``) instead of ``import stillweb.envs`` inside a
function: it imports no environment, so it closes no import cycle.

>>> import gymnasium as gym
>>> all(env_id in gym.registry for env_id in ENV_IDS)
True
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

__all__ = ["ENTRY_POINTS", "ENV_IDS"]

ENTRY_POINTS = {
    "stillweb/WikiQA-v0": "stillweb.envs.wikiqa.env:WikiQAEnv",
    "stillweb/Lookup-v0": "stillweb.envs.lookup:LookupEnv",
    "stillweb/Remote-v0": "stillweb.envs.remote:RemoteEnv",
    "stillweb/Apps-v0": "stillweb.envs.apps.env:AppsEnv",
    "stillweb/Mixture-v0": "stillweb.envs.mixture:MixtureEnv",
    "stillweb/BFCL-v0": "stillweb.envs.bfcl.env:BfclEnv",
}
ENV_IDS = tuple(ENTRY_POINTS)

for _env_id, _entry_point in ENTRY_POINTS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry_point, disable_env_checker=True)
