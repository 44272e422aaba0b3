"""The Search-R1 format: ``<search>query</search>`` and ``<answer>...</answer>``.

Two parsers, chosen by ``parser``:

- ``"search_r1"`` (the default) reads a turn as Search-R1's rollout does
  (search_r1/llm_agent/generation.py): the text is cut after the first ``</search>``, else after the
  first ``</answer>`` (``_postprocess_responses``); the first ``<search>...</search>`` or
  ``<answer>...</answer>`` in it is the action, its content stripped (``postprocess_predictions``'
  ``<(search|answer)>(.*?)</\\1>``, found here with ``str.find``). Anything else around it is allowed (text
  after the answer, a second tag, a search inside an unclosed ``<think>``). A turn with neither tag is
  invalid: the observation is Search-R1's own invalid-action message (:data:`INVALID_ACTION`), counted as a
  format error. One addition: a turn with neither tag but ``<abstain>reason</abstain>`` abstains (stillweb's
  prompt for generated tasks offers it; Search-R1's prompt, used for imported tasks, does not).
- ``"strict"`` (stillweb's earlier parser): optional ``<think>...</think>``, then either up to
  ``max_calls_per_turn`` searches or one answer that ends the turn; anything else is a format error
  that says what was wrong.

A search becomes a call of the ``search`` tool with ``k = search_k`` results (3, as in Search-R1's
recipe). ``results`` chooses what the model sees: ``"passages"`` (the default) is exactly what
Search-R1's loop appends, ``"\\n\\n<information>" + _passages2string(top-k) .strip() + "</information>\\n\\n"``,
each hit as ``Doc i(Title: <first line of contents>) <rest of contents>`` over the whole passage (the
environment binds :meth:`SearchR1Format.use_contents` to the snapshot's ``contents_of``); ``"snippets"``
(stillweb's earlier view) shows ``<information>Doc i(Title: title) snippet</information>``. Any other
tool result is shown as its text inside ``<information>``. There are no citations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.arguments import check_positive_int
from stillweb.sandboxes.formats.base import (FormatProblem, ParsedAction, PromptWords, ToolCallFormat, abstention, find_blocks,
                                             split_thought)
from stillweb.sandboxes.tools.types import ToolCall, ToolResult

__all__ = ["SearchR1Format", "INVALID_ACTION", "SEARCH_R1_PARSERS", "SEARCH_R1_RESULTS", "search_r1_action", "rollout_cut",
           "last_answer", "transcript_answer"]

SEARCH_R1_PARSERS = ("search_r1", "strict")
SEARCH_R1_RESULTS = ("passages", "snippets")
# Search-R1's observation for a turn with no <search> or <answer> (generation.py, execute_predictions)
INVALID_ACTION = (
    "\nMy previous action is invalid. If I want to search, I should put the query between <search> and </search>. "
    "If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again.\n"
)

# Search-R1's own opening and closing (its question answering), the words of an environment that gives none.
SEARCH_R1_WORDS = PromptWords("Answer the given question.", "If after searching the information does not contain the "
                              "answer, reply <abstain> what is missing </abstain> instead of guessing.")

EXAMPLE = (
    "<think>I need the birthplace.</think>\n<search>Marie Curie birthplace</search>\nor\n<answer>Warsaw</answer>\n"
    "or, if the information does not contain the answer,\n<abstain>No document gives her birthplace.</abstain>"
)


class SearchR1Format(ToolCallFormat):
    """``<search>``/``<answer>`` tags; results in ``<information>``."""

    name = "search_r1"

    def __init__(self, max_calls_per_turn: int = 1, search_k: int = 3, parser: str = "search_r1",
                 results: str = "passages", **caps: int) -> None:
        super().__init__(max_calls_per_turn, **caps)
        self.search_k = check_positive_int("search_k", search_k)
        if parser not in SEARCH_R1_PARSERS:
            raise UsageError(f"unknown search_r1 parser {parser!r}; expected one of {', '.join(SEARCH_R1_PARSERS)}")
        if results not in SEARCH_R1_RESULTS:
            raise UsageError(f"unknown search_r1 results view {results!r}; expected one of {', '.join(SEARCH_R1_RESULTS)}")
        self.parser, self.results = parser, results
        self._contents: Callable[[int], str] | None = None

    def use_contents(self, contents_of: Callable[[int], str]) -> None:
        """Show whole passages: ``contents_of(doc_id)`` gives a hit's ``contents`` (``"Title"\\ntext``, as
        Search-R1's retriever serves it). Without it the passages view shows ``title\\nsnippet``."""
        self._contents = contents_of

    def _parse(self, text: str) -> ParsedAction:
        if self.parser == "search_r1":
            return self._parse_as_rollout(text)
        thought, action = split_thought(text)
        if "<information>" in action:
            raise FormatProblem("do not write <information>; the environment adds search results")
        abstained = abstention(find_blocks(action, "abstain"), action, thought)
        if abstained is not None:
            return abstained
        searches, answers = find_blocks(action, "search"), find_blocks(action, "answer")
        if answers:
            if len(answers) > 1:
                raise FormatProblem("more than one <answer>")
            if "<search>" in answers[0].inner:
                raise FormatProblem("a search inside the answer; search before answering")
            if searches:
                raise FormatProblem("either search or answer in one turn, not both")
            if action[answers[0].end :].strip():
                raise FormatProblem("text after </answer>; the answer must end the turn")
            return ParsedAction(answer=answers[0].inner.strip(), thought=thought)
        if not searches:
            raise FormatProblem("no <search> or <answer> found")
        self._check_count(len(searches))
        queries = [block.inner.strip() for block in searches]
        if not all(queries):
            raise FormatProblem("empty <search></search>; put keywords inside")
        calls = [ToolCall("search", {"query": query, "k": self.search_k}) for query in queries]
        return ParsedAction(calls=calls, thought=thought)

    def _parse_as_rollout(self, text: str) -> ParsedAction:
        tag, content, thought = search_r1_action(text)
        if tag == "search":
            return ParsedAction(calls=[ToolCall("search", {"query": content, "k": self.search_k})], thought=thought)
        if tag == "answer":
            return ParsedAction(answer=content, thought=thought)
        start = text.find("<abstain>")
        end = text.find("</abstain>", start + 1) if start != -1 else -1
        if end != -1:
            return ParsedAction(answer=text[start + len("<abstain>") : end].strip(), thought=thought, abstained=True)
        return ParsedAction(error=INVALID_ACTION, thought=thought)

    def write_call(self, name: str, arguments: dict[str, Any]) -> str:
        """``<search>`` tags (this format has only the search tool)."""
        if name != "search":
            raise UsageError(f"the search_r1 format has only the search tool, not {name!r}")
        return f"<search>{arguments['query']}</search>"

    def write_answer(self, text: str, citations: list[int]) -> str:
        """``<answer>`` tags (the format has no citations: they are left out)."""
        return f"<answer>{text}</answer>"

    def write_abstain(self, reason: str) -> str:
        """``<abstain>`` tags around the reason."""
        return f"<abstain>{reason}</abstain>"

    def how_to_call(self) -> str:
        """The expected forms, with examples."""
        return f"Search with <search>keywords</search>, answer with <answer>...</answer> or abstain with <abstain>...</abstain>, e.g.\n{EXAMPLE}"

    def render_results(self, results: list[ToolResult]) -> str:
        """Passages view: per result what Search-R1's loop appends (a format error as its text alone); snippets
        view: one ``<information>`` block per result, search hits as ``Doc i(Title: t) snippet``."""
        if self.results == "snippets":
            return "\n".join(f"<information>{_information(result)}</information>" for result in results)
        return "".join(result.text if result.flag == "format_error" else
                       f"\n\n<information>{self._passages(result).strip()}</information>\n\n" for result in results)

    def _passages(self, result: ToolResult) -> str:
        """Search-R1's ``_passages2string`` over the hits' whole contents (other results: their text)."""
        hits = _ranked_hits(result)
        if hits is None:
            return result.text
        reference = ""
        for rank, hit in hits:
            contents = self._contents(hit["doc_id"]) if self._contents else f"{hit['title']}\n{hit['snippet']}"
            title, _newline, text = contents.partition("\n")
            reference += f"Doc {rank}(Title: {title}) {text}\n"
        return reference

    def system_prompt(self, schemas: list[dict], max_calls_per_turn: int | None = None,
                      words: PromptWords | None = None) -> str:
        """The Search-R1 instruction (the search tool is implicit; ``schemas`` are not listed); an environment's
        ``words`` replace its opening and closing sentences (default :data:`SEARCH_R1_WORDS`)."""
        limit = max_calls_per_turn or self.max_calls_per_turn
        words = words or SEARCH_R1_WORDS
        return (
            f"{words.role} You must conduct reasoning inside <think> and </think> first every time "
            "you get new information. After reasoning, if you find you lack some knowledge, you can call a search "
            f"engine by <search> query </search> (at most {limit} per turn) and it will return the top searched "
            "results between <information> and </information>. You can search as many times as you want. "
            "If you find no further external knowledge needed, you can directly provide the answer inside "
            "<answer> and </answer>, without detailed illustrations. For example, <answer> Beijing </answer>. "
            + words.finish_text("<answer> Beijing </answer>", "<abstain> what is missing </abstain>", SEARCH_R1_WORDS.finish)
        )


