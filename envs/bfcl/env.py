"""``stillweb/BFCL-v0``: BFCL v4's multi-turn function-calling tasks, rewarded by BFCL's own checker.

``reset`` picks a task of the category (from the seed, or ``options={"task_id": ...}``), loads
fresh instances of its APIs from the task's initial configuration, and shows the system prompt
(BFCL's function docs of the involved APIs in the call format, less a miss_func task's held-back
functions) and the first user turn. Each ``step(text)`` runs the action's calls; answering a
turn (the ``answer`` function, or ``<answer>`` in the tongyi format) brings the next user turn,
or, at a miss_func turn, the held-back functions with BFCL's own "I have updated some more
functions" prompt; answering the last one ends the episode (*terminated*). A limit truncates it.

The reward is 0 until the end, then BFCL's multi-turn checker, binary
(:mod:`stillweb.envs.bfcl.check`); ``info["reward_parts"]`` names the check that failed. A call
reaches BFCL's code only as an offered function name with its JSON arguments
(:mod:`stillweb.envs.bfcl.api`; nothing is ``eval``-ed). Every step's ``info`` carries
``bfcl_version``, ``state_fingerprint`` and ``state_diff`` (the API attributes this step
changed: ``{"path", "before", "after"}``), ``tool_flags`` and ``hallucination_counts``.

>>> import gymnasium as gym, stillweb.envs  # doctest: +SKIP
>>> env = gym.make("stillweb/BFCL-v0", category="multi_turn_base")  # doctest: +SKIP
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from stillweb.corpora.errors import UsageError
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.bfcl.api import BfclWorld, guard_arguments
from stillweb.envs.bfcl.check import BfclChecks, Call, score_bfcl_episode
from stillweb.envs.bfcl.data import API_CLASSES, DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_TURNS, bfcl_version, function_docs
from stillweb.envs.bfcl.prompt import ADDED_FUNCTIONS_PROMPT, REPLY_SCHEMA, openai_schema
from stillweb.envs.bfcl.splits import bfcl_tasks
from stillweb.envs.bfcl.state import state_diff, state_fingerprint
from stillweb.envs.core.degenerate import ACTION_TOO_LONG, ActionChecks
from stillweb.envs.core.limits import EpisodeLimits, pop_action_cap
from stillweb.envs.core.spaces import to_charset
from stillweb.envs.core.steps import check_step, clip_observation, ending_info, latest_message, over_long_observation
from stillweb.envs.core.task_loader import Task, TaskPicker, TaskSet
from stillweb.sandboxes.formats import get_format
from stillweb.sandboxes.formats.base import tool_list_json
from stillweb.sandboxes.tools.types import ToolCall, ToolResult, preview

__all__ = ["BfclEnv", "BFCL_FORMATS"]

BFCL_FORMATS = ("tongyi", "openai")
_COUNTS = ("unknown_tool", "bad_arguments", "tool_error", "format_error")


@dataclass
class _Episode:
    task: Task
    world: BfclWorld
    messages: list[dict[str, str]]
    offered: set[str]
    state: dict[str, Any]
    fingerprint: str = ""
    turns: int = 0
    user_turn: int = 0
    calls: list[list[list[Call]]] = field(default_factory=lambda: [[]])  # per user turn, per step
    tool_calls: int = 0
    chars: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTS, 0))
    done: bool = False


class BfclEnv(gym.Env[str, str]):
    """BFCL's multi-turn tasks (see the module docstring).

    Args:
        category: ``"multi_turn_base"``, ``"multi_turn_miss_func"``, ``"multi_turn_miss_param"`` or
            ``"multi_turn_long_context"``.
        split: ``"default"`` (the tasks whose ground truth can earn 1 here; the others are named with
            the reason by :func:`~stillweb.envs.bfcl.splits.excluded_tasks`) or ``"all"``.
        tasks: task ids to keep (a subset of the split), or ``None`` for all.
        tool_format: ``"tongyi"`` (default) or ``"openai"`` (``search_r1`` can only search).
        api_seed: ``"episode"`` (the APIs' random streams keyed by the reset seed and the task) or
            ``"bfcl"`` (BFCL's own fixed seeds, as its leaderboard runs them).
        max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens, max_format_errors:
            see :class:`~stillweb.envs.wikiqa.env.EpisodeLimits`.
        mask_truncated, actions: as in ``WikiQA-v0``.
        snapshot: not used (BFCL-v0 reads no snapshot); accepted because a server session and the
            adapters pass their snapshot to every environment.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, category: str = "multi_turn_base", split: str = "default", tasks: Sequence[str] | None = None,
                 tool_format: str = "tongyi", api_seed: str = "episode", max_turns: int = DEFAULT_MAX_TURNS,
                 max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
                 max_calls_per_turn: int = 4, max_context_tokens: int = 131072, max_format_errors: int | None = 3,
                 mask_truncated: bool = True, actions: ActionChecks | Mapping[str, Any] | None = None,
                 render_mode: str | None = None, snapshot: Any = None, max_action_chars: int | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise UsageError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if tool_format not in BFCL_FORMATS:
            raise UsageError(f"tool_format must be one of {BFCL_FORMATS} for BFCL-v0, got {tool_format!r} "
                             "(search_r1 has only <search>, no way to call BFCL's functions)")
        if api_seed not in ("episode", "bfcl"):
            raise UsageError(f"api_seed must be 'episode' or 'bfcl', got {api_seed!r}")
        self.render_mode = render_mode
        self.category = category
        self.tasks: TaskSet = bfcl_tasks(category, split, tasks)
        self.bfcl_version = bfcl_version()
        self.data_fingerprint = f"bfcl-eval=={self.bfcl_version}"  # info["snapshot_fingerprint"]: what the tasks come from
        actions, action_cap = pop_action_cap(actions, max_action_chars)
        self.limits = EpisodeLimits(max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens, max_format_errors,
                                    **action_cap)
        self.api_seed = api_seed
        self.mask_truncated = mask_truncated
        self.action_checks = ActionChecks.from_value(actions)
        self.format = get_format(tool_format, **self.limits.format_options())
        self.observation_space = self.limits.observation_space()
        self.action_space = self.limits.action_space()
        self._picker = TaskPicker(self.tasks, "bfcl")
        self._seed = 0
        self._prompts: dict[str, tuple[str, frozenset[str]]] = {}
        self._episode: _Episode | None = None

    # -- Gymnasium API ------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on fresh API instances; ``ValueError`` for an unknown task id."""
        super().reset(seed=seed)
        if seed is not None:
            self._seed = int(seed)
        task = self._picker.pick(seed, options)
        extra = task.extra
        world = BfclWorld(task.task_id, extra["initial_config"], extra["involved_classes"],
                          self.category == "multi_turn_long_context", self._world_seed())
        if task.task_id not in self._prompts:  # the same task's prompt every time: made once
            held_back = {name for names in extra["missed_function"].values() for name in names}
            docs = [doc for name in extra["involved_classes"] for doc in function_docs(name) if doc["name"] not in held_back]
            prompt = self.format.system_prompt([openai_schema(doc) for doc in docs] + [REPLY_SCHEMA],
                                               max_calls_per_turn=self.limits.max_calls_per_turn)
            self._prompts[task.task_id] = prompt, frozenset(doc["name"] for doc in docs) & set(world.method_class)
        prompt, offered = self._prompts[task.task_id]
        first = self._user_turn(task, 0)
        messages = [{"role": "system", "content": prompt}, {"role": "user", "content": first}]
        state = world.state()
        self._episode = _Episode(task, world, messages, set(offered), state, state_fingerprint(state),
                                 chars=len(prompt) + len(first))
        return to_charset(f"{prompt}\n\n{first}"), self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Run the action's calls, or take its answer to the current user turn."""
        episode = self._episode
        check_step(episode is None or episode.done, action)
        action = to_charset(action)
        episode.turns += 1
        over_long = self.limits.over_long(action)
        parsed = None if over_long else self.format.parse(action)
        results: list[ToolResult] = []
        ending, reason, observation, diff = None, None, "", []
        if over_long:
            ending, reason = "truncated", ACTION_TOO_LONG
            observation = over_long_observation(action, self.limits.max_action_chars)
        elif parsed.error is not None:
            episode.counts["format_error"] += 1
            results = [parsed.error_result()]
        elif parsed.answer is not None:
            if episode.user_turn + 1 >= len(episode.task.extra["turns"]):
                episode.user_turn += 1
                ending, reason = "terminated", "answered"
            else:
                observation = self._next_turn(episode)
        else:
            step_calls: list[Call] = []
            results = [self._run_call(call, episode, step_calls) for call in parsed.calls]
            if step_calls:
                episode.calls[-1].append(step_calls)
                diff = self._state_change(episode, {episode.world.method_class[name] for name, _ in step_calls})
        if results:
            observation = self.format.render_results(results)
        observation = clip_observation(to_charset(observation), self.limits.max_observation_chars)
        episode.messages += [{"role": "assistant", "content": action}, {"role": "user", "content": observation}]
        episode.chars += len(action) + len(observation)
        if ending is None:
            ending, reason = self._limit_reached(episode)
        flags = self.action_checks.flags(action, format_error=parsed is not None and parsed.error is not None,
                                         over_long=over_long)
        info = self._info()
        info.update(tool_flags=[result.flag for result in results], action_flags=list(flags), state_diff=diff,
                    thought=parsed.thought if parsed else "")
        reward = 0.0
        if ending is not None:
            episode.done = True
            checks = self.score()
            reward = checks.outcome
            info.update(**ending_info(checks, ending, reason, self.mask_truncated))
        return observation, reward, ending == "terminated", ending == "truncated", info

    def render(self) -> str | None:
        """The latest message (``render_mode="ansi"``)."""
        return latest_message(self.render_mode, self._episode)

    def close(self) -> None:
        """Forget the episode; idempotent."""
        self._episode = None

    def score(self) -> BfclChecks:
        """BFCL's checker on the episode so far (the reward of an episode that ends now)."""
        episode = self._current()
        return score_bfcl_episode(episode.task, episode.calls, episode.user_turn, self._world_seed())

    def tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI definitions of the functions offered now, and ``answer``; before the first reset,
        of every function any of the env's tasks offers (what an MCP server or TRL lists up front)."""
        episode = self._episode
        if episode is not None:
            docs = [doc for cls in episode.task.extra["involved_classes"] for doc in function_docs(cls)
                    if doc["name"] in episode.offered]
        else:
            classes = {cls for task in self.tasks for cls in task.extra["involved_classes"]}
            docs = list({doc["name"]: doc for cls in API_CLASSES if cls in classes for doc in function_docs(cls)}.values())
        return [openai_schema(doc) for doc in docs] + [REPLY_SCHEMA]

    @property
    def world(self) -> BfclWorld:
        """The current episode's API instances (``RuntimeError`` before ``reset``)."""
        return self._current().world

    # -- internals -----------------------------------------------------------------------

    def _current(self) -> _Episode:
        if self._episode is None:
            raise RuntimeError("no episode: call reset() first")
        return self._episode

    def _world_seed(self) -> int | None:
        return None if self.api_seed == "bfcl" else self._seed

    @staticmethod
    def _user_turn(task: Task, index: int) -> str:
        return "\n\n".join(task.extra["turns"][index])

    def _next_turn(self, episode: _Episode) -> str:
        """Move to the next user turn; its text (with the functions it adds, at a miss_func turn)."""
        episode.user_turn += 1
        episode.calls.append([])
        added = episode.task.extra["missed_function"].get(episode.user_turn, [])
        if not added:
            return self._user_turn(episode.task, episode.user_turn)
        docs = [doc for name in episode.task.extra["involved_classes"] for doc in function_docs(name) if doc["name"] in added]
        episode.offered |= {doc["name"] for doc in docs}
        tools = tool_list_json([openai_schema(doc) for doc in docs])
        return f"<tools>\n{tools}\n</tools>\n{ADDED_FUNCTIONS_PROMPT}"

    def _run_call(self, call: ToolCall, episode: _Episode, step_calls: list[Call]) -> ToolResult:
        name = str(call.name)
        if episode.tool_calls >= self.limits.max_tool_calls:
            text = f"Not run: the episode's budget of {self.limits.max_tool_calls} calls is spent. Answer the user now."
            return ToolResult(name=name[:100], text=text, flag="bad_arguments", call_id=call.call_id)
        if name not in episode.offered:
            episode.counts["unknown_tool"] += 1
            text = (f"Unknown function {preview(name, 60)}: the functions you can call are "
                    f"{', '.join(sorted(episode.offered))}, and answer to reply to the user.")
            return ToolResult(name=name[:100], text=text, flag="unknown_tool", call_id=call.call_id)
        refused = guard_arguments(name, call.arguments)
        if refused is not None:
            episode.counts["bad_arguments"] += 1
            return ToolResult(name=name, text=f"Not run: {refused}.", flag="bad_arguments", call_id=call.call_id)
        episode.tool_calls += 1
        step_calls.append((name, copy.deepcopy(call.arguments)))
        text = episode.world.call(name, call.arguments)
        failed = text.startswith("Error during execution:")
        episode.counts["tool_error"] += failed
        return ToolResult(name=name, text=text, flag="tool_error" if failed else None, call_id=call.call_id)

    @staticmethod
    def _state_change(episode: _Episode, classes: set[str]) -> list[dict[str, Any]]:
        """The changes of this step in the touched classes' state (the cached state is updated)."""
        now = episode.world.state(sorted(classes))
        diff = state_diff({name: episode.state[name] for name in now}, now)
        if diff:
            episode.state.update(now)
            episode.fingerprint = state_fingerprint(episode.state)
        return diff

    def _limit_reached(self, episode: _Episode) -> tuple[str | None, str | None]:
        limits = self.limits
        if limits.max_format_errors is not None and episode.counts["format_error"] >= limits.max_format_errors:
            return "terminated", "format_errors"
        if episode.turns >= limits.max_turns:
            return "truncated", "max_turns"
        if episode.tool_calls >= limits.max_tool_calls:
            return "truncated", "max_tool_calls"
        if episode.chars // 4 > limits.max_context_tokens:
            return "truncated", "context_tokens"
        return None, None

    def _info(self) -> dict[str, Any]:
        episode = self._current()
        return {
            "task_id": episode.task.task_id,
            "category": self.category,
            "snapshot_fingerprint": self.data_fingerprint,
            "bfcl_version": self.bfcl_version,
            "package_version": PACKAGE_VERSION,
            "turn": episode.turns,
            "user_turn": episode.user_turn,
            "tool_calls": episode.tool_calls,
            "state_fingerprint": episode.fingerprint,
            "hallucination_counts": dict(episode.counts),
            "messages": list(episode.messages),
        }
