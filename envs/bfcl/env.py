"""``stillweb/BFCL-v0``: BFCL v4's multi-turn function-calling tasks, rewarded by BFCL's own checker.

``reset`` picks a task of the category (from the seed, or ``options={"task_id": ...}``), loads
fresh instances of its APIs from the task's initial configuration, and shows the system prompt
(BFCL's function docs of the involved APIs in the call format, less a miss_func task's held-back
functions) and the first user turn. Each ``step(text)`` runs the action's calls; answering a
turn (the ``answer`` function, or ``<answer>`` in the tongyi format) brings the next user turn,
or, at a miss_func turn, the held-back functions with BFCL's own "I have updated some more
functions" prompt; answering the last one ends the episode (*terminated*). A limit truncates it.

The reward is 0 until the end, then the one outcome scorer's
(:func:`~stillweb.envs.scoring.rewards.score_outcome`) with BFCL's multi-turn checker, binary
(:mod:`stillweb.envs.bfcl.check`), as the outcome (``reward``: a ``RewardConfig`` weighting gamma
decay and penalties; default the outcome alone); ``info["reward_parts"]`` names the check that
failed, then holds the scorer's parts. A call
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
from typing import Any, ClassVar

from stillweb.corpora.errors import UsageError
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.bfcl.api import BfclWorld, guard_arguments
from stillweb.envs.bfcl.check import BfclChecks, Call, score_bfcl_episode
from stillweb.envs.bfcl.data import API_CLASSES, DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_TURNS, bfcl_version, function_docs
from stillweb.envs.bfcl.prompt import ADDED_FUNCTIONS_PROMPT, BFCL_INSTRUCTIONS, REPLY_SCHEMA, bfcl_words, openai_schema
from stillweb.envs.bfcl.splits import BFCL_SPLITS, bfcl_tasks
from stillweb.envs.bfcl.state import state_diff, state_fingerprint
from stillweb.envs.core.counts import EpisodeCounts
from stillweb.envs.core.degenerate import ActionChecks
from stillweb.envs.core.episode import EpisodeState, StepOutcome, TextEnv, check_render_mode
from stillweb.envs.core.limits import EpisodeLimits, pop_action_cap
from stillweb.envs.core.spaces import to_charset
from stillweb.envs.scoring.rewards import JudgedScore, RewardConfig, score_outcome
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.core.task_loader import TaskPicker, TaskSet
from stillweb.envs.core.messages import messages_info
from stillweb.sandboxes.formats import get_format
from stillweb.sandboxes.formats.base import tool_list_json
from stillweb.sandboxes.tools.types import ToolCall, ToolResult, preview

__all__ = ["BfclEnv", "BFCL_FORMATS", "BfclCounts"]

BFCL_FORMATS = ("tongyi", "openai")


@dataclass
class BfclCounts(EpisodeCounts):
    """``BFCL-v0``'s counts: plus calls whose BFCL method raised (``tool_error``: BFCL's
    "Error during execution")."""

    tool_error: int = 0

    RESULT_FLAGS: ClassVar[dict[str, str]] = {**EpisodeCounts.RESULT_FLAGS, "tool_error": "tool_error"}


@dataclass(kw_only=True)
class _Episode(EpisodeState):
    world: BfclWorld
    offered: set[str]
    state: dict[str, Any]
    fingerprint: str
    state_bytes: dict[str, bytes | None] = field(default_factory=dict)  # per class: skips unchanged states
    turns: int = 0
    user_turn: int = 0
    calls: list[list[list[Call]]] = field(default_factory=lambda: [[]])  # per user turn, per step
    step_calls: list[Call] = field(default_factory=list)  # the calls the current step ran
    tool_calls: int = 0
    chars: int = 0
    counts: BfclCounts = field(default_factory=BfclCounts)


class BfclEnv(TextEnv):
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
        max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens, max_format_errors, max_action_chars:
            see :class:`~stillweb.envs.core.limits.EpisodeLimits`.
        mask_truncated, actions, reward: as in ``WikiQA-v0``.
        snapshot: not used (BFCL-v0 reads no snapshot); accepted because a server session and the
            adapters pass their snapshot to every environment.
    """

    budget_note = "Not run: the episode's budget of {limit} calls is spent. Answer the user now."

    def __init__(self, category: str = "multi_turn_base", split: str = "default", tasks: Sequence[str] | None = None,
                 tool_format: str = "tongyi", api_seed: str = "episode", max_turns: int = DEFAULT_MAX_TURNS,
                 max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
                 max_calls_per_turn: int = 4, max_context_tokens: int = 131072, max_format_errors: int | None = 3,
                 mask_truncated: bool = True, actions: ActionChecks | Mapping[str, Any] | None = None,
                 render_mode: str | None = None, snapshot: Any = None, max_action_chars: int | None = None,
                 reward: RewardConfig | Mapping[str, Any] | None = None) -> None:
        self.render_mode = check_render_mode(render_mode)
        self.reward_config = RewardConfig.from_value(reward)
        if tool_format not in BFCL_FORMATS:
            raise UsageError(f"tool_format must be one of {BFCL_FORMATS} for BFCL-v0, got {tool_format!r} "
                             "(search_r1 has only <search>, no way to call BFCL's functions)")
        if api_seed not in ("episode", "bfcl"):
            raise UsageError(f"api_seed must be 'episode' or 'bfcl', got {api_seed!r}")
        self.category = category
        self.tasks: TaskSet = bfcl_tasks(category, split, tasks)
        self.bfcl_version = bfcl_version()
        self.data_fingerprint = f"bfcl-eval=={self.bfcl_version}"  # info["snapshot_fingerprint"]: what the tasks come from
        actions, action_cap = pop_action_cap(actions, max_action_chars)
        limits = EpisodeLimits(max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens, max_format_errors,
                               **action_cap)
        self.setup_core(limits, get_format(tool_format, **limits.format_options()), actions, mask_truncated)
        self.api_seed = api_seed
        self._picker = TaskPicker(self.tasks, "bfcl")
        self._seed = 0
        self._prompts: dict[str, tuple[str, frozenset[str]]] = {}
        self._episode: _Episode | None = None

    @classmethod
    def for_adapters(cls, snapshot: Any, tasks: Any, split: str, **env_kwargs: Any) -> "BfclEnv":
        """BFCL-v0 for a trainer adapter: no snapshot, ``tasks`` as task ids, its own splits (``"default"`` for
        any other), no ``tools`` whitelist (a task offers its functions)."""
        env_kwargs.pop("tools", None)
        return cls(split=split if split in BFCL_SPLITS else "default", tasks=tasks, **env_kwargs)

    # -- Gymnasium API ------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on fresh API instances; ``ValueError`` for an unknown task id."""
        super().reset(seed=seed, options=options)
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
                                               max_calls_per_turn=self.limits.max_calls_per_turn,
                                               words=bfcl_words(self.format.name))
            self._prompts[task.task_id] = prompt, frozenset(doc["name"] for doc in docs) & set(world.method_class)
        prompt, offered = self._prompts[task.task_id]
        first = self._user_turn(task, 0)
        messages = [{"role": "system", "content": prompt}, {"role": "user", "content": first}]
        state = world.state()
        self.start_episode(_Episode(task=task, messages=messages, world=world, offered=set(offered), state=state,
                                    fingerprint=state_fingerprint(state), chars=len(prompt) + len(first),
                                    state_bytes={name: world.state_bytes(name) for name in world.instances}))
        return to_charset(f"{prompt}\n\n{first}"), self.base_info()

    def close(self) -> None:
        """Forget the episode; idempotent."""
        self._episode = None

    def check(self) -> BfclChecks:
        """BFCL's checker on the episode so far (the reward of an episode that ends now)."""
        episode = self._current()
        return score_bfcl_episode(episode.task, episode.calls, episode.user_turn, self._world_seed())

    def instructions(self) -> str:
        """BFCL-v0's instructions when the functions go to the model as functions (:data:`BFCL_INSTRUCTIONS`)."""
        return BFCL_INSTRUCTIONS

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

    # -- the core's hooks ----------------------------------------------------------------

    def begin_step(self, step: StepOutcome, episode: _Episode) -> None:
        episode.turns += 1
        episode.step_calls = []

    def on_answer(self, step: StepOutcome, episode: _Episode) -> None:
        """A reply ends the current user turn: the next turn comes (at a miss_func turn, with the
        functions it adds), or, after the last, the episode ends."""
        episode.user_turn += 1
        if episode.user_turn >= len(episode.task.extra["turns"]):
            step.ending = ("terminated", "answered")
            return
        episode.calls.append([])
        added = episode.task.extra["missed_function"].get(episode.user_turn, [])
        if not added:
            step.observation = self._user_turn(episode.task, episode.user_turn)
            return
        docs = [doc for name in episode.task.extra["involved_classes"] for doc in function_docs(name) if doc["name"] in added]
        episode.offered |= {doc["name"] for doc in docs}
        step.observation = f"<tools>\n{tool_list_json([openai_schema(doc) for doc in docs])}\n</tools>\n{ADDED_FUNCTIONS_PROMPT}"

    def run_call(self, call: ToolCall, episode: _Episode) -> ToolResult:
        """An offered function with guarded arguments runs on the episode's instances (no ``eval``)."""
        name = str(call.name)
        if name not in episode.offered:
            text = (f"Unknown function {preview(name, 60)}: the functions you can call are "
                    f"{', '.join(sorted(episode.offered))}, and answer to reply to the user.")
            return ToolResult(name=name[:100], text=text, flag="unknown_tool", call_id=call.call_id)
        refused = guard_arguments(name, call.arguments)
        if refused is not None:
            return ToolResult(name=name, text=f"Not run: {refused}.", flag="bad_arguments", call_id=call.call_id)
        episode.tool_calls += 1
        episode.step_calls.append((name, copy.deepcopy(call.arguments)))
        text = episode.world.call(name, call.arguments)
        failed = text.startswith("Error during execution:")
        return ToolResult(name=name, text=text, flag="tool_error" if failed else None, call_id=call.call_id)

    def record_step(self, step: StepOutcome, episode: _Episode) -> None:
        """The step's messages, and, when it ran calls, those calls (for BFCL's checker) and the state they changed."""
        super().record_step(step, episode)
        calls = episode.step_calls
        step.extra["diff"] = []
        if calls:
            episode.calls[-1].append(calls)
            world = episode.world
            touched = sorted({world.method_class[name] for name, _ in calls})
            changed = []
            for name in touched:
                now_bytes = world.state_bytes(name)
                if now_bytes is None or now_bytes != episode.state_bytes.get(name):
                    changed.append(name)
                    episode.state_bytes[name] = now_bytes
            now = world.state(changed)
            step.extra["diff"] = state_diff({name: episode.state[name] for name in now}, now)
            if step.extra["diff"]:
                episode.state.update(now)
                episode.fingerprint = state_fingerprint(episode.state)

    def turns(self, episode: _Episode) -> int:
        return episode.turns

    def tool_calls(self, episode: _Episode) -> int:
        return episode.tool_calls

    def score(self, step: StepOutcome, episode: _Episode, ending: str) -> JudgedScore:
        """BFCL's checker, its binary outcome scored by the one outcome scorer."""
        checks = self.check()
        abstained = bool(step.parsed is not None and step.parsed.abstained)
        answer = step.answer if ending == "terminated" else None
        scored = score_outcome(episode.task, answer, self.reward_config, abstained=abstained, steps=episode.turns,
                               counts=episode.counts, judged=checks.outcome)
        return JudgedScore(checks.as_dict(), scored)

    def step_info(self, step: StepOutcome, episode: _Episode) -> dict[str, Any]:
        return {**super().step_info(step, episode), "state_diff": step.extra["diff"]}

    def end_info(self, step: StepOutcome, episode: _Episode) -> dict[str, Any]:
        return {}

    def base_info(self) -> dict[str, Any]:
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
            "hallucination_counts": episode.counts.as_dict(),
            **messages_info(episode),
        }

    # -- internals -----------------------------------------------------------------------

    def _current(self) -> _Episode:
        if self._episode is None:
            raise RuntimeError("no episode: call reset() first")
        return self._episode

    def _world_seed(self) -> int | None:
        return None if self.api_seed == "bfcl" else self._seed

    @staticmethod
    def _user_turn(task: TaskRecord, index: int) -> str:
        return "\n\n".join(task.extra["turns"][index])
