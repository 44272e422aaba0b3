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
follow-up turn that asked for no change). The reward is 0 until the end, then the
binary outcome of :mod:`stillweb.envs.apps.checks`, whose checks are in
``info["reward_parts"]``.

>>> import gymnasium as gym, stillweb.envs  # doctest: +SKIP
>>> env = gym.make("stillweb/Apps-v0", snapshot="snap/", tasks="core")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from stillweb.corpora.errors import UsageError
from stillweb.corpora.apps.generate import shared_base
from stillweb.corpora.apps.tasks import app_task_dir
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.apps.checks import AppChecks, score_app_episode
from stillweb.envs.apps.prompt import ANSWER_SCHEMA, user_header
from stillweb.envs.core.degenerate import ACTION_TOO_LONG, ActionChecks
from stillweb.envs.core.snapshot_cache import shared_snapshot
from stillweb.envs.core.spaces import ACTION_MAX_CHARS, OBSERVATION_MAX_CHARS, to_charset, unicode_text_space
from stillweb.envs.core.steps import check_step, clip_observation, ending_info, latest_message, over_long_observation
from stillweb.envs.core.task_loader import Task, TaskPicker, TaskSet, load_tasks
from stillweb.envs.wikiqa.env import EpisodeLimits
from stillweb.sandboxes.apps import WRITE_ENDPOINTS, AppSession, ErrorPlan, app_registry, bound
from stillweb.sandboxes.formats import get_format
from stillweb.sandboxes.tools.types import ToolCall, ToolResult

__all__ = ["AppsEnv", "APP_FORMATS"]

APP_FORMATS = ("tongyi", "openai")


@dataclass
class _Episode:
    task: Task
    session: AppSession
    messages: list[dict[str, str]]
    turns: int = 0
    user_turn: int = 0
    answers: list[str] = field(default_factory=list)
    chars: int = 0  # characters of the messages so far (context tokens ~ chars / 4)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("unknown_tool", "bad_arguments", "fabricated_id", "write_after_answer", "format_error"), 0))
    done: bool = False


