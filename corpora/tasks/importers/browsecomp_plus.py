"""BrowseComp-Plus queries (``Tevatron/browsecomp-plus``, decrypted): ``query_id``, ``query``,
``answer``, ``evidence_docs`` and ``gold_docs`` (each ``{"docid", "text", "url"}``, or plain
docids), ``negative_docs``. Evidence and gold documents are the evidence items, found by docid
(a snapshot built from ``browsecomp-plus-corpus`` keeps it as the source id). Document texts are
not copied into ``extra`` (the snapshot holds them): their docids and urls are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stillweb.corpora.tasks.importers.base import EvidenceRef, FieldNames, QAFormat, SourceRow, answers_of, required_text

__all__ = ["BROWSECOMP_PLUS"]

_DOC_LISTS = ("evidence_docs", "gold_docs", "negative_docs")


def _docid(doc: Any) -> str:
    return str(doc.get("docid") if isinstance(doc, Mapping) else doc)


def _parse(record: Mapping[str, Any], fields: FieldNames) -> SourceRow:
    evidence, seen = [], set()
    for key in ("evidence_docs", "gold_docs"):
        for doc in record.get(key) or ():
            docid = _docid(doc)
            if docid not in seen:
                seen.add(docid)
                url = str(doc.get("url") or "") if isinstance(doc, Mapping) else ""
                evidence.append(EvidenceRef(source_id=docid, subject=docid, relation=key.removesuffix("s"), value=url))
    extra = {key: value for key, value in record.items() if key not in ("query_id", "query", "answer", *_DOC_LISTS)}
    for key in _DOC_LISTS:
        if key in record:
            extra[key] = [{"docid": _docid(doc), "url": doc.get("url") if isinstance(doc, Mapping) else None}
                          for doc in record.get(key) or ()]
    return SourceRow(source_id=str(record["query_id"]) if record.get("query_id") is not None else None,
                     question=required_text(record, "query"), answers=answers_of(record.get("answer"), "answer"),
                     evidence=evidence, extra=extra)


BROWSECOMP_PLUS = QAFormat("browsecomp_plus", "BrowseComp-Plus queries: query_id, query, answer, evidence_docs, gold_docs",
                           lambda keys, fields: {"query_id", "query"} <= keys, _parse)
