"""The language a build indexes its text as, and the check that the choice suits the text.

:func:`choose_language` settles ``--language`` before the index is opened: the one given, else
the language the source declares (a dump's ``xml:lang``), else the one its first pages are
written in (:func:`~stillweb.corpora.search.analyzers.language_of_text`), said in the build's notes.
:class:`IndexingCheck` reads the first million characters of the documents as indexed and
warns when the chosen analyzer would index them poorly (no silent failure for any language).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain, islice

from stillweb.corpora.search.analyzers import ENGLISH, LANGUAGES, check_language, language_of_text, poor_indexing_warning, script_shares
from stillweb.corpora.snapshot.records import PreParsedPage, RawPage

__all__ = ["choose_language", "IndexingCheck"]

_SAMPLE_PAGES = 200  # the pages a build reads ahead to detect the language of its text
_CHECK_CHARS = 1_000_000


def choose_language(pages: Iterable, language: str | None, declared: str | None = None) -> tuple[Iterator, str, list[str]]:
    """``(pages, language, notes)``: the page stream (unchanged), the language to index, and what to tell the user.

    >>> _, language, notes = choose_language([RawPage("北京", "北京是中国的首都。", is_wikitext=False)], None)
    >>> language, notes
    ('zh', ['language: zh (detected: 100% of the letters are in scripts written without spaces; --language sets it)'])
    """
    if language is not None:
        return iter(pages), check_language(language), []
    if declared in LANGUAGES:  # English is said nowhere: every build before languages was English
        return iter(pages), declared, [] if declared == ENGLISH else [f"language: {declared} (declared by the source; --language sets it)"]
    stream = iter(pages)
    head = list(islice(stream, _SAMPLE_PAGES))
    texts = [_text_of(page) for page in head]
    detected, shares = language_of_text(text for text in texts if text)
    unknown = f"the source says {declared!r}, which has no analyzer; " if declared else ""
    notes = [] if detected == ENGLISH and not declared else [
        f"language: {detected} ({unknown}detected: {shares.bigram_share:.0%} of the letters are in scripts written "
        f"without spaces; --language sets it)"]
    return chain(head, stream), detected, notes


def _text_of(page: object) -> str:
    if isinstance(page, RawPage) and page.redirect is None:
        return f"{page.title}\n{page.text}"
    if isinstance(page, PreParsedPage):
        return f"{page.parsed.title}\n{page.parsed.text}"
    return ""


class IndexingCheck:
    """Collects the first million characters of indexed text; :meth:`warning` judges them for ``language``."""

    def __init__(self, language: str) -> None:
        self.language = language
        self._texts: list[str] = []
        self._chars = 0

    def add(self, text: str) -> None:
        """Take ``text`` (a document as indexed) into the sample while it is short of a million characters."""
        if self._chars < _CHECK_CHARS:
            self._texts.append(text[: _CHECK_CHARS - self._chars])
            self._chars += len(self._texts[-1])

    def warning(self) -> str | None:
        """The warning to print (the share, the flag to use), or ``None`` when the analyzer suits the text."""
        return poor_indexing_warning(script_shares(self._texts), self.language)
