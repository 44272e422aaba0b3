"""QA files for the importer tests: a passage snapshot built from the contexts of the shared
HotpotQA / 2WikiMultihopQA samples, and small files written from the published schemas of
FlashRAG, Search-R1's verl parquet, MuSiQue, KILT and BrowseComp-Plus (made here, not copied)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.tasks.store.export import SEARCH_R1_PREFIX

HOTPOT = "hotpotqa_train_100.json"
TWOWIKI = "2wikimultihopqa_dev_2.json"


def context_snapshot(shared_data: Path | None, out: Path, passages: int | None = None) -> Path:
    """A snapshot of every context paragraph of the two samples (one page per title, ids ``p<n>``)
    plus the pages the fixtures below cite; ``shared_data=None``: those pages alone (the importer tests of
    the fixture-only formats run without ``../shared/data``)."""
    pages: dict[str, str] = {}
    for name in (HOTPOT, TWOWIKI) if shared_data is not None else ():
        for question in json.loads((shared_data / name).read_text(encoding="utf-8")):
            for title, sentences in question["context"]:
                pages.setdefault(title, "".join(sentences))
    pages.update(FIXTURE_PAGES)
    corpus = out.parent / f"{out.name}-corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as stream:
        for number, (title, text) in enumerate(sorted(pages.items())):
            source_id = FIXTURE_IDS.get(title, f"p{number}")
            stream.write(json.dumps({"id": source_id, "title": title, "text": text}) + "\n")
    build_rows([corpus], out, workers=1, progress=False, passages=passages)
    return out


FIXTURE_PAGES = {
    "Lunor Bay": "Lunor Bay is a harbour town on the Vell coast. It was founded in 1712 by fishermen from Osk.",
    "Osk": "Osk is a fishing village. Its fishermen founded Lunor Bay in 1712.",
    "Marra Tellin": "Marra Tellin (born 1931) is a painter from Lunor Bay. Her teacher was Ivo Brandt.",
    "Ivo Brandt": "Ivo Brandt was a sculptor. He taught Marra Tellin in the 1950s.",
}
FIXTURE_IDS = {"Lunor Bay": "1001", "Osk": "1002", "Marra Tellin": "bc-7", "Ivo Brandt": "bc-8"}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def flashrag_rows() -> list[dict]:
    """FlashRAG's dataset layout (``id``, ``question``, ``golden_answers``, ``metadata``)."""
    return [
        {"id": "test_0", "question": "When was Lunor Bay founded?", "golden_answers": ["1712", "in 1712"],
         "metadata": {"source": "fixture"}},
        {"id": "test_1", "question": "Who taught Marra Tellin?", "golden_answers": ["Ivo Brandt"], "metadata": {}},
    ]


def search_r1_table(split: str = "train") -> pa.Table:
    """Search-R1's ``nq_search.py`` output rows."""
    rows = []
    for index, row in enumerate(flashrag_rows()):
        question = row["question"].strip()
        rows.append({"data_source": "nq", "prompt": [{"role": "user", "content": SEARCH_R1_PREFIX + question + "\n"}],
                     "ability": "fact-reasoning",
                     "reward_model": {"style": "rule", "ground_truth": {"target": row["golden_answers"]}},
                     "extra_info": {"split": split, "index": index}})
    return pa.Table.from_pylist(rows)


def musique_rows() -> list[dict]:
    """MuSiQue-Full's layout, one answerable and one unanswerable question: the keys, the
    ``2hop__<step id>_<step id>`` ids and the decomposition's ``#1 >> relation`` steps as
    ``raw_data_to_official_format.py`` of github.com/StonyBrookNLP/musique writes them."""
    paragraphs = [
        {"idx": 0, "title": "Marra Tellin", "paragraph_text": FIXTURE_PAGES["Marra Tellin"], "is_supporting": True},
        {"idx": 1, "title": "Ivo Brandt", "paragraph_text": FIXTURE_PAGES["Ivo Brandt"], "is_supporting": True},
        {"idx": 2, "title": "Osk", "paragraph_text": FIXTURE_PAGES["Osk"], "is_supporting": False},
    ]
    decomposition = [
        {"id": 1, "question": "Who taught Marra Tellin?", "answer": "Ivo Brandt", "paragraph_support_idx": 0},
        {"id": 2, "question": "#1 >> occupation", "answer": "sculptor", "paragraph_support_idx": 1},
    ]
    return [
        {"id": "2hop__1_2", "paragraphs": paragraphs, "question": "What was the profession of Marra Tellin's teacher?",
         "question_decomposition": decomposition, "answer": "sculptor", "answer_aliases": ["sculpture artist"],
         "answerable": True},
        {"id": "2hop__1_3", "paragraphs": [dict(p, is_supporting=False) for p in paragraphs],
         "question": "What was the birth year of Marra Tellin's teacher?", "question_decomposition": decomposition,
         "answer": "1921", "answer_aliases": [], "answerable": False},
    ]


