"""BrowseComp-Plus queries: the lines of ``browsecomp_plus_decrypted.jsonl``, which
``scripts_build_index/decrypt_dataset.py`` of github.com/texttron/BrowseComp-Plus writes from the
Hugging Face dataset ``Tevatron/browsecomp-plus`` (split ``test``, 830 rows; every string but
``query_id`` is decrypted). Its data card's features, one line each:

- ``query_id``, ``query``, ``answer``: strings;
- ``gold_docs``, ``negative_docs``, ``evidence_docs``: lists of ``{"docid", "text"}`` (strings;
  ``url`` is a column of the corpus, ``Tevatron/browsecomp-plus-corpus``, not of these lists).

Evidence and gold documents are the evidence items, found by docid (a snapshot built from
``Tevatron/browsecomp-plus-corpus`` keeps it as the source id), evidence documents first. The
same judgements ship as TREC qrels (``topics-qrels/qrel_evidence.txt``, ``qrel_golds.txt``), read
with ``--qrels`` (:mod:`.qrels`) for a file that keeps only ``query_id``, ``query`` and
``answer`` (all that the repository's ``evaluate_run.py`` needs). Document texts are not copied
into ``extra`` (the snapshot holds them): each list becomes its docids.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import (EvidenceRef, FieldNames, QAFormat, RowError, SourceRow, answers_of,
                                                   required_text)

__all__ = ["BROWSECOMP_PLUS"]

_EVIDENCE_LISTS = ("evidence_docs", "gold_docs")
_DOC_LISTS = ("gold_docs", "negative_docs", "evidence_docs")  # the data card's order


def _docids(record: Mapping[str, Any], key: str) -> list[str]:
    """The docids of list ``key``; :class:`RowError` naming the item that is not ``{"docid", ...}``."""
    docs = record.get(key) or []
    if not isinstance(docs, list):
        raise RowError(f"{key!r} is {type(docs).__name__} {str(docs)[:80]!r}, not a list of {{'docid', 'text'}}", key)
    docids = []
    for index, doc in enumerate(docs):
        if not isinstance(doc, Mapping) or doc.get("docid") in (None, ""):
            raise RowError(f"{key}[{index}] is {str(doc)[:80]!r}: each document is {{'docid': ..., 'text': ...}}", key)
        docids.append(str(doc["docid"]))
    return docids


def _parse(record: Mapping[str, Any], fields: FieldNames) -> SourceRow:
    lists = {key: _docids(record, key) for key in _DOC_LISTS if key in record}
    evidence, seen = [], set()
    for key in _EVIDENCE_LISTS:
        for docid in lists.get(key, ()):
            if docid not in seen:
                seen.add(docid)
                evidence.append(EvidenceRef(source_id=docid, subject=docid, relation=key.removesuffix("s")))
    extra = {key: value for key, value in record.items() if key not in ("query_id", "query", "answer", *_DOC_LISTS)}
    extra.update(lists)
    return SourceRow(source_id=str(record["query_id"]) if record.get("query_id") is not None else None,
                     question=required_text(record, "query"), answers=answers_of(record.get("answer"), "answer"),
                     evidence=evidence, extra=extra)


BROWSECOMP_PLUS = QAFormat("browsecomp_plus", "BrowseComp-Plus decrypted queries: query_id, query, answer, gold_docs, "
                           "negative_docs, evidence_docs", lambda keys, fields: {"query_id", "query"} <= keys, _parse)
