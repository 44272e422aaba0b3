"""The episode core every tool environment is built on: one step skeleton, one ending ladder.

:class:`TextEnv` is a Gymnasium environment whose actions and observations are text. Its
``step`` is the same for every environment (``WikiQA-v0``, ``Apps-v0`` and the ones to come):

1. **parse**: an action over ``limits.max_action_chars`` is not parsed (the episode ends,
   truncated, ``action_too_long``); otherwise the call format reads it;
2. **checks**: a format error is counted and shown; the degenerate-action flags are raised;
3. **tools**: each call runs while the episode's call budget lasts (a call past it is refused,
   not run); an answer goes to :meth:`TextEnv.on_answer`;
4. **observation**: the results rendered in the call format, clipped to
   ``limits.max_observation_chars``;
5. **ending**: the answer's ending, else :func:`ending_of` (format errors terminate; turns,
   tool calls and context tokens truncate); an ended episode is scored *before* its last
   ``info`` is built, so that info's counts are the reward parts' counts.

Each concept is counted once: calls that ran (``tool_calls``) apart from calls refused for a
spent budget (``refused_calls``, flagged ``budget_exhausted``, never ``bad_arguments``), and
format errors in ``counts.format_error`` alone.

One episode may get its own budget: ``reset(options={"limits": {"max_turns": 4, "max_tool_calls": 8}})``
(:meth:`~stillweb.envs.core.limits.EpisodeLimits.for_episode`) sets ``limits`` for that episode alone;
the next reset without it returns to the environment's ``env_limits``.

A subclass gives its tools (:meth:`TextEnv.run_call`), its prompt (``reset``, which starts the episode with
:meth:`TextEnv.start_episode`), its check
(:meth:`TextEnv.score`, usually :func:`~stillweb.envs.scoring.rewards.score_outcome`) and what it records of a step (:meth:`TextEnv.record_step`,
:meth:`TextEnv.step_info`); docs/interfaces-environments.md shows a whole environment in 40 lines.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from stillweb.corpora.errors import UsageError
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.core.counts import EpisodeCounts
from stillweb.envs.core.degenerate import ACTION_TOO_LONG, ActionChecks
from stillweb.envs.core.limits import EpisodeLimits
from stillweb.envs.core.messages import messages_info
from stillweb.envs.core.spaces import to_charset
from stillweb.envs.core.steps import (ScoredEpisode, check_step, clip_observation, ending_info, latest_message,
                                      over_long_observation)
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.sandboxes.formats.base import ParsedAction, ToolCallFormat
from stillweb.sandboxes.tools.types import ToolCall, ToolResult

__all__ = ["TextEnv", "EpisodeState", "StepOutcome", "ending_of", "check_render_mode"]


@dataclass
class EpisodeState:
    """What every episode keeps: its task, the conversation, the counts, the calls refused (not run:
    the budget was spent), whether it is over."""

    task: TaskRecord
    messages: list[dict[str, str]]
    counts: EpisodeCounts = field(default_factory=EpisodeCounts)
    steps: int = 0
    calls_run: int = 0
    refused_calls: int = 0
    chars: int = 0
    shown: list[dict[str, str]] = field(default_factory=list)  # the history the last info described
    done: bool = False


@dataclass
class StepOutcome:
    """What one action did: its parse, its calls and their results, its answer, its observation
    and (when the action itself ends the episode) the ending and why."""

    action: str
    parsed: ParsedAction | None = None
    calls: list[ToolCall | None] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    answer: str | None = None
    observation: str = ""
    flags: tuple[str, ...] = ()
    ending: tuple[str, str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def over_long(self) -> bool:
        """The action was over the cap (not parsed)."""
        return self.ending == ("truncated", ACTION_TOO_LONG)

    @property
    def format_error(self) -> bool:
        """The action broke the call format."""
        return self.parsed is not None and self.parsed.error is not None

    @property
    def refused(self) -> int:
        """Calls of this action that were not run (the budget was spent)."""
        return sum(1 for result in self.results if result.flag == "budget_exhausted")

    @property
    def thought(self) -> str:
        """The action's reasoning text (empty when it was not parsed)."""
        return self.parsed.thought if self.parsed is not None else ""


