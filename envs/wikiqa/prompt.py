"""WikiQA-v0's own words: what the research assistant is told.

The system prompt is these words around the call format's tool list and syntax
(:meth:`~stillweb.sandboxes.formats.base.ToolCallFormat.system_prompt`): :func:`research_words` gives the
role line and the closing (answer with citations, or abstain) written for each format's syntax; in the
``search_r1`` format the prompt is Search-R1's own instruction. :data:`INSTRUCTIONS` is the system message
when the tools go to the model as functions (TRL, verl, the SFT export).

>>> research_words("tongyi").role.startswith("You are a research assistant.")
True
>>> research_words("search_r1") is None
True
"""

from __future__ import annotations

from stillweb.sandboxes.formats.base import PromptWords

__all__ = ["INSTRUCTIONS", "research_words"]

INSTRUCTIONS = (
    "You are a research assistant. Use the tools to search the document collection, open and read "
    "documents, and answer only when the evidence supports the answer. Finish by calling the answer "
    "tool with the answer text and the doc ids you cite."
)
_ABSTAIN = "If after searching the documents do not contain the answer,"
_RESEARCH_WORDS = {
    "tongyi": PromptWords(
        "You are a research assistant. Think step by step inside <think></think>, use the tools to find "
        "evidence, and answer only when the evidence supports it.",
        "When you know the answer, write it inside <answer></answer>, optionally followed by "
        "<citations></citations> listing the doc ids or titles of supporting documents, separated by ';'. "
        f"Example:\n{{example_answer}}\n{_ABSTAIN} say so instead of guessing:\n{{example_abstain}}"),
    "openai": PromptWords(
        "You are a research assistant. Use the tools to find evidence and answer only when it supports the answer.",
        "To finish, call the answer function alone, citing doc ids or titles:\n{example_answer}\n"
        f"{_ABSTAIN} abstain instead of guessing:\n{{example_abstain}}"),
    "search_r1": None,  # Search-R1's own instruction: the research question answering it was trained on
}
_RESEARCH_ROLE = PromptWords(_RESEARCH_WORDS["openai"].role)  # another format: the role line alone


def research_words(format_name: str) -> PromptWords | None:
    """WikiQA-v0's words for the call format ``format_name`` (``None``: the format's own, Search-R1's)."""
    return _RESEARCH_WORDS.get(format_name, _RESEARCH_ROLE)
