"""The floor policies of ``stillweb check`` and the episode loop it plays them with.

A floor is a policy that must not earn the reward: ``do_nothing`` (an empty action every turn),
``text_only`` (a plain answer at once, no tool), ``random_calls`` (valid calls with random arguments,
drawn from the tools' JSON schemas by blake2b keyed by task and step, then an answer made of a word of
the last observation). Every policy is a pure function of (task, step, observation).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from stillweb.corpora.keyed import KeyedRng
from stillweb.sandboxes.formats import get_format

__all__ = ["FLOORS", "PlayedSteps", "StepRecord", "play", "floor_policy", "random_arguments", "TEXT_ANSWER"]

FLOORS = ("do_nothing", "text_only", "random_calls")
TEXT_ANSWER = "I do not know"
RANDOM_CALLS = 3  # random calls before the random answer
_GUESS_WORD = re.compile(r"[A-Za-z0-9]{3,}")

Policy = Callable[[str, int], str]  # (observation, step index) -> action


@dataclass(frozen=True)
class StepRecord:
    """One step as the check saw it (step 0 is the reset: no action, no reward)."""

    step: int
    action: str | None
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    seconds: float = 0.0


@dataclass
class PlayedSteps:
    """One episode of one task: its steps (the reset first) and whether it ended within the step cap."""

    task_id: str
    steps: list[StepRecord] = field(default_factory=list)
    ended: bool = False
    error: str | None = None

    @property
    def reward(self) -> float:
        """The episode's return."""
        return sum(step.reward for step in self.steps)


def play(env: gym.Env, label: str, options: dict[str, Any], seed: int, policy: Policy, max_steps: int) -> PlayedSteps:
    """Reset ``env`` with ``seed`` and ``options`` (the episode ``label``) and step ``policy`` until the episode
    ends or ``max_steps``; an exception a step raises ends the episode with ``error`` set (the check names it)."""
    played = PlayedSteps(label)
    observation, info = env.reset(seed=seed, options=dict(options))
    played.steps.append(StepRecord(0, None, observation, 0.0, False, False, dict(info)))
    for index in range(1, max_steps + 1):
        action = policy(observation, index)
        start = time.perf_counter()
        try:
            observation, reward, terminated, truncated, info = env.step(action)
        except Exception as error:  # noqa: BLE001 - a check reports what the environment raised
            played.error = f"{type(error).__name__}: {str(error)[:300]}"
            return played
        seconds = time.perf_counter() - start
        played.steps.append(StepRecord(index, action, observation, float(reward), bool(terminated), bool(truncated),
                                       dict(info), seconds))
        if terminated or truncated:
            played.ended = True
            break
    return played


def floor_policy(name: str, env: gym.Env, task_id: str, schemas: list[dict[str, Any]]) -> Policy:
    """The floor policy ``name`` for one episode of ``task_id``."""
    call_format = _format(env)
    if name == "do_nothing":
        return lambda observation, step: ""
    if name == "text_only":
        return lambda observation, step: call_format.write_answer(TEXT_ANSWER, [])

    def random_call(observation: str, step: int) -> str:
        """A random valid call (keyed by task and step); after a few, an answer guessed from the observation."""
        rng = KeyedRng(0, "check", "random_calls", task_id, step)
        if step > RANDOM_CALLS or not schemas:
            words = _GUESS_WORD.findall(observation[-2000:]) or ["nothing"]
            return call_format.write_answer(rng.choice(words), [])
        schema = rng.choice(schemas)
        return call_format.write_call(schema["name"], random_arguments(schema.get("parameters") or {}, rng))

    return random_call


def reference_policy(agent: Any) -> Policy:
    """A policy from an agent with ``act(observation)``."""
    return lambda observation, step: agent.act(observation)


def random_arguments(schema: Mapping[str, Any], rng: KeyedRng) -> dict[str, Any]:
    """Arguments valid for an object ``schema``: every required property, each optional one half the time.

    >>> random_arguments({"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "maximum": 3}},
    ...                   "required": ["a"]}, KeyedRng(0, "doc"))["a"] in (1, 2, 3)
    True
    """
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    return {name: _value(properties[name], rng) for name in sorted(properties)
            if name in required or rng.chance(0.5)}


def _value(schema: Mapping[str, Any], rng: KeyedRng) -> Any:
    if "enum" in schema:
        return rng.choice(list(schema["enum"]))
    if "anyOf" in schema or "oneOf" in schema:
        return _value(rng.choice(list(schema.get("anyOf") or schema["oneOf"])), rng)
    kind = schema.get("type", "string")
    kind = rng.choice(kind) if isinstance(kind, list) else kind
    if kind == "integer" or kind == "number":
        low, high = int(schema.get("minimum", 0)), int(schema.get("maximum", 100))
        return rng.integer(low, max(low, high))
    if kind == "boolean":
        return rng.chance(0.5)
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1)
        return [_value(schema.get("items") or {}, rng) for _ in range(count)]
    if kind == "object":
        return random_arguments(schema, rng)
    words = ["alpha", "river", "1900", "city", "north", "paper"]
    text = " ".join(rng.choice(words) for _ in range(rng.integer(1, 3)))
    return text[: int(schema.get("maxLength", 500))] or "a"


def _format(env: gym.Env) -> Any:
    """The environment's call format (tongyi when it names none)."""
    call_format = getattr(env.unwrapped, "format", None)
    return call_format if hasattr(call_format, "write_call") else get_format("tongyi")


def canonical_step(step: StepRecord) -> str:
    """A step as canonical text for hashing (``info["messages"]`` left out: implied by the observations)."""
    info = {key: value for key, value in step.info.items() if key not in ("messages", "messages_kept")}
    return json.dumps([step.step, step.action, step.observation, step.reward, step.terminated, step.truncated, info],
                      sort_keys=True, default=str, ensure_ascii=True)
