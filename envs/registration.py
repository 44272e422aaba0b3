"""The environments' Gymnasium ids, registered on import (entry points are strings: nothing is imported).

This is the one list of environments: to add one, add its id and entry point to :data:`ENTRY_POINTS`.
The server's sessions (every id but ``Remote-v0``), Mixture-v0, the trainer adapters (every id whose class
is a :class:`~stillweb.envs.core.episode.TextEnv`), ``/openapi.json`` and the docs' lists (checked by
tests/test_registries.py) read it.

Any module that makes an environment by id imports this module at its top
(``import stillweb.envs.registration``) instead of ``import stillweb.envs`` inside a
function: it imports no environment, so it closes no import cycle.

>>> import gymnasium as gym
>>> all(env_id in gym.registry for env_id in ENV_IDS)
True
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

__all__ = ["ENTRY_POINTS", "ENV_IDS", "MIXTURE_ENV_ID", "REMOTE_ENV_ID", "SERVED_ENV_IDS"]

REMOTE_ENV_ID = "stillweb/Remote-v0"
MIXTURE_ENV_ID = "stillweb/Mixture-v0"

ENTRY_POINTS = {
    "stillweb/WikiQA-v0": "stillweb.envs.wikiqa.env:WikiQAEnv",
    "stillweb/Lookup-v0": "stillweb.envs.lookup:LookupEnv",
    REMOTE_ENV_ID: "stillweb.envs.remote:RemoteEnv",
    "stillweb/Apps-v0": "stillweb.envs.apps.env:AppsEnv",
    MIXTURE_ENV_ID: "stillweb.envs.mixture:MixtureEnv",
    "stillweb/BFCL-v0": "stillweb.envs.bfcl.env:BfclEnv",
}
ENV_IDS = tuple(ENTRY_POINTS)
SERVED_ENV_IDS = tuple(sorted(env_id for env_id in ENV_IDS if env_id != REMOTE_ENV_ID))  # Remote-v0 is a server's client

for _env_id, _entry_point in ENTRY_POINTS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry_point, disable_env_checker=True)
