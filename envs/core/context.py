"""Context management: keep a long episode's history dense and under a token budget.

After Kimi-Researcher's context manager (Moonshot AI, "Kimi-Researcher", 2025): the agent's
working memory keeps the question, its own actions and thoughts and the facts
it found, while noise goes: old page reads shrink to the passages that matched
the agent's queries, search results it never followed up are dropped, and, if
still over budget, the oldest tool results go first. Everything here is a pure
function of the history, so it is deterministic.

Token counting is pluggable: any ``Callable[[str], int]``. The default
:func:`approx_token_count` (UTF-8 bytes / 4) is fast and needs nothing;
:func:`tiktoken_counter` uses tiktoken when it is installed *and* its encoding is
cached (never downloads); any other tokenizer is one lambda away
(``lambda text: len(tokenizer.encode(text))``).

>>> manager = ContextManager(ContextConfig(budget_tokens=1000))
>>> head = [{"role": "system", "content": "tools..."}, {"role": "user", "content": "Who?"}]
>>> manager.build(head, [], render=lambda results: "").tokens
3
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from stillweb.corpora.search.analyzers import CJK_CHARACTER, analyzer_for
from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.sandboxes.tools.types import ToolResult

__all__ = [
    "TokenCounter",
    "approx_token_count",
    "tiktoken_counter",
    "ToolEvent",
    "Turn",
    "ContextConfig",
    "DroppedItem",
    "ManagedContext",
    "ContextManager",
]

TokenCounter = Callable[[str], int]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")  # Chinese and Japanese end sentences without a space
_TERM = re.compile(r"\w{3,}")


def approx_token_count(text: str) -> int:
    """A fast, dependency-free token estimate: UTF-8 bytes / 4, rounded up.

    >>> approx_token_count("hello world!")
    3
    """
    return (len(text.encode("utf-8", "surrogatepass")) + 3) // 4


def tiktoken_counter(encoding: str = "cl100k_base") -> TokenCounter | None:
    """A tiktoken counter if tiktoken is installed and ``encoding`` is cached locally, else None.

    Never downloads: an encoding that would have to be fetched yields None.
    """
    try:
        import tiktoken
        import tiktoken.load
    except ImportError:
        return None

    def refuse_download(*args: Any, **kwargs: Any) -> bytes:
        raise OSError("stillweb never downloads tokenizer files at run time")

    original = tiktoken.load.read_file
    tiktoken.load.read_file = refuse_download
    try:
        codec = tiktoken.get_encoding(encoding)
    except Exception:  # noqa: BLE001 - any failure to load means "not available offline"
        return None
    finally:
        tiktoken.load.read_file = original
    return lambda text: len(codec.encode(text, disallowed_special=()))


@dataclass(frozen=True)
class ToolEvent:
    """One tool call of a turn and its result, with the documents it involved.

    ``listed_docs`` are docs named in the result (search hits); ``opened_doc``
    is the document read in full, if the call was a page read.
    """

    name: str
    arguments: dict
    result: ToolResult
    listed_docs: tuple[int, ...] = ()
    opened_doc: int | None = None


@dataclass(frozen=True)
class Turn:
    """One step: the agent's action text and the tool events it caused."""

    action: str
    events: tuple[ToolEvent, ...]
    observation: str


@dataclass(frozen=True)
class ContextConfig:
    """Budget and compression settings.

    ``keep_recent_turns`` turns at the end stay verbatim; older page reads keep
    ``passages_per_page`` passages of at most ``passage_chars`` characters;
    older searches none of whose results was opened later are dropped when
    ``drop_unfollowed_searches`` (formats that cannot open documents, such as
    search_r1, turn it off); actions longer than ``max_action_chars`` are clipped.
    """

    budget_tokens: int = 16384
    keep_recent_turns: int = 1
    passages_per_page: int = 3
    passage_chars: int = 400
    max_action_chars: int = 4000
    drop_unfollowed_searches: bool = True
    search_tools: tuple[str, ...] = ("search",)
    page_tools: tuple[str, ...] = ("open",)

    def __post_init__(self) -> None:
        for name in ("budget_tokens", "passages_per_page", "passage_chars", "max_action_chars"):
            check_positive_int(f"ContextConfig.{name}", getattr(self, name))
        if self.keep_recent_turns < 0:
            raise UsageError(f"ContextConfig.keep_recent_turns must be >= 0, got {self.keep_recent_turns!r}")


@dataclass(frozen=True)
class DroppedItem:
    """One thing context management dropped or condensed: in turn ``turn`` (0-based), the
    ``kind`` (``action``, ``observation`` or a tool name) and why (``reason``: ``clipped``,
    ``search_not_followed``, ``page_condensed`` or ``over_budget``)."""

    turn: int
    kind: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """As ``info["context_dropped"]`` lists it."""
        return {"turn": self.turn, "kind": self.kind, "reason": self.reason}


@dataclass(frozen=True)
class ManagedContext:
    """The managed message list, its token count and what was dropped or condensed."""

    messages: tuple[dict[str, str], ...]
    tokens: int
    dropped: tuple[DroppedItem, ...]