class AppsEnv(gym.Env[str, str]):
    """Stateful app APIs over a snapshot's seeded app world (see the module docstring).

    Args:
        snapshot: the snapshot directory (its people, cities, companies and works fill the apps).
        tasks: an app task-set name (``SNAPSHOT/apps/<name>/<split>.jsonl``), a jsonl path, or task dicts.
        split: the split of a named task set.
        tool_format: ``"tongyi"`` (default) or ``"openai"`` (``search_r1`` can only search).
        error_rate: share of calls that fail transiently (429/503/timeout), keyed by
            (reset seed, task id, call index); 0 gives none beyond a recovery task's scripted ones.
        scripted_errors: keep the recovery tasks' own scripted errors (default true).
        max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens, max_format_errors:
            see :class:`~stillweb.envs.wikiqa.env.EpisodeLimits`.
        mask_truncated, actions: as in ``WikiQA-v0``.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, snapshot: str | Path, tasks: str | Path | Sequence[Mapping[str, Any]] = "core", split: str = "train",
                 tool_format: str = "tongyi", error_rate: float = 0.0, scripted_errors: bool = True, max_turns: int = 24,
                 max_tool_calls: int = 64, max_calls_per_turn: int = 4, max_context_tokens: int = 65536,
                 max_format_errors: int | None = 3, mask_truncated: bool = True,
                 actions: ActionChecks | Mapping[str, Any] | None = None, render_mode: str | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise UsageError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if tool_format not in APP_FORMATS:
            raise UsageError(f"tool_format must be one of {APP_FORMATS} for Apps-v0, got {tool_format!r} "
                             "(search_r1 has only <search>, no way to call an endpoint)")
        if isinstance(error_rate, bool) or not isinstance(error_rate, (int, float)) or not 0.0 <= error_rate <= 1.0:
            raise UsageError(f"error_rate must be a number in [0, 1], got {error_rate!r}")
        self.render_mode = render_mode
        self.snapshot = shared_snapshot(snapshot)
        self.tasks: TaskSet = load_tasks(_task_source(self.snapshot.path, tasks, split), self.snapshot.path, split)
        worlds = {(task.extra.get("world") or {}).get("seed", 0) for task in self.tasks}, \
            {(task.extra.get("world") or {}).get("users", 0) for task in self.tasks}
        if any(len(values) != 1 for values in worlds) or "program" not in self.tasks[0].extra:
            raise UsageError(f"the tasks of {self.tasks.source} are not app tasks of one world (each needs program, "
                             "app_user and world {seed, users}): make them with `stillweb apps generate`")
        self.world_seed, self.world_users = next(iter(worlds[0])), next(iter(worlds[1]))
        self.base = shared_base(str(self.snapshot.path.resolve()), self.world_seed, self.world_users)
        self.limits = EpisodeLimits(max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens, max_format_errors)
        self.error_rate = float(error_rate)
        self.scripted_errors = scripted_errors
        self.mask_truncated = mask_truncated
        self.action_checks = ActionChecks.from_value(actions)
        self.format = get_format(tool_format, max_calls_per_turn=max_calls_per_turn)
        self.registry = app_registry()
        self.system_prompt = self.format.system_prompt(self.registry.schemas() + [ANSWER_SCHEMA], max_calls_per_turn=max_calls_per_turn)
        self.observation_space = unicode_text_space(OBSERVATION_MAX_CHARS)
        self.action_space = unicode_text_space(ACTION_MAX_CHARS)
        self._picker = TaskPicker(self.tasks, "apps")
        self._error_seed = 0
        self._episode: _Episode | None = None

    # -- Gymnasium API ------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on a fresh copy of the base state (or of ``options["state_file"]``, a
        :meth:`save_state` file of this world); ``ValueError`` for an unknown task id or a bad state file."""
        super().reset(seed=seed)
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
        self._episode = _Episode(task, session, messages, chars=len(self.system_prompt) + len(first))
        return to_charset(f"{self.system_prompt}\n\n{first}"), self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Run the action's calls, or take its answer to the current user turn."""
        episode = self._episode
        check_step(episode is None or episode.done, action)
        action = to_charset(action)
        episode.turns += 1
        journal_start = len(episode.session.journal)
        over_long = self.action_checks.over_long(action)
        parsed = None if over_long else self.format.parse(action)
        results: list[ToolResult] = []
        ending, reason, observation = None, None, ""
        if over_long:
            ending, reason = "truncated", ACTION_TOO_LONG
            observation = over_long_observation(action, self.action_checks.max_action_chars)
        elif parsed.error is not None:
            episode.counts["format_error"] += 1
            results = [parsed.error_result()]
        elif parsed.answer is not None:
            episode.answers.append(parsed.answer)
            if parsed.abstained or episode.user_turn + 1 >= len(episode.task.extra["turns"]):
                ending, reason = "terminated", "abstained" if parsed.abstained else "answered"
            else:
                episode.user_turn += 1
                observation = episode.task.extra["turns"][episode.user_turn]
        else:
            results = [self._run_call(call, episode) for call in parsed.calls]
        if results:
            observation = self.format.render_results(results)
        observation = clip_observation(to_charset(observation))
        episode.messages += [{"role": "assistant", "content": action}, {"role": "user", "content": observation}]
        episode.chars += len(action) + len(observation)
        if ending is None:
            ending, reason = self._limit_reached(episode)
        flags = self.action_checks.flags(action, format_error=parsed is not None and parsed.error is not None)
        info = self._info()
        info.update(tool_flags=[result.flag for result in results], action_flags=list(flags),
                    state_diff=episode.session.journal[journal_start:], thought=parsed.thought if parsed else "")
        reward = 0.0
        if ending is not None:
            episode.done = True
            checks = self._score(episode, parsed, ending)
            reward = checks.outcome
            info.update(answer=episode.answers[-1] if episode.answers else None,
                        **ending_info(checks, ending, reason, self.mask_truncated))
        return observation, reward, ending == "terminated", ending == "truncated", info

    def render(self) -> str | None:
        """The latest message (``render_mode="ansi"``)."""
        return latest_message(self.render_mode, self._episode)

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

    # -- internals -----------------------------------------------------------------------

    def _run_call(self, call: ToolCall, episode: _Episode) -> ToolResult:
        session = episode.session
        if session.calls + session.waits >= self.limits.max_tool_calls:
            text = f"Not run: the episode's budget of {self.limits.max_tool_calls} calls is spent. Answer the user now."
            return ToolResult(name=str(call.name)[:100], text=text, flag="bad_arguments", call_id=call.call_id)
        with bound(session):
            result = self.registry.call(call)
        if result.flag in ("unknown_tool", "bad_arguments"):
            episode.counts[result.flag] += 1
        elif result.flag == "not_found":
            episode.counts["fabricated_id"] += 1
        if result.ok and call.name in WRITE_ENDPOINTS and episode.answers and not self._turn_writes(episode):
            episode.counts["write_after_answer"] += 1
        return result

    @staticmethod
    def _turn_writes(episode: _Episode) -> bool:
        """Whether the current user turn asks for a change (its reference calls write)."""
        turn = episode.task.extra["program"][episode.user_turn]
        return any(call["name"] in WRITE_ENDPOINTS for call in turn)

    def _limit_reached(self, episode: _Episode) -> tuple[str | None, str | None]:
        limits = self.limits
        if limits.max_format_errors is not None and episode.counts["format_error"] >= limits.max_format_errors:
            return "terminated", "format_errors"
        if episode.turns >= limits.max_turns:
            return "truncated", "max_turns"
        if episode.session.calls + episode.session.waits >= limits.max_tool_calls:
            return "truncated", "max_tool_calls"
        if episode.chars // 4 > limits.max_context_tokens:
            return "truncated", "context_tokens"
        return None, None

    def _score(self, episode: _Episode, parsed: Any, ending: str) -> AppChecks:
        abstained = bool(parsed is not None and parsed.abstained)
        finished = ending == "terminated" and parsed is not None and parsed.answer is not None
        return score_app_episode(self.base, episode.task, episode.session.sums, episode.answers, abstained, finished)

    def _info(self) -> dict[str, Any]:
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
            "state_fingerprint": session.fingerprint(),
            "world_time": session.now,
            "hallucination_counts": dict(episode.counts),
            "messages": list(episode.messages),
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
