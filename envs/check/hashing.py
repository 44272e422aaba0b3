"""Episode hashes for the two-process determinism check of ``stillweb check``.

:func:`episode_hashes` plays the given tasks (seed = the task's position) with the reference agent,
else the random-call floor, and hashes every step (sha256 of its canonical text). ``python -m
stillweb.envs.check.hashing TARGET_JSON TASKS_JSON MAX_STEPS`` prints them as JSON: the check runs it
twice, under different ``PYTHONHASHSEED`` and ``TZ``, and compares.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Any

from stillweb.envs.check.policies import PlayedSteps, canonical_step, floor_policy, play, reference_policy
from stillweb.envs.check.target import EnvTarget, Planned, plan_episodes, reference_factory, tool_schemas

__all__ = ["episode_hashes", "hashes_in_subprocess", "play_planned", "PROCESS_SETTINGS"]

PROCESS_SETTINGS = ({"PYTHONHASHSEED": "0", "TZ": "UTC"}, {"PYTHONHASHSEED": "4242", "TZ": "Pacific/Chatham"})


def episode_hashes(target: EnvTarget, labels: list[str], max_steps: int) -> dict[str, list[str]]:
    """``label -> [hash of each step]`` (the reset first) of one episode per planned task
    (:func:`~stillweb.envs.check.target.plan_episodes`)."""
    env = target.make()
    plan = {planned.label: planned for planned in plan_episodes(env, target.env_id)}
    hashes = {}
    for seed, label in enumerate(labels):
        played = play_planned(env, plan[label], seed, max_steps)
        hashes[label] = [hashlib.sha256(canonical_step(step).encode()).hexdigest() for step in played.steps]
        if played.error:
            hashes[label].append(f"error: {played.error}")
    env.close()
    return hashes


def play_planned(env: Any, planned: Planned, seed: int, max_steps: int, floor: str | None = None) -> PlayedSteps:
    """Play ``planned`` with the floor policy ``floor``, or (``None``) with the reference agent of the environment
    that plays it, else the random-call floor."""
    factory = reference_factory(planned.member, planned.member_id) if floor is None else None
    if factory is not None:
        policy = reference_policy(factory(planned.task))
    else:
        policy = floor_policy(floor or "random_calls", planned.member, planned.label, tool_schemas(planned.member))
    return play(env, planned.label, planned.options, seed, policy, max_steps)


def hashes_in_subprocess(target: EnvTarget, labels: list[str], max_steps: int, settings: dict[str, str]) -> Any:
    """:func:`episode_hashes` in a fresh interpreter with ``settings`` in its environment; the error text
    when the subprocess fails."""
    environment = {**os.environ, **settings,
                   "PYTHONPATH": os.pathsep.join([*target.paths, *(path for path in sys.path if path)])}
    done = subprocess.run([sys.executable, "-m", "stillweb.envs.check.hashing", target.as_json(), json.dumps(labels),
                           str(max_steps)], capture_output=True, text=True, env=environment, timeout=600)
    if done.returncode != 0:
        return f"the subprocess failed ({done.returncode}): {done.stderr.strip()[-500:]}"
    return json.loads(done.stdout)


if __name__ == "__main__":
    sys.stdout.write(json.dumps(episode_hashes(EnvTarget.from_json(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]))))