class ContextManager:
    """Builds the agent's working context from the episode history.

    ``build`` is called by the environment after every step; ``render`` is the
    tool format's ``render_results``, so condensed results look like real ones.
    """

    def __init__(self, config: ContextConfig | None = None, counter: TokenCounter = approx_token_count) -> None:
        self.config = config or ContextConfig()
        self.counter = counter

    def build(
        self,
        head: Sequence[dict[str, str]],
        turns: Sequence[Turn],
        render: Callable[[list[ToolResult]], str],
    ) -> ManagedContext:
        """The managed context for ``head`` (system prompt, question) followed by ``turns``.

        >>> manager = ContextManager(ContextConfig(budget_tokens=10))
        >>> turn = Turn("search x", (), "x" * 400)
        >>> context = manager.build([{"role": "user", "content": "q"}], [turn, turn], render=lambda r: "")
        >>> [item.reason for item in context.dropped]
        ['over_budget']
        """
        config = self.config
        recent_from = max(len(turns) - config.keep_recent_turns, 0)
        opened_later = _docs_opened_after(turns)
        terms = _query_terms(turns, config)
        dropped: list[DroppedItem] = []
        actions: list[str] = []
        observations: list[str] = []
        for index, turn in enumerate(turns):
            action = turn.action
            if len(action) > config.max_action_chars:
                action = action[: config.max_action_chars] + " [...clipped]"
                dropped.append(DroppedItem(index, "action", "clipped"))
            actions.append(action)
            if index >= recent_from or not turn.events:
                observations.append(turn.observation)
                continue
            results = []
            for event in turn.events:
                kept, note = self._condense(event, opened_later[index], terms)
                results.append(kept)
                if note:
                    dropped.append(DroppedItem(index, event.name, note))
            observations.append(render(results))
        counts = [self.counter(message["content"]) for message in head]
        action_tokens = [self.counter(text) for text in actions]
        observation_tokens = [self.counter(text) for text in observations]
        total = sum(counts) + sum(action_tokens) + sum(observation_tokens)
        for index in range(recent_from):
            if total <= config.budget_tokens:
                break
            marker = "[tool results dropped to fit the context budget]"
            total += self.counter(marker) - observation_tokens[index]
            observations[index] = marker
            dropped.append(DroppedItem(index, "observation", "over_budget"))
        messages = list(head)
        for action, observation in zip(actions, observations):
            messages.append({"role": "assistant", "content": action})
            messages.append({"role": "user", "content": observation})
        return ManagedContext(messages=tuple(messages), tokens=total, dropped=tuple(dropped))

    def _condense(self, event: ToolEvent, opened_later: frozenset[int], terms: frozenset[str]) -> tuple[ToolResult, str]:
        config = self.config
        result = event.result
        unfollowed = result.ok and not opened_later.intersection(event.listed_docs)
        if event.name in config.search_tools and config.drop_unfollowed_searches and unfollowed:
            query = str(event.arguments.get("query", ""))[:80]
            text = f"[search {query!r}: {len(event.listed_docs)} results, none opened; dropped]"
            return replace(result, text=text, data=None), "search_not_followed"
        if event.name in config.page_tools and event.opened_doc is not None and result.ok:
            passages = _matching_passages(result.text, terms, config.passages_per_page, config.passage_chars)
            text = f"[page doc {event.opened_doc} condensed to the passages that matched]\n" + "\n...\n".join(passages)
            return replace(result, text=text, data=None), "page_condensed"
        return result, ""


def _docs_opened_after(turns: Sequence[Turn]) -> list[frozenset[int]]:
    """For each turn, the docs opened in that turn or any later one."""
    opened: set[int] = set()
    after: list[frozenset[int]] = []
    for turn in reversed(turns):
        opened.update(event.opened_doc for event in turn.events if event.opened_doc is not None)
        after.append(frozenset(opened))
    return after[::-1]


def _query_terms(turns: Sequence[Turn], config: ContextConfig) -> frozenset[str]:
    """Lower-cased words of every string argument the agent passed to a tool."""
    terms: set[str] = set()
    for turn in turns:
        for event in turn.events:
            for value in event.arguments.values():
                if isinstance(value, str):
                    terms.update(_terms(value))
    return frozenset(terms)


def _terms(text: str) -> set[str]:
    """Lower-cased words of three characters or more, and in Chinese, Japanese or Korean text the
    character pairs the bigram index uses (:mod:`stillweb.corpora.search.analyzers`): 长江入海口 shares 长江 with 长江流经上海."""
    terms = {term.casefold() for term in _TERM.findall(text)}
    if CJK_CHARACTER.search(text):
        terms.update(analyzer_for("zh").terms(text))
    return terms


def _matching_passages(text: str, terms: frozenset[str], count: int, max_chars: int) -> list[str]:
    """The ``count`` sentences sharing most terms with the queries, in page order."""
    sentences = [sentence.strip() for sentence in _SENTENCE_END.split(text) if sentence.strip()]
    scored = []
    for position, sentence in enumerate(sentences):
        words = _terms(sentence)
        scored.append((-len(words & terms), position))
    best = sorted(position for _, position in sorted(scored)[:count])
    return [sentences[position][:max_chars] for position in best]
