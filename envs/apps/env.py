"""``stillweb/Apps-v0``: multi-turn use of stateful app APIs, checked by the final state.

``reset`` picks an app task (from the seed, or ``options={"task_id": ...}``), gives the
episode a private SQLite copy of the seeded base world, and shows the system prompt
(the ~90 endpoints in the call format) and the first user turn. Each ``step(text)``
runs the action's calls as the task's user; answering a turn brings the scripted next
user turn (tasks have one to three); answering the last one, or abstaining, ends the
episode (*terminated*); a limit (turns, calls, context, an over-long action) *truncates*
it, with ``info["mask_from_loss"]`` as in ``WikiQA-v0``.

Every step's ``info`` carries ``state_fingerprint`` (the content of every table),
``world_time``, ``state_diff`` (the rows this step wrote: table, id, before, after),
``tool_flags``, ``action_flags`` and ``hallucination_counts`` (unknown endpoint, bad
arguments, fabricated id: a ``not_found`` id, write after answer: a write in a
follow-up turn that asked for no change). The reward is 0 until the end, then the one
outcome scorer's (:func:`~stillweb.envs.scoring.rewards.score_outcome`) with the binary check of
:mod:`stillweb.envs.apps.scoring` as the outcome (``reward``: a ``RewardConfig`` weighting F1, gamma
decay, penalties; default the outcome alone); ``info["reward_parts"]`` holds the checks, then the
scorer's parts.

>>> import gymnasium as gym, stillweb.envs  # doctest: +SKIP
>>> env = gym.make("stillweb/Apps-v0", snapshot="snap/", tasks="core")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stillweb.corpora.apps.generate import shared_base
from stillweb.corpora.apps.tasks import app_task_dir
from stillweb.corpora.errors import UsageError
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.apps.scoring import score_app_episode
from stillweb.envs.apps.prompt import ANSWER_SCHEMA, APP_INSTRUCTIONS, APP_WORDS, user_header
from stillweb.envs.core.counts import AppCounts
from stillweb.envs.scoring.rewards import JudgedScore, RewardConfig, score_outcome
from stillweb.envs.core.degenerate import ActionChecks
from stillweb.envs.core.episode import EpisodeState, StepOutcome, TextEnv, check_render_mode
from stillweb.envs.core.limits import EpisodeLimits, pop_action_cap
from stillweb.envs.core.messages import messages_info
from stillweb.corpora.snapshot.shared import shared_snapshot
from stillweb.envs.core.spaces import to_charset
from stillweb.envs.core.task_loader import TaskPicker, TaskSet, load_tasks
from stillweb.sandboxes.apps import WRITE_ENDPOINTS, AppSession, ErrorPlan, app_registry, bound
from stillweb.sandboxes.formats import get_format
from stillweb.sandboxes.tools.types import ToolCall, ToolResult

__all__ = ["AppsEnv", "APP_FORMATS"]

APP_FORMATS = ("tongyi", "openai")


@dataclass(kw_only=True)
class _Episode(EpisodeState):
    session: AppSession
    turns: int = 0
    user_turn: int = 0
    answers: list[str] = field(default_factory=list)
    counts: AppCounts = field(default_factory=AppCounts)


class AppsEnv(TextEnv):
    """Stateful app APIs over a snapshot's seeded app world (see the module docstring).

    Args:
        snapshot: the snapshot directory (its people, cities, companies and works fill the apps).
        tasks: an app task-set name (``SNAPSHOT/apps/<name>/<split>.jsonl``), a jsonl path, or task dicts.
        split: the split of a named task set.
        tool_format: ``"tongyi"`` (default) or ``"openai"`` (``search_r1`` can only search).
        error_rate: share of calls that fail transiently (429/503/timeout), keyed by
            (reset seed, task id, call index); 0 gives none beyond a recovery task's scripted ones.
        scripted_errors: keep the recovery tasks' own scripted errors (default true).
        max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens, max_format_errors, max_action_chars:
            see :class:`~stillweb.envs.core.limits.EpisodeLimits`.
        mask_truncated, actions, reward: as in ``WikiQA-v0`` (the ``abstention`` part a config weights is the
            check: the agent abstained exactly when the request cannot be done).
    """

    budget_note = "Not run: the episode's budget of {limit} calls is spent. Answer the user now."

    def __init__(self, snapshot: str | Path, tasks: str | Path | Sequence[Mapping[str, Any]] = "core", split: str = "train",
                 tool_format: str = "tongyi", error_rate: float = 0.0, scripted_errors: bool = True, max_turns: int = 24,
                 max_tool_calls: int = 64, max_calls_per_turn: int = 4, max_context_tokens: int = 65536,
                 max_format_errors: int | None = 3, mask_truncated: bool = True,
                 actions: ActionChecks | Mapping[str, Any] | None = None, render_mode: str | None = None,
                 max_action_chars: int | None = None, reward: RewardConfig | Mapping[str, Any] | None = None) -> None:
        self.render_mode = check_render_mode(render_mode)
        self.reward_config = RewardConfig.from_value(reward)
        if tool_format not in APP_FORMATS:
            raise UsageError(f"tool_format must be one of {APP_FORMATS} for Apps-v0, got {tool_format!r} "
                             "(search_r1 has only <search>, no way to call an endpoint)")
        if isinstance(error_rate, bool) or not isinstance(error_rate, (int, float)) or not 0.0 <= error_rate <= 1.0:
            raise UsageError(f"error_rate must be a number in [0, 1], got {error_rate!r}")
        self.snapshot = shared_snapshot(snapshot)
        self.tasks: TaskSet = load_tasks(_task_source(self.snapshot.path, tasks, split), self.snapshot.path, split)
        worlds = {(task.extra.get("world") or {}).get("seed", 0) for task in self.tasks}, \
            {(task.extra.get("world") or {}).get("users", 0) for task in self.tasks}
        if any(len(values) != 1 for values in worlds) or "program" not in self.tasks[0].extra:
            raise UsageError(f"the tasks of {self.tasks.source} are not app tasks of one world (each needs program, "
                             "app_user and world {seed, users}): make them with `stillweb apps generate`")
        self.world_seed, self.world_users = next(iter(worlds[0])), next(iter(worlds[1]))
        self.base = shared_base(str(self.snapshot.path.resolve()), self.world_seed, self.world_users)
        actions, action_cap = pop_action_cap(actions, max_action_chars)
        limits = EpisodeLimits(max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens, max_format_errors,
                               **action_cap)
        self.error_rate = float(error_rate)
        self.scripted_errors = scripted_errors
        self.setup_core(limits, get_format(tool_format, **limits.format_options()), actions, mask_truncated)
        self.registry = app_registry()
        self.system_prompt = self.format.system_prompt(self.registry.schemas() + [ANSWER_SCHEMA], max_calls_per_turn=max_calls_per_turn,
                                                       words=APP_WORDS)
        self._picker = TaskPicker(self.tasks, "apps")
        self._error_seed = 0
        self._episode: _Episode | None = None

    @classmethod
    def for_adapters(cls, snapshot: Any, tasks: Any, split: str, **env_kwargs: Any) -> "AppsEnv":
        """The app world for a trainer adapter: ``tasks`` an app task set (default ``"core"``); no ``tools``
        whitelist (the endpoints are the tools)."""
        env_kwargs.pop("tools", None)
        return cls(snapshot, "core" if tasks is None else tasks, split, **env_kwargs)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The endpoints' OpenAI definitions and the ``answer`` function."""
        return self.registry.schemas() + [ANSWER_SCHEMA]

    def instructions(self) -> str:
        """The app operator's instructions when the endpoints go to the model as functions (:data:`APP_INSTRUCTIONS`)."""
        return APP_INSTRUCTIONS

    # -- Gymnasium API ------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on a fresh copy of the base state (or of ``options["state_file"]``, a
        :meth:`save_state` file of this world); ``ValueError`` for an unknown task id or a bad state file."""
        super().reset(seed=seed, options=options)
        if seed is not None:
            self._error_seed = int(seed)
        task = self._picker.pick(seed, options)
        if self._episode is not None:
            self._episode.session.close()
        scripted = {int(index): kind for index, kind in (task.extra.get("errors") or {}).items()} if self.scripted_errors else {}
        plan = ErrorPlan(self._error_seed, task.task_id, self.error_rate, scripted)
        state_file = (options or {}).get("state_file")
        user = int(task.extra["app_user"])
        session = AppSession(self.base, user, plan) if state_file is None else AppSession.from_file(self.base, user, state_file, plan)
        first = f"{user_header(self.base, session.user)}\n\n{task.extra['turns'][0]}"
        messages = [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": first}]
        self.start_episode(_Episode(task=task, session=session, messages=messages,
                                    chars=len(self.system_prompt) + len(first)))
        return to_charset(f"{self.system_prompt}\n\n{first}"), self.base_info()

    def close(self) -> None:
        """Release the episode's database copy; idempotent."""
        if self._episode is not None:
            self._episode.session.close()
        self._episode = None

    def save_state(self, path: str | Path) -> Path:
        """Write the episode's database to ``path`` (``reset(options={"state_file": path})`` starts from it)."""
        path = Path(path)
        path.write_bytes(self.session.state_bytes())
        return path

    @property
    def session(self) -> AppSession:
        """The current episode's state (``RuntimeError`` before ``reset``)."""
        if self._episode is None:
            raise RuntimeError("no episode: call reset() first")
        return self._episode.session

    # -- the core's hooks ----------------------------------------------------------------

    def begin_step(self, step: StepOutcome, episode: _Episode) -> None:
        episode.turns += 1
        step.extra["journal_start"] = len(episode.session.journal)

    def on_answer(self, step: StepOutcome, episode: _Episode) -> None:
        """An answer to the last user turn (or an abstention) ends the episode; otherwise the next turn comes."""
        episode.answers.append(step.answer)
        if step.parsed.abstained or episode.user_turn + 1 >= len(episode.task.extra["turns"]):
            step.ending = ("terminated", "abstained" if step.parsed.abstained else "answered")
        else:
            episode.user_turn += 1
            step.observation = episode.task.extra["turns"][episode.user_turn]

    def run_call(self, call: ToolCall, episode: _Episode) -> ToolResult:
        """Run one endpoint as the task's user; count a write the current turn did not ask for."""
        with bound(episode.session):
            result = self.registry.call(call)
        if result.ok and call.name in WRITE_ENDPOINTS and episode.answers and not self._turn_writes(episode):
            episode.counts.write_after_answer += 1
        return result

    def turns(self, episode: _Episode) -> int:
        return episode.turns

    def tool_calls(self, episode: _Episode) -> int:
        return episode.session.calls + episode.session.waits

    def step_info(self, step: StepOutcome, episode: _Episode) -> dict[str, Any]:
        return {"tool_flags": [result.flag for result in step.results], "action_flags": list(step.flags),
                "state_diff": episode.session.journal[step.extra["journal_start"]:], "thought": step.thought}

    def end_info(self, step: StepOutcome, episode: _Episode) -> dict[str, Any]:
        return {"answer": episode.answers[-1] if episode.answers else None}

    @staticmethod
    def _turn_writes(episode: _Episode) -> bool:
        """Whether the current user turn asks for a change (its reference calls write)."""
        turn = episode.task.extra["program"][episode.user_turn]
        return any(call["name"] in WRITE_ENDPOINTS for call in turn)

    def score(self, step: StepOutcome, episode: _Episode, ending: str) -> JudgedScore:
        """The app checks, their binary outcome scored by the one outcome scorer."""
        parsed = step.parsed
        abstained = bool(parsed is not None and parsed.abstained)
        finished = ending == "terminated" and parsed is not None and parsed.answer is not None
        checks = score_app_episode(self.base, episode.task, episode.session.sums, episode.answers, abstained, finished)
        scored = score_outcome(episode.task, step.answer if finished else None, self.reward_config, abstained=abstained,
                               steps=episode.turns, counts=episode.counts, parts={"abstention": checks.abstention},
                               judged=checks.outcome)
        return JudgedScore(checks.as_dict(), scored)

    def base_info(self) -> dict[str, Any]:
        episode = self._episode
        assert episode is not None
        session = episode.session
        return {
            "task_id": episode.task.task_id,
            "snapshot_fingerprint": self.snapshot.fingerprint,
            "package_version": PACKAGE_VERSION,
            "turn": episode.turns,
            "user_turn": episode.user_turn,
            "tool_calls": session.calls + session.waits,
            "refused_calls": episode.refused_calls,
            "state_fingerprint": session.fingerprint(),
            "world_time": session.now,
            "hallucination_counts": episode.counts.as_dict(),
            **messages_info(episode),
        }


def _task_source(snapshot_path: Path, tasks: Any, split: str) -> Any:
    """A task-set name as the path of its split's file; anything else unchanged."""
    if isinstance(tasks, (str, Path)) and not Path(tasks).is_file() and Path(tasks).suffix != ".jsonl":
        path = app_task_dir(snapshot_path, str(tasks)) / f"{split}.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"app task set not found: {path} (tasks={str(tasks)!r}, split={split!r}); "
                                    f"make one with `stillweb apps generate {snapshot_path} --name {tasks}`")
        return path
    return tasks
