"""Turn HotpotQA / 2WikiMultihopQA / MuSiQue questions into a BEIR-style passage corpus with qrels.

Every HotpotQA / 2Wiki context paragraph (title, sentences) is cut into passages of
``--sentences`` consecutive sentences, so several passages share a page title, as in
every passage corpus. A passage is relevant to a question when it holds one of the
question's supporting facts (title, sentence index). A MuSiQue paragraph (``title``,
``paragraph_text``; its records have ``paragraphs``) is one passage, relevant when it
is marked ``is_supporting``. Writes, in ``--out``:

- ``corpus.jsonl``: ``{"_id", "title", "text"}`` (BEIR corpus format);
- ``queries.jsonl``: ``{"_id", "text"}`` (the question text);
- ``qrels/test.tsv``: ``query-id corpus-id score``.

Identical paragraphs of different questions become the same passages. Example::

    python scripts/multihop_passages.py ../shared/data/hotpotqa_train_100.json \\
        ../shared/data/2wikimultihopqa_dev_2.json --out /tmp/multihop
    stillweb build corpus /tmp/multihop --out /tmp/multihop/snap
    stillweb eval retrieval /tmp/multihop/snap --beir /tmp/multihop --baseline bm25s
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def musique_passages(questions: list[dict], prefix: str) -> tuple[list[dict], dict[str, str], dict[str, set[str]]]:
    """(corpus rows, query id -> question, query id -> relevant passage ids) for MuSiQue records."""
    corpus: list[dict] = []
    seen: dict[tuple[str, str], str] = {}  # (title, paragraph) -> its passage id
    queries: dict[str, str] = {}
    qrels: dict[str, set[str]] = {}
    for number, question in enumerate(questions):
        qid = f"{prefix}q{number}"
        queries[qid] = question["question"]
        qrels[qid] = set()
        for paragraph in question["paragraphs"]:
            key = (paragraph["title"], paragraph["paragraph_text"].strip())
            if key not in seen:
                seen[key] = f"{prefix}p{len(corpus)}"
                corpus.append({"_id": seen[key], "title": key[0], "text": key[1] or key[0]})
            if paragraph.get("is_supporting"):
                qrels[qid].add(seen[key])
    return corpus, queries, qrels


def passage_corpus(questions: list[dict], sentences: int, prefix: str) -> tuple[list[dict], dict[str, str], dict[str, set[str]]]:
    """(corpus rows, query id -> question, query id -> relevant passage ids) for one dataset."""
    if questions and "paragraphs" in questions[0]:
        return musique_passages(questions, prefix)
    corpus: list[dict] = []
    seen: dict[tuple[str, tuple[str, ...]], list[str]] = {}  # paragraph -> its passage ids
    queries: dict[str, str] = {}
    qrels: dict[str, set[str]] = {}
    for number, question in enumerate(questions):
        qid = f"{prefix}q{number}"
        queries[qid] = question["question"]
        supporting = {(title, index) for title, index in question["supporting_facts"]}
        relevant: set[str] = set()
        for title, paragraph in question["context"]:
            key = (title, tuple(paragraph))
            if key not in seen:
                seen[key] = []
                for start in range(0, len(paragraph), sentences):
                    pid = f"{prefix}p{len(corpus)}"
                    text = " ".join(s.strip() for s in paragraph[start : start + sentences]).strip()
                    corpus.append({"_id": pid, "title": title, "text": text or title})
                    seen[key].append(pid)
            for index in range(len(paragraph)):
                if (title, index) in supporting:
                    relevant.add(seen[key][index // sentences])
        qrels[qid] = relevant
    return corpus, queries, qrels


def write_beir(folder: Path, corpus: list[dict], queries: dict[str, str], qrels: dict[str, set[str]]) -> None:
    """Write the three BEIR files into ``folder``."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in corpus)
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n" for q, t in queries.items())
    with (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        out.writelines(f"{q}\t{p}\t1\n" for q in qrels for p in sorted(qrels[q]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("datasets", nargs="+", type=Path, help="HotpotQA / 2WikiMultihopQA / MuSiQue JSON files (a JSON array)")
    parser.add_argument("--out", type=Path, required=True, help="folder for corpus.jsonl, queries.jsonl, qrels/test.tsv")
    parser.add_argument("--sentences", type=int, default=2, help="sentences per passage (default 2)")
    args = parser.parse_args(argv)
    corpus, queries, qrels = [], {}, {}
    for number, path in enumerate(args.datasets):
        rows, more_queries, more_qrels = passage_corpus(json.loads(path.read_text(encoding="utf-8")), args.sentences, f"d{number}")
        corpus += rows
        queries.update(more_queries)
        qrels.update(more_qrels)
    write_beir(args.out, corpus, queries, qrels)
    titles = len({row["title"] for row in corpus})
    print(f"{len(corpus)} passages under {titles} titles, {len(queries)} queries -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