def search_r1_action(text: str) -> tuple[str | None, str, str]:
    """(``"search"``, ``"answer"`` or ``None``; the tag's stripped content; the thought) as Search-R1's rollout
    reads ``text``: cut after the first ``</search>``, else after the first ``</answer>``, then the first
    complete ``<search>`` or ``<answer>`` block. Linear time (``str.find``): the first opening of a tag
    with a closing after it is the only one that can match.

    >>> search_r1_action("<think>maybe <search>foo</search></think><answer>x</answer>")
    ('search', 'foo', 'maybe')
    >>> search_r1_action("<answer> Paris </answer> and <answer>Lyon</answer>")
    ('answer', 'Paris', '')
    """
    cut = rollout_cut(text)
    found: tuple[int, str, str] | None = None
    for tag in ("search", "answer"):
        start = cut.find(f"<{tag}>")
        end = cut.find(f"</{tag}>", start + len(tag) + 2) if start != -1 else -1
        if end != -1 and (found is None or start < found[0]):
            found = (start, tag, cut[start + len(tag) + 2 : end].strip())
    if found is None:
        return None, "", _loose_thought(cut)
    return found[1], found[2], _loose_thought(cut[: found[0]])


def rollout_cut(text: str) -> str:
    """``text`` up to its first ``</search>``, else its first ``</answer>`` (Search-R1's ``_postprocess_responses``).

    >>> rollout_cut("<answer>a</answer><search>b</search> more")
    '<answer>a</answer><search>b</search>'
    """
    for closing in ("</search>", "</answer>"):
        end = text.find(closing)
        if end != -1:
            return text[: end + len(closing)]
    return text


