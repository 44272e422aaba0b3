"""OpenEnv: ``stillweb/WikiQA-v0`` as an OpenEnv ``Environment``, its server app and its client.

OpenEnv (``openenv-core`` 0.3) environments implement ``reset``/``step``/``state``
over pydantic ``Action``/``Observation``/``State`` models; ``create_app`` serves
them (HTTP and a WebSocket session per client), and an ``EnvClient`` subclass
steps them. :class:`StillwebEnvironment` is a
:class:`~stillweb.envs.wikiqa.env.WikiQAEnv` behind that contract: the action is the
policy's text (parsed in the env's ``tool_format``), the observation carries the
env's text, reward, ``terminated``/``truncated`` and ``info`` (without the
message history), so a client sees what the in-process env returns.

Serve (one env per WebSocket session)::

    from stillweb.envs.integrations.openenv import create_app
    app = create_app("snap/", tasks="default")          # uvicorn app, e.g. uvicorn.run(app, port=8000)

Step::

    from stillweb.envs.integrations.openenv import StillwebAction, StillwebEnvClient
    with StillwebEnvClient(base_url="http://127.0.0.1:8000").sync() as client:
        result = client.reset(task_id="sw-...")         # or seed=0
        result = client.step(StillwebAction(text='<tool_call>{"name": "search", ...}</tool_call>'))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app as openenv_create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from stillweb.envs.core.task_loader import TaskSource
from stillweb.envs.integrations.episode import text_env

__all__ = ["StillwebAction", "StillwebObservation", "StillwebState", "StillwebEnvironment", "StillwebEnvClient", "create_app"]


class StillwebAction(Action):
    """The policy's text for one turn (tool calls or the answer, in the env's ``tool_format``)."""

    text: str = Field(description="The policy's text: tool calls or the final answer")


class StillwebObservation(Observation):
    """What the env returned: the prompt (on reset) or the tools' results, and the step's outcome."""

    text: str = Field(default="", description="The env's observation text")
    task_id: str = Field(default="", description="The episode's task id")
    terminated: bool = Field(default=False, description="The agent answered (or broke the format too often)")
    truncated: bool = Field(default=False, description="A limit stopped the episode (mask it from the loss)")
    info: dict[str, Any] = Field(default_factory=dict, description="The env's info, without the message history")


class StillwebState(State):
    """The episode in progress: task, turn and tool-call counts, snapshot fingerprint."""

    task_id: str | None = None
    tool_calls: int = 0
    snapshot_fingerprint: str = ""


class StillwebEnvironment(Environment[StillwebAction, StillwebObservation, StillwebState]):
    """A registered text environment (``env_id``, default ``stillweb/WikiQA-v0``; :func:`~stillweb.envs.integrations.episode.text_env`)
    as an OpenEnv environment; ``env_kwargs`` are its arguments."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session gets its own instance; the snapshot is read-only

    def __init__(self, snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train", **env_kwargs: Any) -> None:
        super().__init__()
        self.env = text_env(snapshot, tasks, split, **env_kwargs)  # any registered TextEnv: env_id in env_kwargs
        self._state = StillwebState(snapshot_fingerprint=_data_fingerprint(self.env))

    def reset(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None,
              **kwargs: Any) -> StillwebObservation:
        """Start the episode of ``task_id`` (or the seed's task); the observation text is the prompt."""
        text, info = self.env.reset(seed=seed, options={"task_id": task_id} if task_id else None)
        self._state = StillwebState(episode_id=episode_id, task_id=info["task_id"],
                                    snapshot_fingerprint=info.get("snapshot_fingerprint", self._state.snapshot_fingerprint))
        return _observation(text, 0.0, False, False, info)

    def step(self, action: StillwebAction, timeout_s: float | None = None, **kwargs: Any) -> StillwebObservation:
        """One env step with the action's text."""
        if self.env._episode is None or self.env._episode.done:
            raise RuntimeError("step() before reset() or after the episode ended: reset first")
        text, reward, terminated, truncated, info = self.env.step(action.text)
        self._state.step_count += 1
        self._state.tool_calls = info["tool_calls"]
        return _observation(text, float(reward), terminated, truncated, info)

    @property
    def state(self) -> StillwebState:
        """The episode in progress."""
        return self._state

    def close(self) -> None:
        """Close the underlying env."""
        self.env.close()


class StillwebEnvClient(EnvClient[StillwebAction, StillwebObservation, StillwebState]):
    """OpenEnv client of a :func:`create_app` server (``.sync()`` for blocking calls)."""

    def _step_payload(self, action: StillwebAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[StillwebObservation]:
        observation = StillwebObservation(**payload.get("observation", {}), reward=payload.get("reward"),
                                          done=payload.get("done", False))
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> StillwebState:
        return StillwebState(**payload)


def create_app(snapshot: str | Path, tasks: TaskSource | None = None, split: str = "train",
               max_concurrent_envs: int = 64, **env_kwargs: Any):
    """The OpenEnv FastAPI app serving :class:`StillwebEnvironment` (one instance per WebSocket session)."""
    StillwebEnvironment(snapshot, tasks, split, **env_kwargs)  # fail now, naming the problem, not per session

    def factory() -> StillwebEnvironment:
        return StillwebEnvironment(snapshot, tasks, split, **env_kwargs)

    return openenv_create_app(factory, StillwebAction, StillwebObservation, env_name="stillweb",
                              max_concurrent_envs=max_concurrent_envs)


def _data_fingerprint(env: Any) -> str:
    """What the env's tasks come from: its snapshot's fingerprint, else its own ``data_fingerprint`` (BFCL-v0:
    the bfcl-eval package), else empty."""
    snapshot = getattr(env, "snapshot", None)
    return snapshot.fingerprint if snapshot is not None else str(getattr(env, "data_fingerprint", ""))


def _observation(text: str, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]) -> StillwebObservation:
    return StillwebObservation(text=text, reward=reward, done=bool(terminated or truncated), task_id=info["task_id"],
                               terminated=bool(terminated), truncated=bool(truncated),
                               info={key: value for key, value in info.items() if key != "messages"})
