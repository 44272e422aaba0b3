"""What a build did with every source row: read, written, skipped by reason.

Passage corpora (KILT, BEIR, FlashRAG's ``wiki-18``) are scored against qrels by
their own ids, so a build must never drop or merge a row without saying so.
:class:`RowAccount` is the one place that decides what happens to a row:

- a reader's :class:`~stillweb.corpora.snapshot.records.SkippedRow` is counted under its
  reason (``strict`` turns the first one into a :class:`RowSkipError`);
- the ``dedupe`` policy (``none``, ``id``, ``title``, ``text``) skips later rows
  whose source id, title or text repeats an earlier one (reason ``duplicate_id``,
  ``duplicate_title``, ``duplicate_text``);
- a repeated source id is an error naming both rows unless ``dedupe="id"``.

Memory per written row (issue 48: a wiki-18 build must not grow with the corpus): 8 bytes (its read
ordinal), its 64-bit id hash twice (in doc order, to name the first row of a repeated id, and in a
:class:`~stillweb.corpora.build.bounded.DigestSet` for the check, 9 bytes) and, for a title or text
policy, that hash in another digest set; no row text is kept.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

from stillweb.corpora.build.bounded import DigestSet, digest
from stillweb.corpora.errors import DataError, UsageError

__all__ = ["RowAccount", "RowSkipError", "DEDUPE_POLICIES", "describe_rows"]

DEDUPE_POLICIES = ("none", "id", "title", "text")
_EXAMPLES_PER_REASON = 5


class RowSkipError(DataError):
    """``strict`` build stopped at a row it would have skipped, or two rows share a source id."""


class RowAccount:
    """Counts of one build's rows and the dedupe policy that decides them.

    >>> account = RowAccount(dedupe="title")
    >>> account.admit("Paris", "a", "1", "c.jsonl:row 1"), account.admit("Paris", "b", "2", "c.jsonl:row 2")
    (True, False)
    >>> account.summary()["skipped"]
    {'duplicate_title': 1}
    """

    def __init__(self, dedupe: str = "none", strict: bool = False) -> None:
        if dedupe not in DEDUPE_POLICIES:
            raise UsageError(f"dedupe must be one of {', '.join(DEDUPE_POLICIES)}, got {dedupe!r}")
        self.dedupe = dedupe
        self.strict = strict
        self.read = 0
        self.written = 0
        self.redirects = 0
        self.missing_title = 0  # rows without a title (their source id became the title)
        self.skipped: dict[str, int] = {}
        self.examples: dict[str, list[str]] = {}
        self._seen_ids = DigestSet(8)  # hashes of the written rows' source ids
        self._id_hashes = bytearray()  # each written doc's source id hash (zeros: no id), in doc order
        self._seen_keys = DigestSet(8)  # hashes of titles or texts (dedupe title|text)
        self._doc_rows = array("q")  # read ordinal (1-based) of each written doc
        self._files: list[tuple[int, str]] = []  # (first ordinal, file label) as positions change file

    def _note_read(self, position: str) -> None:
        self.read += 1
        label = position.rpartition(":")[0]
        if not self._files or self._files[-1][1] != label:
            self._files.append((self.read, label))

    def skip(self, reason: str, position: str, detail: str = "") -> None:
        """Count one row skipped for ``reason`` (or raise :class:`RowSkipError` when strict)."""
        self._note_read(position)
        self._count_skip(reason, position, detail)

    def _count_skip(self, reason: str, position: str, detail: str) -> None:
        message = f"{position}: {reason}" + (f": {detail}" if detail else "")
        if self.strict:
            raise RowSkipError(f"{message} (--strict stops at the first skipped row)")
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        examples = self.examples.setdefault(reason, [])
        if len(examples) < _EXAMPLES_PER_REASON:
            examples.append(message)

    def add_skipped(self, reason: str, count: int, examples: Sequence[str] = ()) -> None:
        """Count ``count`` rows a reader skipped on its own (a dump's unreadable pages), with the first
        of its ``examples`` (notes naming them)."""
        if count:
            self.read += count
            self.skipped[reason] = self.skipped.get(reason, 0) + count
            kept = self.examples.setdefault(reason, [])
            kept.extend(examples[:max(_EXAMPLES_PER_REASON - len(kept), 0)])
            if not kept:
                del self.examples[reason]

    def redirect(self, position: str) -> None:
        """Count one redirect row (it becomes an alias, not a document)."""
        self._note_read(position)
        self.redirects += 1

    def admit(self, title: str, text: str, source_id: str, position: str) -> bool:
        """Whether the row at ``position`` becomes the next document (counts it either way).

        Raises :class:`RowSkipError` when its non-empty ``source_id`` repeats an earlier
        row's and the policy is not ``id``.
        """
        self._note_read(position)
        id_hash = digest(source_id) if source_id else None
        if id_hash is not None and id_hash in self._seen_ids:
            if self.dedupe == "id":
                self._count_skip("duplicate_id", position, f"source id {source_id!r}")
                return False
            first = self._position_of(self._first_doc_with(id_hash))
            raise RowSkipError(
                f"duplicate source id {source_id!r}: {first} and {position}; "
                "ids must be unique (use --dedupe id to keep the first row of each id)"
            )
        if self.dedupe in ("title", "text"):
            if not self._seen_keys.add(digest(title if self.dedupe == "title" else text)):
                self._count_skip(f"duplicate_{self.dedupe}", position, f"{self.dedupe} repeats an earlier row's")
                return False
        if id_hash is not None:
            self._seen_ids.add(id_hash)
        self._id_hashes += id_hash or bytes(8)
        self._doc_rows.append(self.read)
        self.written += 1
        return True

    def _first_doc_with(self, id_hash: bytes) -> int:
        """The first written doc whose source id has ``id_hash`` (one that is known to be there)."""
        hashes = np.frombuffer(bytes(self._id_hashes), dtype=">u8")
        return int(np.flatnonzero(hashes == int.from_bytes(id_hash, "big"))[0])

    def _position_of(self, doc_id: int) -> str:
        """``file:row N`` of the row that became ``doc_id`` (rows count every row of the file)."""
        ordinal = self._doc_rows[doc_id]
        first, label = max((start, name) for start, name in self._files if start <= ordinal)
        return f"{label}:row {ordinal - first + 1}" if label else f"row {ordinal} of the source"

    def summary(self) -> dict:
        """The counts for the manifest: read, written, redirects, skipped (and examples) by reason."""
        return {
            "read": self.read,
            "written": self.written,
            "redirects": self.redirects,
            "missing_title": self.missing_title,
            "skipped": dict(sorted(self.skipped.items())),
            "skipped_examples": {reason: self.examples[reason] for reason in sorted(self.examples)},
            "dedupe": self.dedupe,
        }


def describe_rows(summary: dict) -> str:
    """One console line for a :meth:`RowAccount.summary`:
    ``rows: read 10, written 8, skipped 2 (empty_text 1, not_json 1)``."""
    skipped = summary.get("skipped", {})
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(skipped.items()))
    line = f"rows: read {summary['read']}, written {summary['written']}"
    if summary.get("redirects"):
        line += f", redirects {summary['redirects']}"
    if summary.get("missing_title"):
        line += f", missing_title {summary['missing_title']} (titled by their id)"
    return line + f", skipped {sum(skipped.values())}" + (f" ({reasons})" if reasons else "")