def last_answer(transcript: str) -> str | None:
    """The answer Search-R1's reward reads (qa_em.py's ``extract_solution``, verl's ``search_r1_like_qa_em``):
    the content, stripped, of the last ``<answer>(.*?)</answer>`` match of ``re.finditer`` over the whole
    transcript (prompt, turns as cut, observations); ``None`` without one. Linear (``str.find``).

    >>> last_answer("<answer> Beijing </answer> ... <answer>x <answer>Ostra</answer>")
    'x <answer>Ostra'
    """
    found, position = None, 0
    while (start := transcript.find("<answer>", position)) != -1:
        end = transcript.find("</answer>", start + len("<answer>"))
        if end == -1:
            break
        found, position = transcript[start + len("<answer>") : end], end + len("</answer>")
    return found.strip() if found is not None else None


def transcript_answer(prompt: list[str], turns: Iterable[Any], action: str) -> str | None:
    """:func:`last_answer` of an episode's transcript as Search-R1's reward sees it: the prompt's messages,
    each earlier turn (``.action`` cut by :func:`rollout_cut`, then ``.observation``), this action cut."""
    transcript = "\n\n".join(prompt) + "".join(rollout_cut(turn.action) + turn.observation for turn in turns)
    return last_answer(transcript + rollout_cut(action))


def _loose_thought(text: str) -> str:
    """The reasoning before the action: the text with its think tags removed (an unclosed ``<think>`` too)."""
    return text.replace("<think>", " ").replace("</think>", " ").strip()


def _ranked_hits(result: ToolResult) -> list[tuple[int, dict]] | None:
    """``(rank within its query, hit)`` of a search result's hits, query after query; ``None`` for any other result."""
    data = result.data if result.flag is None and result.name == "search" and isinstance(result.data, dict) else None
    if data is None or "queries" not in data:
        return None
    return [(rank, hit) for query in data["queries"] for rank, hit in enumerate(query["results"], 1)]


def _information(result: ToolResult) -> str:
    hits = _ranked_hits(result)
    if hits is None:
        return result.text
    return "\n".join(f"Doc {rank}(Title: {hit['title']}) {hit['snippet']}" for rank, hit in hits) or "No results."