def kilt_rows() -> list[dict]:
    """KILT's layout (``id``, ``input``, ``output`` with ``answer`` and ``provenance``, ``meta``)."""
    provenance = {"wikipedia_id": "1001", "title": "Lunor Bay", "start_paragraph_id": 1, "start_character": 0,
                  "end_paragraph_id": 1, "end_character": 40, "bleu_score": 1.0, "section": "Section::::Abstract."}
    return [
        {"id": "-101", "input": "who founded lunor bay", "output": [
            {"answer": "fishermen from Osk", "provenance": [provenance]}, {"answer": "Osk fishermen"}],
         "meta": {}},
        {"id": "-102", "input": "what is osk", "output": [
            {"answer": "a fishing village", "provenance": [{"wikipedia_id": "1002", "title": "Osk"}]},
            {"provenance": [{"wikipedia_id": "99999", "title": "No Such Page"}]}], "meta": {}},
    ]


def browsecomp_rows() -> list[dict]:
    """BrowseComp-Plus's decrypted queries, as checked on 2026-12-04 against:

    - the data card of the Hugging Face dataset ``Tevatron/browsecomp-plus`` (``dataset_info``:
      ``query_id``, ``query``, ``answer`` strings, then ``gold_docs``, ``negative_docs``,
      ``evidence_docs``, each a list of ``{docid: string, text: string}``; split ``test``, 830 rows);
    - ``scripts_build_index/decrypt_dataset.py`` of github.com/texttron/BrowseComp-Plus (commit
      97c637c), which writes each row as one json line with those keys, every string but
      ``query_id`` decrypted, to ``data/browsecomp_plus_decrypted.jsonl``;
    - its ``topics-qrels/qrel_evidence.txt`` / ``qrel_golds.txt``: ``query_id Q0 docid 1`` lines
      (see :func:`browsecomp_qrels`).

    Not confirmed here (the dataset is obfuscated and 2.8 GB; no decrypted line is in the stored
    material): the real docid values are numeric strings ("18639" in the qrels); the fixture's
    "bc-7" / "bc-8" stand for them. Texts and query are made up."""
    def docs(*titles: str) -> list[dict]:
        return [{"docid": FIXTURE_IDS[title], "text": FIXTURE_PAGES[title]} for title in titles]

    return [
        {"query_id": "770", "query": "A painter born in 1931 in a harbour town founded in 1712 had a teacher. "
                                     "What was the teacher's profession?", "answer": "sculptor",
         "gold_docs": docs("Ivo Brandt"), "negative_docs": docs("Osk"), "evidence_docs": docs("Marra Tellin", "Ivo Brandt")},
    ]


def browsecomp_corpus_rows() -> list[dict]:
    """The fixture's documents in the layout of ``Tevatron/browsecomp-plus-corpus``: ``docid``,
    ``text``, ``url`` (no title column)."""
    return [{"docid": FIXTURE_IDS[title], "text": FIXTURE_PAGES[title], "url": f"https://example.org/{FIXTURE_IDS[title]}"}
            for title in ("Marra Tellin", "Ivo Brandt", "Osk")]


def browsecomp_qrels(folder: Path) -> tuple[Path, Path]:
    """``qrel_evidence.txt`` and ``qrel_golds.txt`` for :func:`browsecomp_rows`, in the layout of
    BrowseComp-Plus's ``topics-qrels`` (TREC qrels, lines sorted by docid as strings there), plus a
    judgement of a query id that no row has (``771``)."""
    evidence = folder / "qrel_evidence.txt"
    evidence.write_text("770 Q0 bc-7 1\n770 Q0 bc-8 1\n771 Q0 1001 1\n", encoding="utf-8")
    golds = folder / "qrel_golds.txt"
    golds.write_text("770 Q0 bc-8 1\n", encoding="utf-8")
    return evidence, golds


def write_parquet(path: Path, table: pa.Table) -> Path:
    pq.write_table(table, path)
    return path
