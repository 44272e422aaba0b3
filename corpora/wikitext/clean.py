"""Tidying rendered text: leftover markup the tokenizer kept as text, spacing, blank lines."""

from __future__ import annotations

import re

from stillweb.corpora.wikitext.titles import SPACES_RE, namespace_kind

__all__ = ["clean_text", "clean_value", "MARKUP_RE", "COMMENT_RE"]


def clean_text(text: str) -> str:
    """Tidy rendered text and remove any markup the parser left as plain text.

    Broken tables or unclosed tags are tokenized as text by mwparserfromhell;
    these regular expressions remove what is left of them, so no ``{{``,
    ``[[``, ``'''``, ``<ref`` or table syntax reaches the plaintext.
    """
    text = text.replace("\xa0", " ").replace("\u200b", "")
    text = COMMENT_RE.sub("", text)
    text = _LEFTOVER_REF_RE.sub("", text)
    text = _strip_leftover_brackets(text)
    text = _POSSESSIVE_AFTER_STYLE_RE.sub("'s", text)
    text = _TABLE_LINE_RE.sub("", text)
    text = _CELL_ATTRIBUTES_RE.sub("", text)
    text = _CELL_SEPARATOR_RE.sub(" | ", text)
    text = _EMPTY_BRACKETS_RE.sub("", text)
    text = _OPEN_BRACKET_PUNCTUATION_RE.sub("(", text)
    while MARKUP_RE.search(text):  # a removal can join the halves of a new token
        text = MARKUP_RE.sub("", text)
    text = SPACES_RE.sub(" ", text)
    text = _SPACE_BEFORE_PUNCTUATION_RE.sub(r"\1", text)
    lines = (line.strip() for line in text.split("\n"))
    text = "\n".join(line for line in lines if line not in ("-", "|"))
    return _BLANK_LINES_RE.sub("\n\n", text).strip()


def _strip_leftover_brackets(text: str) -> str:
    """Resolve ``[[links]]`` and drop ``{{templates}}`` the tokenizer left as text, innermost first."""
    for _ in range(_MAX_LEFTOVER_NESTING):
        resolved = _LEFTOVER_LINK_RE.sub(_leftover_link_text, _LEFTOVER_TEMPLATE_RE.sub("", text))
        if resolved == text:
            break
        text = resolved
    return text


def _leftover_link_text(match: re.Match[str]) -> str:
    target, _, shown = match[1].partition("|")
    if namespace_kind(target) in ("file", "category", "interlanguage"):
        return ""
    return shown.rsplit("|", 1)[-1] if shown else target.lstrip(":")


def clean_value(text: str) -> str:
    """A one-line infobox value: clean text with list markers and stray punctuation removed."""
    lines = (line.removeprefix("- ").strip() for line in clean_text(text).split("\n"))
    return " ".join(line for line in lines if line).strip(" ,;:")


COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_LEFTOVER_REF_RE = re.compile(r"<ref\b[^>/]*/>|<ref\b[^>]*>.*?</ref\s*>", re.DOTALL | re.IGNORECASE)
_LEFTOVER_TEMPLATE_RE = re.compile(r"\{\{[^{}]*\}\}")
_LEFTOVER_LINK_RE = re.compile(r"\[\[([^\[\]]*)\]\]")
_MAX_LEFTOVER_NESTING = 8
_POSSESSIVE_AFTER_STYLE_RE = re.compile(r"'''s\b")
_TABLE_LINE_RE = re.compile(r"^[ \t]*(?:\{\||\|\}|\|-|\|\+)[^\n]*$|^[ \t]*[|!](?![|!])[ \t]*", re.MULTILINE)
_CELL_ATTRIBUTES_RE = re.compile(
    r"""(?:\b(?:style|align|class|rowspan|colspan|width|height|bgcolor|valign|scope)\s*=\s*"""
    r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s|]+)\s*)+\|(?!\|)"""
)
_CELL_SEPARATOR_RE = re.compile(r"[ \t]*(?:\|\||!!)[ \t]*")
MARKUP_RE = re.compile(
    r"\{\{|\}\}|\[\[|\]\]|\{\||\|\}|\|-|\|\||'{2,}|</?ref\b[^>]*>?|</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>|__[A-Z]+__"
)
_EMPTY_BRACKETS_RE = re.compile(r"\(\s*[;,:]?\s*\)|\[\s*\]")
_OPEN_BRACKET_PUNCTUATION_RE = re.compile(r"\(\s*[;,]\s*")
_SPACE_BEFORE_PUNCTUATION_RE = re.compile(r" ([,.;:)])")
_BLANK_LINES_RE = re.compile(r"\n{3,}")