def ending_of(limits: EpisodeLimits, counts: EpisodeCounts, turns: int, tool_calls: int,
              context_tokens: int) -> tuple[str | None, str | None]:
    """The ending ladder: ``("terminated" | "truncated" | None, reason)`` of an episode that has not
    answered: ``format_errors`` terminates; ``max_turns``, ``max_tool_calls`` and ``context_tokens``
    truncate, in that order.

    >>> ending_of(EpisodeLimits(max_turns=2), EpisodeCounts(), turns=2, tool_calls=0, context_tokens=0)
    ('truncated', 'max_turns')
    """
    if limits.max_format_errors is not None and counts.format_error >= limits.max_format_errors:
        return "terminated", "format_errors"
    if turns >= limits.max_turns:
        return "truncated", "max_turns"
    if tool_calls >= limits.max_tool_calls:
        return "truncated", "max_tool_calls"
    if context_tokens > limits.max_context_tokens:
        return "truncated", "context_tokens"
    return None, None


def check_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if it is ``None`` or ``"ansi"``; ``ValueError`` otherwise."""
    if render_mode not in (None, "ansi"):
        raise UsageError(f"render_mode must be None or 'ansi', got {render_mode!r}")
    return render_mode


class TextEnv(gym.Env[str, str]):
    """A text environment on the episode core (see the module docstring).

    A subclass sets ``limits``, ``format``, ``action_checks`` and ``mask_truncated`` (see
    :meth:`setup_core`), calls ``super().reset(seed=seed, options=options)`` first in its ``reset`` (the
    episode's limits: ``options["limits"]`` over ``env_limits``), then starts ``self._episode`` (an
    :class:`EpisodeState`), and
    implements :meth:`run_call` (its tools) and :meth:`score` (its check). The other hooks have
    defaults that count on the :class:`EpisodeState` (steps, calls run, characters / 4 as tokens).
    """

    metadata = {"render_modes": ["ansi"]}
    limits: EpisodeLimits  # the current episode's (env_limits unless its reset overrode the budget)
    env_limits: EpisodeLimits  # the environment's, made at construction
    format: ToolCallFormat
    action_checks: ActionChecks
    mask_truncated: bool
    budget_note = "Not run: the episode's budget of {limit} tool calls is spent. Give your final answer."
    _episode: Any = None

    def setup_core(self, limits: EpisodeLimits, call_format: ToolCallFormat, actions: Any, mask_truncated: bool) -> None:
        """Set the limits, the call format, the degenerate-action checks and the spaces (from the limits)."""
        self.limits = self.env_limits = limits
        self.format = call_format
        self.action_checks = ActionChecks.from_value(actions)
        self.mask_truncated = mask_truncated
        self.observation_space = limits.observation_space()
        self.action_space = limits.action_space()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Seed the environment's generator and work out the episode's limits: ``env_limits`` with the budget
        ``options["limits"]`` names (``UsageError`` for a key other than max_turns, max_tool_calls,
        max_format_errors, or a value that is not a positive integer). A subclass then starts the episode
        (:meth:`start_episode`); a reset that fails before that (an unknown task id) leaves the current
        episode as it was, its budget included."""
        self._next_limits = self.env_limits.for_episode((options or {}).get("limits"))
        super().reset(seed=seed, options=options)

    def start_episode(self, episode: Any) -> None:
        """Make ``episode`` the current one, under the limits its reset asked for."""
        self._episode = episode
        self.limits = self._next_limits

    @property
    def limits_overridden(self) -> bool:
        """Whether the current episode's budget came from its reset's ``options["limits"]``."""
        return self.limits is not self.env_limits

    # -- what the trainer adapters read (TRL, verl, SkyRL, OpenEnv, verifiers; envs/integrations/) -----

    @classmethod
    def for_adapters(cls, snapshot: Any, tasks: Any, split: str, **env_kwargs: Any) -> "TextEnv":
        """The environment a trainer adapter drives (``tool_format="openai"``, one call per step): by default
        ``cls(snapshot=..., tasks=..., split=..., **env_kwargs)`` without the arguments among ``snapshot``,
        ``split``, ``tools`` and ``max_calls_per_turn`` that the constructor does not take. An environment whose
        construction differs (other task sources, no tool whitelist) overrides it."""
        parameters = inspect.signature(cls.__init__).parameters
        if "tool_format" not in parameters and not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            raise UsageError(f"{cls.__name__} takes no tool_format: the trainer adapters step it in the 'openai' format")
        given = {"snapshot": snapshot, "tasks": tasks, "split": split, **env_kwargs}
        optional = ("snapshot", "split", "tools", "max_calls_per_turn")
        takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
        return cls(**{name: value for name, value in given.items()
                      if takes_any or name in parameters or name not in optional})

    def tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function definitions of every call the current episode accepts, the answer among them (what
        the adapters offer as functions; default: the ``registry``'s schemas)."""
        registry = getattr(self, "registry", None)
        if registry is None:
            raise UsageError(f"{type(self).__name__} has no tool registry: give it one or override tool_schemas()")
        return registry.schemas()

    def instructions(self) -> str:
        """The system message when the tools go to the model as functions (TRL, verl): the reset's system
        prompt without its tool list (the part before ``# Tools``); call after a reset."""
        head = self._episode.messages[0] if self._episode is not None and self._episode.messages else {}
        return head.get("content", "").split("\n\n# Tools", 1)[0] if head.get("role") == "system" else ""

    # -- the skeleton ---------------------------------------------------------------------

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Run the policy's text: tool calls give their results, an answer (or a limit) ends the episode.

        Raises ``RuntimeError`` if called before ``reset`` or after the episode
        ended, ``TypeError`` if ``action`` is not a string.
        """
        episode = self._episode
        check_step(episode is None or episode.done, action)
        step = StepOutcome(to_charset(action))
        episode.steps += 1
        self.begin_step(step, episode)
        if self.limits.over_long(step.action):
            step.ending = ("truncated", ACTION_TOO_LONG)
            step.observation = over_long_observation(step.action, self.limits.max_action_chars)
        else:
            self._act(step, episode)
        step.flags = self.action_checks.flags(step.action, format_error=step.format_error, over_long=step.over_long)
        if step.results:
            step.observation = self.format.render_results(step.results)
        step.observation = clip_observation(to_charset(step.observation), self.limits.max_observation_chars)
        self.record_step(step, episode)
        ending, reason = step.ending or ending_of(self.limits, episode.counts, self.turns(episode),
                                                  self.tool_calls(episode), self.context_tokens(episode))
        parts = None
        if ending is not None:
            episode.done = True
            parts = self.score(step, episode, ending)  # may complete the counts: before the info
        info = self.base_info()
        info.update(self.step_info(step, episode))
        reward = 0.0
        if parts is not None:
            reward = parts.total
            info.update(self.end_info(step, episode))
            info.update(ending_info(parts, ending, reason, self.mask_truncated))
            info.update(self.final_info(step, episode))
        return step.observation, reward, ending == "terminated", ending == "truncated", info

    def _act(self, step: StepOutcome, episode: EpisodeState) -> None:
        """Parse the action; count a format error, take an answer or run the calls."""
        parsed = step.parsed = self.format.parse(step.action)
        if parsed.error is not None:
            episode.counts.format_error += 1
            step.results, step.calls = [parsed.error_result()], [None]
        elif parsed.answer is not None:
            step.answer = parsed.answer
            self.on_answer(step, episode)
        else:
            step.calls = list(parsed.calls)
            step.results = [self._call_within_budget(call, episode) for call in parsed.calls]

    def _call_within_budget(self, call: ToolCall, episode: EpisodeState) -> ToolResult:
        """The call's result, or a refusal (not run) once the episode's call budget is spent."""
        if self.tool_calls(episode) >= self.limits.max_tool_calls:
            text = self.budget_note.format(limit=self.limits.max_tool_calls)
            episode.refused_calls += 1
            return ToolResult(name=str(call.name)[:100], text=text, flag="budget_exhausted", call_id=call.call_id)
        episode.calls_run += 1
        result = self.run_call(call, episode)
        episode.counts.count_result(result.flag)
        return result

    def render(self) -> str | None:
        """The latest message of the history (``render_mode="ansi"``)."""
        return latest_message(getattr(self, "render_mode", None), self._episode)

    # -- what an environment gives --------------------------------------------------------

    def begin_step(self, step: StepOutcome, episode: Any) -> None:
        """Note what the step starts from (default: nothing)."""

    def on_answer(self, step: StepOutcome, episode: Any) -> None:
        """Take the answer in ``step.parsed`` (default: it ends the episode, ``answered``)."""
        step.ending = ("terminated", "answered")

    def run_call(self, call: ToolCall, episode: Any) -> ToolResult:
        """Run one tool call (within the budget); its flag is counted by the core."""
        raise NotImplementedError

    def record_step(self, step: StepOutcome, episode: Any) -> None:
        """Add the step to the episode's history (default: the two messages and their characters)."""
        episode.messages += [{"role": "assistant", "content": step.action}, {"role": "user", "content": step.observation}]
        episode.chars += len(step.action) + len(step.observation)

    def turns(self, episode: Any) -> int:
        """Steps taken in the episode."""
        return episode.steps

    def tool_calls(self, episode: Any) -> int:
        """Tool calls run in the episode (what ``max_tool_calls`` bounds)."""
        return episode.calls_run

    def context_tokens(self, episode: Any) -> int:
        """Tokens of the conversation so far (what ``max_context_tokens`` bounds; default characters / 4)."""
        return episode.chars // 4

    def score(self, step: StepOutcome, episode: Any, ending: str) -> ScoredEpisode:
        """The reward parts of the ended episode (``total`` is the reward); counts it completes go into
        ``episode.counts`` (the last ``info`` is built after it)."""
        raise NotImplementedError

    def base_info(self) -> dict[str, Any]:
        """The ``info`` of every reset and step (default: the task, the package version and the counts)."""
        episode = self._episode
        return {"task_id": episode.task.task_id, "package_version": PACKAGE_VERSION, "turn": self.turns(episode),
                "tool_calls": self.tool_calls(episode), "refused_calls": episode.refused_calls,
                "hallucination_counts": episode.counts.as_dict(), **messages_info(episode)}

    @property
    def messages(self) -> list[dict[str, str]]:
        """The episode's whole message history (the managed context, with context management); ``info`` carries
        only each step's new messages (:mod:`stillweb.envs.core.messages`)."""
        return list(self._episode.messages) if self._episode is not None else []

    def step_info(self, step: StepOutcome, episode: Any) -> dict[str, Any]:
        """The ``info`` keys of a step (after :meth:`base_info`)."""
        return {"thought": step.thought, "tool_flags": [result.flag for result in step.results],
                "action_flags": list(step.flags)}

    def end_info(self, step: StepOutcome, episode: Any) -> dict[str, Any]:
        """The ``info`` keys of the last step before the reward parts (default: the answer)."""
        return {"answer": step.answer}

    def final_info(self, step: StepOutcome, episode: Any) -> dict[str, Any]:
        """The ``info`` keys of the last step after the reward parts (default: none)."""
        return {}
