"""Gold evidence to snapshot doc ids: by the corpus's own id, else by title (redirects and case
folded, :meth:`~stillweb.corpora.snapshot.reading.Snapshot.resolve`), else by the passage that holds the
supporting text (BM25 over the text, then a containment check).

When the source gives the supporting text (MuSiQue paragraphs, HotpotQA sentences, KILT spans), the
item maps to the passage that holds it: among the passages of its title (a title names several in a
passage snapshot and in wiki-18, whose articles are cut into 100-word rows) the first holding all of
it, else its first or last eight words (a sentence longer than a passage), else the first of two it
runs across; else any passage BM25 finds holding it; by the title alone only when no passage does. An item that maps to nothing gets a reason, one of :data:`UNMAPPED_REASONS`.
"""

from __future__ import annotations

from functools import cached_property

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.answer_match import qa_normalize
from stillweb.corpora.tasks.importers.base import EvidenceRef

__all__ = ["DocTexts", "EvidenceMapper", "UNMAPPED_REASONS"]

UNMAPPED_REASONS = {
    "bad_doc_id": "a doc id outside the snapshot",
    "other_snapshot": "a doc id of another snapshot (a stillweb export made over a different snapshot)",
    "missing_source_id": "the corpus id is not in the snapshot (and no title or text to fall back on)",
    "missing_title": "no page has the title, a redirect to it or the supporting text",
    "text_not_found": "no passage holds the supporting text",
    "no_reference": "the item names no id, title or text",
}
_SEARCH_DEPTH = 10
_EDGE_WORDS = 8
_TEXT_CACHE = 4096  # raw texts: enough for the passages of one task's pages
_NORMALIZED_CACHE = 100_000  # normalized texts: evidence pages recur across questions


def squash(text: str) -> str:
    """``text`` with runs of whitespace as one space, stripped."""
    return " ".join(text.split())


class DocTexts:
    """Passages and texts of one snapshot's documents, read (and answer-normalized) once per import:
    the answer check scans the passages the evidence mapping has just read (bounded caches, cleared
    when full)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._passages: dict[int, tuple[int, ...]] = {}
        self._texts: dict[int, str] = {}
        self._normalized: dict[int, str] = {}

    def passages(self, doc: int) -> tuple[int, ...]:
        """:meth:`~stillweb.corpora.snapshot.reading.Snapshot.passages_of` ``doc``."""
        passages = self._passages.get(doc)
        if passages is None:
            if len(self._passages) >= _TEXT_CACHE:
                self._passages.clear()
            passages = tuple(self.snapshot.passages_of(doc))
            self._passages.update(dict.fromkeys(passages, passages))  # every passage of the page has them
        return passages

    def text(self, doc: int) -> str:
        """The text of ``doc``."""
        text = self._texts.get(doc)
        if text is None:
            if len(self._texts) >= _TEXT_CACHE:
                self._texts.clear()
            text = self._texts[doc] = self.snapshot.text_of(doc)
        return text

    def normalized(self, doc: int) -> str:
        """``doc``'s text after :func:`~stillweb.corpora.tasks.answer_match.qa_normalize`, padded with a
        space each side (so a padded gold is found only as whole words)."""
        normalized = self._normalized.get(doc)
        if normalized is None:
            if len(self._normalized) >= _NORMALIZED_CACHE:
                self._normalized.clear()
            normalized = self._normalized[doc] = f" {qa_normalize(self.text(doc))} "
        return normalized


class EvidenceMapper:
    """Maps :class:`EvidenceRef` s to doc ids of one snapshot (caches the source-id table; the texts
    it reads stay in :attr:`texts` for the answer check)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.texts = DocTexts(snapshot)

    @cached_property
    def _by_source_id(self) -> dict[str, int]:
        table = self.snapshot.documents  # memory-mapped, row = doc id (a sharded snapshot's too)
        ids = table.column("source_id").to_pylist() if "source_id" in table.column_names else []
        return {source_id: doc_id for doc_id, source_id in enumerate(ids) if source_id}

    def map(self, ref: EvidenceRef) -> tuple[int | None, str | None]:
        """``(doc_id, None)`` for a mapped item, ``(None, reason)`` otherwise."""
        if ref.doc_id >= 0:
            if ref.snapshot and ref.snapshot != self.snapshot.fingerprint:
                return None, "other_snapshot"
            return (ref.doc_id, None) if ref.doc_id < len(self.snapshot) else (None, "bad_doc_id")
        text = squash(ref.text)
        if ref.source_id:
            doc = self._by_source_id.get(ref.source_id)
            if doc is None:
                doc = self._by_source_id.get(f"{ref.source_id}-0")  # the first passage of a split page
            if doc is not None:
                return self._in_page(doc, text) if text else doc, None
            if not ref.title and not text:
                return None, "missing_source_id"
        if ref.title:
            doc = self.snapshot.resolve(ref.title)
            if doc is not None and not text:
                return doc, None
            if doc is not None:  # the passage that holds the text, by the title only when no passage does
                holder = self._in_page(doc, text, fallback=None)
                if holder is None:
                    holder = self._search_text(text)
                return (holder if holder is not None else doc), None
            holder = self._search_text(text) if text else None
            return (holder, None) if holder is not None else (None, "missing_title")
        if text:
            holder = self._search_text(text)
            return (holder, None) if holder is not None else (None, "text_not_found")
        return None, "no_reference"

    def _in_page(self, doc: int, text: str, fallback: int | None = -1) -> int | None:
        """The passage of ``doc``'s title holding ``text``: the first holding all of it, else the first holding its
        first or last eight words, else the one where it starts and runs on into the next passage; else ``doc``
        (or ``fallback`` when given). All of the text first: in a corpus whose title repeats over many passages
        (wiki-18, MuSiQue's paragraphs) a passage and the next one together hold the next one's text too."""
        passages = self.texts.passages(doc)
        texts = [squash(self.texts.text(passage)) for passage in passages]
        for index, passage in enumerate(passages):
            if text in texts[index]:
                return passage
        for index, passage in enumerate(passages):
            if holds(texts[index], text):
                return passage
        for index, passage in enumerate(passages[:-1]):
            if text in texts[index] + " " + texts[index + 1]:
                return passage
        return doc if fallback == -1 else fallback

    def _search_text(self, text: str) -> int | None:
        """The first of the top BM25 hits for ``text`` that holds it."""
        for hit in self.snapshot.search(text[:2000], k=_SEARCH_DEPTH):
            if holds(self.texts.text(hit.doc_id), text):
                return hit.doc_id
        return None


def holds(document: str, text: str) -> bool:
    """``document`` contains ``text`` (whitespace squashed), or, for a text of more than
    eight words, its first or last eight words (a sentence cut by a passage boundary).

    >>> holds("a b  c d", "b c"), holds("one two", "three")
    (True, False)
    """
    document = squash(document)
    if text in document:
        return True
    words = text.split()
    return len(words) > _EDGE_WORDS and (" ".join(words[:_EDGE_WORDS]) in document
                                         or " ".join(words[-_EDGE_WORDS:]) in document)
