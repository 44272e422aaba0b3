"""Qrels files as evidence (``tasks import --qrels FILE``): TREC's ``query_id Q0 docid relevance``
per line as trec_eval reads them (or BEIR's ``query-id corpus-id score`` TSV), the layout in which
BrowseComp-Plus ships its judgements (``topics-qrels/qrel_evidence.txt`` and ``qrel_golds.txt`` of
github.com/texttron/BrowseComp-Plus, every line relevance 1).

Each judged document with relevance > 0 becomes an evidence item of the imported question whose
source id is ``query_id``, found by the corpus's docid (``source_id``) like the documents a file
names itself; a docid the row already names is not added twice. The relation is read from the
file's name: ``gold_doc`` when it contains "gold", ``evidence_doc`` when it contains "evidence"
(the names BrowseComp-Plus's own ``gold_docs`` / ``evidence_docs`` lists give), else ``qrel_doc``.
Judgements for query ids that no imported row has are counted, per file, in the card.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "qrel_golds.txt").write_text("769 Q0 5412 1\\n769 Q0 86190 1\\n770 Q0 9 0\\n")
>>> qrels = Qrels.read([folder / "qrel_golds.txt"])
>>> [(ref.source_id, ref.relation) for ref in qrels.with_judged(SourceRow("769", "q?", ["a"])).evidence]
[('5412', 'gold_doc'), ('86190', 'gold_doc')]
>>> qrels.unused()
{'qrel_golds.txt': 0}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from stillweb.corpora.search.evaluation import load_qrels
from stillweb.corpora.tasks.importers.base import EvidenceRef, SourceRow

__all__ = ["Qrels"]


def _relation(name: str) -> str:
    lowered = name.lower()
    return "gold_doc" if "gold" in lowered else "evidence_doc" if "evidence" in lowered else "qrel_doc"


class Qrels:
    """The judged documents of qrels files, by query id, in file then line order."""

    def __init__(self, judged: dict[str, list[tuple[str, str, str]]]) -> None:
        self._judged = judged  # query id -> [(docid, relation, file name)]
        self._used: set[str] = set()

    @classmethod
    def read(cls, paths: Sequence[str | Path]) -> Qrels:
        """Read ``paths`` (:func:`~stillweb.corpora.search.evaluation.load_qrels`: TREC, or BEIR's
        three-column TSV); its ``UsageError`` names the file, line and text of a bad line."""
        judged: dict[str, list[tuple[str, str, str]]] = {}
        for path in (Path(item) for item in paths):
            if not path.is_file():
                raise FileNotFoundError(f"no qrels file {path}")
            relation = _relation(path.name)
            for query_id, documents in load_qrels(path).items():
                judged.setdefault(query_id, []).extend(
                    (docid, relation, path.name) for docid, relevance in documents.items() if relevance > 0)
        return cls(judged)

    def with_judged(self, row: SourceRow) -> SourceRow:
        """``row`` with its query's judged documents appended to its evidence (none: ``row`` itself)."""
        judged = self._judged.get(row.source_id or "")
        if not judged:
            return row
        self._used.add(row.source_id or "")
        named = {ref.source_id for ref in row.evidence if ref.source_id}
        added = []
        for docid, relation, _file in judged:
            if docid not in named:
                named.add(docid)
                added.append(EvidenceRef(source_id=docid, subject=docid, relation=relation))
        return replace(row, evidence=[*row.evidence, *added]) if added else row

    def unused(self) -> dict[str, int]:
        """Per file name, the judgements whose query id no row read so far had."""
        counts: dict[str, int] = {}
        for query_id, judged in sorted(self._judged.items()):
            for _docid, _relation, name in judged:
                counts[name] = counts.get(name, 0) + (query_id not in self._used)
        return counts
