"""Retrieval evaluation of a snapshot against qrels, with ``ir_measures`` (trec_eval's
measures through pytrec_eval) and an optional bm25s baseline on the same rows.

Queries are BEIR ``queries.jsonl`` (``_id``, ``text``) or TSV (``qid<TAB>text``);
qrels are BEIR TSV (``query-id corpus-id score`` with a header) or TREC
(``qid 0 docid relevance``). Documents are named by their ``source_id`` (the
corpus's own id, as qrels name them), or by doc id when the corpus has none.
Runs are written as TREC run files; the scores printed are ``ir_measures``'
for exactly that run, so ``ir_measures`` (or ``trec_eval``) on the file agrees.

Requires the ``eval`` extra (``pip install 'stillweb[eval]'``: ir-measures, bm25s,
PyStemmer); the Pyserini baseline the ``pyserini`` extra and a JDK 17.

>>> queries, qrels = load_queries("beir/scifact/queries.jsonl"), load_qrels("beir/scifact/qrels/test.tsv")  # doctest: +SKIP
>>> evaluate(qrels, run_snapshot(Snapshot.open("snapshots/scifact"), queries))        # doctest: +SKIP
{'R@10': 0.78, ...}
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.sources.files import open_lines

__all__ = ["MEASURES", "load_queries", "load_qrels", "beir_paths", "run_snapshot", "run_bm25s", "run_baseline", "evaluate",
           "write_trec_run", "Run"]

MEASURES = ("R@10", "R@100", "nDCG@10", "RR@10")  # recall@k, nDCG@10, MRR@10 in ir_measures' names
Run = dict[str, dict[str, float]]  # query id -> document id -> score


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(open_lines(path), 1):
        text = line.decode("utf-8").rstrip("\r\n")
        if text.strip():
            yield number, text


def load_queries(path: str | Path) -> dict[str, str]:
    """Query id -> text, in file order, from BEIR ``queries.jsonl`` or a ``qid<TAB>text`` TSV."""
    path = Path(path)
    queries: dict[str, str] = {}
    for number, line in _text_lines(path):
        if line.lstrip().startswith("{"):
            record = json.loads(line)
            if "_id" not in record or "text" not in record:
                raise UsageError(f"{path}: line {number}: a BEIR query needs '_id' and 'text', found {', '.join(record)}")
            queries[str(record["_id"])] = record["text"]
        else:
            qid, tab, text = line.partition("\t")
            if not tab:
                raise UsageError(f"{path}: line {number}: expected 'qid<TAB>text' or a JSON object")
            queries[qid.strip()] = text
    if not queries:
        raise UsageError(f"{path}: no queries")
    return queries


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Query id -> document id -> relevance, from BEIR TSV (with header) or TREC qrels."""
    path = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    for number, line in _text_lines(path):
        fields = line.split()
        if number == 1 and fields[:2] == ["query-id", "corpus-id"]:
            continue  # the BEIR header
        if len(fields) == 3:
            qid, docid, relevance = fields
        elif len(fields) == 4:
            qid, _iteration, docid, relevance = fields
        else:
            raise UsageError(f"{path}: line {number}: {line[:120]!r} is not a qrels line; expected 'qid docid rel' "
                             "(BEIR) or 'qid 0 docid rel' (TREC)")
        try:
            qrels.setdefault(qid, {})[docid] = int(relevance)
        except ValueError:
            raise UsageError(f"{path}: line {number}: relevance {relevance!r} is not an integer") from None
    if not qrels:
        raise UsageError(f"{path}: no qrels")
    return qrels


def beir_paths(folder: str | Path, split: str = "test") -> tuple[Path, Path]:
    """``(queries.jsonl, qrels/<split>.tsv)`` of a BEIR folder; ``FileNotFoundError`` naming what is missing."""
    folder = Path(folder)
    queries = folder / "queries.jsonl"
    qrels = folder / "qrels" / f"{split}.tsv"
    if not queries.is_file():
        raise FileNotFoundError(f"{folder}: BEIR folder has no queries.jsonl")
    if not qrels.is_file():
        found = sorted(p.name for p in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
        raise FileNotFoundError(
            f"{folder}: BEIR folder has no qrels/{split}.tsv (found: {', '.join(found) or 'no qrels folder'}); "
            "give --split or --qrels"
        )
    return queries, qrels


def _document_ids(snapshot: Snapshot) -> list[str]:
    return [snapshot.source_id_of(i) or str(i) for i in range(len(snapshot))]


def run_snapshot(snapshot: Snapshot, queries: dict[str, str], k: int = 100, mode: str = "bm25") -> Run:
    """stillweb's ranking of each query in ``mode`` (``bm25``, ``dense`` or ``hybrid``: see
    :meth:`Snapshot.search`; dense modes score the batch in one pass); blank queries get no results."""
    ids = _document_ids(snapshot)
    asked = [qid for qid, text in queries.items() if text.strip()]
    pages = dict(zip(asked, snapshot.search_many([queries[qid] for qid in asked], k, workers=1, mode=mode)))
    return {qid: {ids[hit.doc_id]: _score(hit.score) for hit in pages.get(qid, [])} for qid in queries}


def _score(value: float) -> float:
    """Scores as the run file writes them (6 decimals), so the file and the printed numbers agree."""
    return round(float(value), 6)


def run_baseline(name: str, snapshot: Snapshot, queries: dict[str, str], k: int = 100) -> Run:
    """Another engine's BM25 ranking (``"bm25s"`` or ``"pyserini"``, see
    :mod:`stillweb.corpora.search.baselines`) over the same rows as the snapshot, each
    indexed as ``title + "\\n" + text``, in the snapshot's language."""
    from stillweb.corpora.search.baselines import baseline_index

    docs = [snapshot.get(i) for i in range(len(snapshot))]
    language = snapshot.analyzer.language if snapshot.analyzer is not None else "en"
    index = baseline_index(name, [f"{d.title}\n{d.text}" for d in docs], language=language)
    ids = _document_ids(snapshot)
    qids = list(queries)
    found = index.search([queries[q] for q in qids], min(k, len(docs)))
    if hasattr(index, "close"):
        index.close()
    return {qid: {ids[row]: _score(score) for row, score in hits} for qid, hits in zip(qids, found)}


def run_bm25s(snapshot: Snapshot, queries: dict[str, str], k: int = 100) -> Run:
    """bm25s (Lucene BM25, English stop words, Snowball English stemmer) over the same rows as the snapshot."""
    return run_baseline("bm25s", snapshot, queries, k)


def evaluate(qrels: dict[str, dict[str, int]], run: Run, measures: tuple[str, ...] = MEASURES) -> dict[str, float]:
    """Mean of each measure over the queries of ``qrels`` (ir_measures / pytrec_eval)."""
    import ir_measures

    parsed = [ir_measures.parse_measure(m) for m in measures]
    # A query with no retrieved documents still counts (as zero), as trec_eval -c does.
    complete = {qid: run.get(qid) or {"__none__": 0.0} for qid in qrels}
    values = ir_measures.calc_aggregate(parsed, qrels, complete)
    return {name: float(values[measure]) for name, measure in zip(measures, parsed)}


def write_trec_run(run: Run, path: str | Path, tag: str = "stillweb") -> None:
    """Write ``run`` as a TREC run file (``qid Q0 docid rank score tag``), ranks by (-score, docid)."""
    with Path(path).open("w", encoding="utf-8") as out:
        for qid, scores in run.items():
            ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
            for rank, (docid, score) in enumerate(ranked, 1):
                out.write(f"{qid} Q0 {docid} {rank} {score:.6f} {tag}\n")
