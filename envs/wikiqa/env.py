"""``stillweb/WikiQA-v0``: a multi-turn deep-research episode over a corpus snapshot.

``reset`` picks a task (from the seed, or ``options={"task_id": ...}``) and
returns the prompt: the system text with the tool descriptions in the
configured call format, then the question. Each ``step(text)`` parses the
policy's text into tool calls, runs them through the snapshot's tools and
returns their rendered results. The episode *terminates* when the agent
answers (or makes ``max_format_errors`` format errors) and is *truncated* when
a limit stops it (turns, tool calls, context tokens, an action longer than
``limits.max_action_chars``); ``info["mask_from_loss"]`` then recommends
dropping it from the loss rather than punishing it.

Every step's ``info["action_flags"]`` names the degenerate-action flags the
action raised (:mod:`stillweb.envs.core.degenerate`); the last step's
``info["episode_stats"]`` sums the episode up (:mod:`stillweb.envs.core.episode_stats`).

The reward is 0 until the end, then the configured combination of the parts in
``info["reward_parts"]`` (see :mod:`stillweb.envs.scoring.rewards`).

>>> import gymnasium as gym, stillweb.envs  # doctest: +SKIP
>>> env = gym.make("stillweb/WikiQA-v0", snapshot="snap/", tasks="default")  # doctest: +SKIP
>>> prompt, info = env.reset(seed=0)  # doctest: +SKIP
>>> obs, reward, terminated, truncated, info = env.step('<tool_call>{"name": "search", ...}</tool_call>')  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.store.export import search_r1_prompt
from stillweb.sandboxes.formats.search_r1 import transcript_answer
from stillweb.corpora.version import PACKAGE_VERSION
from stillweb.envs.core.context import (ContextConfig, ContextManager, DroppedItem, TokenCounter, ToolEvent, Turn,
                                        approx_token_count)
from stillweb.envs.core.degenerate import ActionChecks
from stillweb.envs.core.episode import EpisodeState, StepOutcome, TextEnv, check_render_mode
from stillweb.envs.core.episode_stats import EpisodeStats
from stillweb.envs.core.limits import EpisodeLimits, pop_action_cap
from stillweb.envs.core.messages import messages_info
from stillweb.corpora.snapshot.shared import shared_snapshot
from stillweb.envs.core.spaces import to_charset
from stillweb.envs.core.task_loader import TaskPicker, TaskSet, TaskSource, load_tasks
from stillweb.envs.core.turn_budget import turn_budget, warn_if_short
from stillweb.corpora.tasks.answer_match import normalize_answer
from stillweb.envs.core.counts import WikiQACounts
from stillweb.envs.scoring.rewards import RewardConfig
from stillweb.envs.wikiqa.citations import EpisodeTrace, RewardParts, score_episode
from stillweb.envs.wikiqa.prompt import INSTRUCTIONS, research_words
from stillweb.sandboxes import ToolCall, ToolRegistry, ToolResult
from stillweb.sandboxes.formats import get_format
from stillweb.sandboxes.frozen import FrozenTool
from stillweb.sandboxes.tools.answer import resolve_citations
from stillweb.sandboxes.tools.retrieval import SearchSettings, check_noise, check_retrieval
from stillweb.sandboxes.tools.search import SearchTool

__all__ = ["WikiQAEnv"]


@dataclass
class _Episode(EpisodeState):
    """Mutable state of the episode in progress."""

    head: list[dict[str, str]] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    tool_calls: int = 0
    context_tokens: int = 0
    observations: list[str] = field(default_factory=list)
    seen_docs: set[int] = field(default_factory=set)
    opened_docs: set[int] = field(default_factory=set)
    counts: WikiQACounts = field(default_factory=WikiQACounts)
    dropped: tuple[DroppedItem, ...] = ()
    frozen_sources: dict[str, int] = field(default_factory=dict)
    stats: EpisodeStats = field(default_factory=EpisodeStats)


class WikiQAEnv(TextEnv):
    """Multi-turn question answering with search/open/find tools over a snapshot.

    Args:
        snapshot: path of the snapshot directory (opened once per process).
        tasks: a task-set name inside the snapshot, a jsonl/parquet path, or a
            list of task dicts; ``None`` picks the snapshot's only (or first) task set.
        split: the split of a named task set.
        tool_format: ``"tongyi"`` (default), ``"openai"`` or ``"search_r1"``.
        format_options: the call format's options; ``search_r1``: ``parser`` (``"search_r1"`` | ``"strict"``),
            ``results`` (``"passages"`` | ``"snippets"``), ``search_k`` (:mod:`stillweb.sandboxes.formats.search_r1`).
        tools: whitelist of tool names (default: every tool).
        max_turns, max_tool_calls, max_calls_per_turn, max_context_tokens,
        max_format_errors, max_action_chars: see :class:`~stillweb.envs.core.limits.EpisodeLimits`.
            ``max_turns=None`` (default) is
            1.5x the task set's p99 reference steps and ``max_tool_calls=None`` that times
            ``max_calls_per_turn`` (:mod:`stillweb.envs.core.turn_budget`; ``info["limits"]``).
        reward: a :class:`RewardConfig` or a dict of its fields.
        context: ``None`` (off), ``True`` (default config), a :class:`ContextConfig`
            or a dict of its fields: manage the history under a token budget.
        token_counter: ``Callable[[str], int]`` for context tokens (default: bytes/4).
        mask_truncated: recommend masking truncated episodes from the loss.
        actions: an :class:`~stillweb.envs.core.degenerate.ActionChecks` or a dict of its
            fields: the degenerate-action thresholds.
        frozen_tools: frozen live tools to mount (a list of
            :class:`~stillweb.sandboxes.frozen.FrozenToolSpec` dicts): beside the snapshot's
            tools, or instead of the one of the same name. Their store fingerprints join
            ``info["tool_fingerprints"]``; every step's ``info["frozen_calls"]`` lists
            ``{"tool", "key", "source"}`` per frozen call and ``info["frozen"]`` counts the
            episode's ``live`` and ``not_recorded`` calls and each tool's ``on_miss``.
        retrieval: a retrieval ablation for every episode (:data:`~stillweb.sandboxes.tools.retrieval.RETRIEVAL_MODES`:
            ``golden``, ``none``, ``bm25``, ``dense``, ``hybrid``; ``None``: the policy's retriever argument rules).
        search_noise: the probability that a search result slot holds a seeded distractor
            (:mod:`~stillweb.sandboxes.tools.retrieval`). A reset's ``options`` may set both for one episode;
            ``info["retrieval"]`` reports them.
    """

    def __init__(
        self,
        snapshot: str | Path,
        tasks: TaskSource | None = None,
        split: str = "train",
        tool_format: str = "tongyi",
        tools: list[str] | None = None,
        max_turns: int | None = None,
        max_tool_calls: int | None = None,
        max_calls_per_turn: int = 4,
        max_context_tokens: int = 32768,
        max_format_errors: int | None = 3,
        reward: RewardConfig | Mapping[str, Any] | None = None,
        context: ContextConfig | Mapping[str, Any] | bool | None = None,
        token_counter: TokenCounter | None = None,
        mask_truncated: bool = True,
        actions: ActionChecks | Mapping[str, Any] | None = None,
        frozen_tools: list[Mapping[str, Any]] | None = None,
        render_mode: str | None = None,
        max_action_chars: int | None = None,
        retrieval: str | None = None,
        search_noise: float = 0.0,
        format_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.render_mode = check_render_mode(render_mode)
        self.snapshot = shared_snapshot(snapshot)
        self.retrieval, self.search_noise = check_retrieval(retrieval, self.snapshot), check_noise(search_noise)
        self.tasks: TaskSet = load_tasks(_default_task_set(self.snapshot.path) if tasks is None else tasks, self.snapshot.path, split)
        actions, action_cap = pop_action_cap(actions, max_action_chars)
        budget = turn_budget(self.tasks)
        if max_turns is not None:
            warn_if_short(max_turns, budget)
        limits = EpisodeLimits(budget.max_turns if max_turns is None else max_turns,
                               budget.tool_calls(max_calls_per_turn) if max_tool_calls is None else max_tool_calls,
                               max_calls_per_turn, max_context_tokens, max_format_errors,
                               **action_cap)
        self._limits_info = {"max_turns": limits.max_turns, "max_tool_calls": limits.max_tool_calls,
                             "p99_reference_steps": budget.p99_reference_steps,
                             "source": "task set" if max_turns is None else "explicit"}
        self.reward_config = RewardConfig.from_value(reward)
        self.context_manager = _context_manager(context, token_counter or approx_token_count, tool_format)
        self.count_tokens = token_counter or approx_token_count
        self.setup_core(limits, get_format(tool_format, **{**limits.format_options(), **dict(format_options or {})}),
                        actions, mask_truncated)
        if hasattr(self.format, "use_contents"):  # search_r1's passages view shows whole documents
            self.format.use_contents(self.snapshot.contents_of)
        self.frozen = [FrozenTool.from_spec(spec) for spec in frozen_tools or ()]
        self.registry = ToolRegistry(self.snapshot, tools=tools, extra=self.frozen)
        self.system_prompt = self.format.system_prompt(self.registry.schemas(), max_calls_per_turn=max_calls_per_turn,
                                                       words=research_words(self.format.name))
        self._picker = TaskPicker(self.tasks, "wikiqa")
        self._episode: _Episode | None = None
        self._search_settings = SearchSettings(self.retrieval, self.search_noise)

    def instructions(self) -> str:
        """The research assistant's instructions when the tools go to the model as functions (:data:`INSTRUCTIONS`)."""
        return INSTRUCTIONS

    # -- Gymnasium API ------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode: the task comes from ``options["task_id"]`` (or ``options["task"]``, a record) or,
        deterministically, the seed; ``options["limits"]`` may set this episode's turn and call budget
        (:meth:`~stillweb.envs.core.limits.EpisodeLimits.for_episode`; ``info["limits"]`` reports it);
        ``options["retrieval"]`` and ``options["search_noise"]`` set this episode's retrieval ablation and noise
        (``UsageError`` naming the allowed values; ``info["retrieval"]`` reports them).

        Without a seed, the n-th reset since the last seeded one picks a keyed task
        (:class:`~stillweb.envs.core.task_loader.TaskPicker`), so a run of resets is reproducible too.
        Raises ``ValueError`` for an unknown task id.
        """
        super().reset(seed=seed, options=options)
        retrieval, noise = self._episode_retrieval(options or {})
        task = self._picker.pick(seed, options)
        # An imported answerable task in the search_r1 format gets Search-R1's own prompt (its verl data's).
        prompt = search_r1_prompt(task.question) if self.format.name == "search_r1" and task.source and task.answerable else None
        head = ([{"role": "user", "content": prompt}] if prompt else
                [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": task.question}])
        self.start_episode(_Episode(task=task, messages=list(head), head=head))
        self._search_settings = SearchSettings(retrieval, noise, tuple(task.evidence_docs), task.golds,
                                               self.snapshot.fingerprint, task.task_id)
        self._set_search_settings(0)
        self._episode.context_tokens = sum(self.count_tokens(message["content"]) for message in head)
        observation = to_charset(prompt or f"{self.system_prompt}\n\n{task.question}")
        return observation, self.base_info()

    def close(self) -> None:
        """Forget the episode (the shared snapshot stays open for other envs); idempotent."""
        self._episode = None

    def _episode_retrieval(self, options: Mapping[str, Any]) -> tuple[str | None, float]:
        """The episode's (retrieval mode, search noise): the reset's options over the environment's."""
        retrieval = check_retrieval(options["retrieval"], self.snapshot) if "retrieval" in options else self.retrieval
        noise = check_noise(options["search_noise"]) if "search_noise" in options else self.search_noise
        if (retrieval is not None or noise > 0.0) and self._search_tool() is None:
            raise UsageError(f"retrieval={retrieval!r} and search_noise={noise!r} need the search tool; this "
                             f"environment offers {list(self.registry.names)}")
        return retrieval, noise

    def _search_tool(self) -> SearchTool | None:
        tool = self.registry.tool("search") if "search" in self.registry.names else None
        return tool if isinstance(tool, SearchTool) else None

    def _set_search_settings(self, turn: int) -> None:
        """Give the search tool the episode's settings at ``turn`` (the noise is keyed by it)."""
        tool = self._search_tool()
        if tool is not None:
            tool.settings = replace(self._search_settings, turn=turn)

    # -- the core's hooks ----------------------------------------------------------------

    def begin_step(self, step: StepOutcome, episode: _Episode) -> None:
        """Key the search noise by this step's turn (only the noise reads the turn: without it, nothing to do)."""
        if self._search_settings.search_noise > 0.0:
            self._set_search_settings(episode.steps)

    def on_answer(self, step: StepOutcome, episode: _Episode) -> None:
        """An answer (or abstention) ends the episode; its citations are resolved to doc ids."""
        step.extra["citations"] = resolve_citations(self.snapshot, step.parsed.citations)
        step.ending = ("terminated", "answered")
        if getattr(self.format, "parser", None) == "search_r1" and not step.parsed.abstained:  # what its reward reads
            step.answer = transcript_answer([message["content"] for message in episode.head], episode.turns, step.action)

    def run_call(self, call: ToolCall, episode: _Episode) -> ToolResult:
        """Run one call through the snapshot's tools."""
        episode.tool_calls += 1
        return self.registry.call(call)

    def record_step(self, step: StepOutcome, episode: _Episode) -> None:
        """Count the step's figures, note the docs it showed, extend the (managed) context."""
        episode.stats.add_step(len(step.action), [call for call in step.calls if call is not None], step.refused,
                               step.flags)
        events = tuple(self._record_result(call, result, episode) for call, result in zip(step.calls, step.results))
        step.extra["events"] = events
        episode.observations.append(step.observation)
        episode.turns.append(Turn(action=step.action, events=events, observation=step.observation))
        self._extend_context(step.action, step.observation, episode)

    def turns(self, episode: _Episode) -> int:
        return len(episode.turns)

    def tool_calls(self, episode: _Episode) -> int:
        return episode.tool_calls

    def context_tokens(self, episode: _Episode) -> int:
        return episode.context_tokens

    def step_info(self, step: StepOutcome, episode: _Episode) -> dict[str, Any]:
        info = {**super().step_info(step, episode), "shown_docs": self._shown_docs(step.extra["events"])}
        if self.frozen:
            info["frozen_calls"] = _frozen_calls(step.results, episode)
            info["frozen"] = self._frozen_summary(episode)
        return info

    def end_info(self, step: StepOutcome, episode: _Episode) -> dict[str, Any]:
        citations = step.extra.get("citations", [])
        return {"answer": step.answer,
                "cited_source_ids": [self._source_id(item.get("doc_id")) if isinstance(item, dict) else None
                                     for item in citations]}

    def final_info(self, step: StepOutcome, episode: _Episode) -> dict[str, Any]:
        return {"episode_stats": episode.stats.as_dict(episode.counts.format_error)}

    def _record_result(self, call: ToolCall | None, result: ToolResult, episode: _Episode) -> ToolEvent:
        """Note which docs a result showed or opened; the event for the context manager."""
        listed = result.shown_docs
        episode.seen_docs.update(listed)
        opened = result.opened_doc if result.ok else None
        if opened is not None:
            episode.opened_docs.add(opened)
        arguments = call.arguments if call is not None and isinstance(call.arguments, dict) else {}
        return ToolEvent(name=result.name, arguments=arguments, result=result, listed_docs=listed, opened_doc=opened)

    def _source_id(self, doc_id: Any) -> str | None:
        """The corpus's own id of ``doc_id`` (``None`` when it names no document)."""
        return self.snapshot.source_id_of(doc_id) if type(doc_id) is int and 0 <= doc_id < len(self.snapshot) else None

    def _shown_docs(self, events: tuple[ToolEvent, ...]) -> list[dict]:
        """``[{"doc_id", "source_id"}]`` of the documents this step's results showed, in order,
        so recorded trajectories keep the corpus's ids next to the dense doc ids."""
        doc_ids = dict.fromkeys(doc_id for event in events for doc_id in event.listed_docs)
        return [{"doc_id": doc_id, "source_id": self._source_id(doc_id)} for doc_id in doc_ids]

    def _extend_context(self, action: str, observation: str, episode: _Episode) -> None:
        if self.context_manager is None:
            new = [{"role": "assistant", "content": action}, {"role": "user", "content": observation}]
            episode.messages.extend(new)
            episode.context_tokens += sum(self.count_tokens(message["content"]) for message in new)
            return
        managed = self.context_manager.build(episode.head, episode.turns, self.format.render_results)
        episode.messages = list(managed.messages)
        episode.context_tokens = managed.tokens
        episode.dropped = managed.dropped

    def score(self, step: StepOutcome, episode: _Episode, ending: str) -> RewardParts:
        answer = step.answer
        cited = tuple(item.get("doc_id") if isinstance(item, dict) else None for item in step.extra.get("citations", []))
        trace = EpisodeTrace(
            answer=answer,
            abstained=bool(step.parsed is not None and step.parsed.abstained),
            steps=len(episode.turns),
            cited=cited,
            seen_docs=frozenset(episode.seen_docs),
            opened_docs=frozenset(episode.opened_docs),
            observation_text=normalize_answer("\n".join(episode.observations)) if answer is not None else "",
            counts=episode.counts,
        )
        parts = score_episode(episode.task, trace, self.reward_config)
        episode.counts = parts.counts  # the citation and answer counts: the last info shows the scored ones
        return parts

    def base_info(self) -> dict[str, Any]:
        episode = self._episode
        assert episode is not None
        info: dict[str, Any] = {
            "task_id": episode.task.task_id,
            "snapshot_fingerprint": self.snapshot.fingerprint,
            "package_version": PACKAGE_VERSION,
            "limits": self._episode_limits_info(),
            "retrieval": self._search_settings.as_info(),
            "turn": len(episode.turns),
            "tool_calls": episode.tool_calls,
            "refused_calls": episode.refused_calls,
            "context_tokens": episode.context_tokens,
            "hallucination_counts": episode.counts.as_dict(),
            **messages_info(episode),
        }
        if self.context_manager is not None:
            info["context_dropped"] = [item.to_dict() for item in episode.dropped]
        if self.frozen:
            info["tool_fingerprints"] = self.registry.fingerprints()
            info["frozen"] = self._frozen_summary(episode)
        return info

    def _episode_limits_info(self) -> dict[str, Any]:
        """``info["limits"]``: the episode's turn and call budget and where it comes from (``"reset"`` when
        the reset's ``options["limits"]`` set it)."""
        if not self.limits_overridden:
            return dict(self._limits_info)
        return {**self._limits_info, "max_turns": self.limits.max_turns, "max_tool_calls": self.limits.max_tool_calls,
                "source": "reset"}

    def _frozen_summary(self, episode: _Episode) -> dict[str, Any]:
        """How this episode's frozen tools answered: ``live`` and ``not_recorded`` call counts, each tool's ``on_miss``."""
        return {"live_calls": episode.frozen_sources.get("live", 0),
                "not_recorded": episode.frozen_sources.get("not_recorded", 0),
                "on_miss": {tool.name: tool.spec.on_miss for tool in self.frozen}}


def _frozen_calls(results: list[ToolResult], episode: _Episode) -> list[dict[str, str]]:
    """``{"tool", "key", "source"}`` of each frozen call among ``results``; counts their sources in ``episode``."""
    calls = []
    for result in results:
        frozen = result.data.get("frozen") if isinstance(result.data, dict) else None
        if isinstance(frozen, dict):
            calls.append({"tool": result.name, "key": frozen["key"], "source": frozen["source"]})
            episode.frozen_sources[frozen["source"]] = episode.frozen_sources.get(frozen["source"], 0) + 1
    return calls


def _default_task_set(snapshot_path: Path) -> str:
    names = sorted(path.name for path in (snapshot_path / "tasks").glob("*") if path.is_dir())
    if not names:
        raise UsageError(f"snapshot {snapshot_path} has no task sets under tasks/: pass tasks=... (a name, a file or a list)")
    return names[0]


def _context_manager(
    context: ContextConfig | Mapping[str, Any] | bool | None, counter: TokenCounter, tool_format: str
) -> ContextManager | None:
    """The context manager the ``context`` argument asks for (search_r1 cannot open, so keeps its searches)."""
    if context is None or context is False:
        return None
    if context is True:
        config = ContextConfig()
    elif isinstance(context, ContextConfig):
        config = context
    elif isinstance(context, Mapping):
        config = ContextConfig(**dict(context))
    else:
        raise TypeError(f"context must be None, a bool, a ContextConfig or a dict, got {type(context).__name__}")
    if tool_format == "search_r1":
        config = replace(config, drop_unfollowed_searches=False)
    return ContextManager(config, counter)
