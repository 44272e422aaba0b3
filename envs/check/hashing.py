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

from stillweb.envs.check.policies import canonical_step, floor_policy, play, reference_policy
from stillweb.envs.check.target import EnvTarget, reference_factory, tool_schemas

__all__ = ["episode_hashes", "hashes_in_subprocess", "PROCESS_SETTINGS"]

PROCESS_SETTINGS = ({"PYTHONHASHSEED": "0", "TZ": "UTC"}, {"PYTHONHASHSEED": "4242", "TZ": "Pacific/Chatham"})


def episode_hashes(target: EnvTarget, task_ids: list[str], max_steps: int) -> dict[str, list[str]]:
    """``task_id -> [hash of each step]`` (the reset first) of one episode per task."""
    env = target.make()
    tasks = {task.task_id: task for task in env.unwrapped.tasks}
    factory = reference_factory(env, target.env_id)
    schemas = tool_schemas(env)
    hashes = {}
    for seed, task_id in enumerate(task_ids):
        policy = (reference_policy(factory(tasks[task_id])) if factory is not None
                  else floor_policy("random_calls", env, task_id, schemas))
        played = play(env, task_id, seed, policy, max_steps)
        hashes[task_id] = [hashlib.sha256(canonical_step(step).encode()).hexdigest() for step in played.steps]
        if played.error:
            hashes[task_id].append(f"error: {played.error}")
    env.close()
    return hashes


def hashes_in_subprocess(target: EnvTarget, task_ids: list[str], max_steps: int, settings: dict[str, str]) -> Any:
    """:func:`episode_hashes` in a fresh interpreter with ``settings`` in its environment; the error text
    when the subprocess fails."""
    environment = {**os.environ, **settings,
                   "PYTHONPATH": os.pathsep.join([*target.paths, *(path for path in sys.path if path)])}
    done = subprocess.run([sys.executable, "-m", "stillweb.envs.check.hashing", target.as_json(), json.dumps(task_ids),
                           str(max_steps)], capture_output=True, text=True, env=environment, timeout=600)
    if done.returncode != 0:
        return f"the subprocess failed ({done.returncode}): {done.stderr.strip()[-500:]}"
    return json.loads(done.stdout)


if __name__ == "__main__":
    sys.stdout.write(json.dumps(episode_hashes(EnvTarget.from_json(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]))))
