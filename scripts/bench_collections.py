"""The retrieval collections of issue 50, in BEIR's folder layout, each marked ``dev`` (settings may be
chosen on it) or ``held-out`` (evaluated once, never tuned on): one helper that every retrieval
benchmark (BM25 side by side, dense and hybrid) reads, so all of them measure on the same sets.

Nothing is downloaded. Public test collections live in public GitHub repositories; bring each
repository next to the others (the search tool's ``fetch`` lays it out as ``<owner>+<name>/repo``,
a git directory; a plain checkout at ``<owner>+<name>`` or ``<owner>/<name>`` works too) and give
that folder as ``--sources``. Files are read at the commit named below, so everyone converts the
same bytes. The HotpotQA / 2Wiki questions come from ``../shared/data``.

| set | role | source (repository @ commit: paths) | what |
|---|---|---|---|
| ``cranfield`` | dev | lailaglez/belief-network-irs @ 9094e4cd: ``cran/cran.all.1400``, ``cran.qry``, ``cranqrel`` | 1,400 aeronautics abstracts, 225 queries, Cleverdon's grades |
| ``cisi`` | dev | Shakiba-Alipour/Information-Retrieval-on-CISI @ 7a23c346: ``CISI.ALL``, ``CISI.QRY``, ``CISI.REL`` | 1,460 library-science abstracts, 76 judged queries |
| ``hotpotqa-2wiki`` | dev (qrels/dev.tsv) and held-out (qrels/test.tsv) | ``../shared/data`` HotpotQA 100 + 2Wiki 2 | their 1,014 distinct context paragraphs, one passage each; the queries' tune / confirm halves (``bench_retrieval.half``) |
| ``medline`` | held-out | lailaglez/belief-network-irs @ 9094e4cd: ``med/MED.ALL``, ``MED.QRY``, ``MED.REL`` | 1,033 medical abstracts, 30 queries |
| ``cacm`` | held-out | kavinsan/Information-Retrieval-Project @ feda4806: ``cacm.all``, ``query.text``, ``qrels.text`` | 3,204 CACM titles (abstracts, keywords, authors where given), 52 judged queries |
| ``npl`` | held-out | stefreschke/Information-Retrieval @ ec84884f: ``npl/doc-text``, ``query-text``, ``rlv-ass`` | 11,429 short physics abstracts, 93 queries |
| ``scifact`` | held-out | sumithra-p-v/claimverifier @ b42f1c34: ``data/scifact.zip`` | BEIR SciFact: 5,183 abstracts, its 300 test claims (cited documents relevant, 339 qrels) |
| ``musique`` | held-out | OSU-NLP-Group/HippoRAG @ 3d95d255: ``data/musique_train.json`` | 100 MuSiQue questions over their 1,890 paragraphs |

The SMART-format sets (Cranfield, CISI, Medline, CACM; the Glasgow IR group's classic test
collections) are parsed as ir_datasets reads them: a document's ``.T`` is its title and its other text
fields its text; a query is its ``.W``; Cranfield's query ids are renumbered 1..225 in file order, as
its qrels number them. Cranfield's codes follow its readme (Cleverdon: 1 a complete answer .. 4 of
minimum interest; -1 none) and are written as grades 4..1 (higher = more relevant); the other sets'
judgments are binary. SciFact is BEIR's test split rebuilt from the original release (the claims of
its dev split, ``cited_doc_ids`` relevant, abstracts' sentences joined by spaces), as BEIR built it.

    python scripts/bench_collections.py --sources MIRRORS --out $SCRATCH/stillweb-collections   (MIRRORS: git mirrors of the repositories)
    stillweb build corpus $SCRATCH/stillweb-collections/medline --out $SCRATCH/stillweb-collections/medline/snap
    stillweb eval retrieval $SCRATCH/stillweb-collections/medline/snap --beir $SCRATCH/stillweb-collections/medline \\
        --baseline bm25s --baseline pyserini
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import re
import subprocess
import sys
import tokenize
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DEV, HELD_OUT = "dev", "held-out"
PARAGRAPH = 1_000  # sentences per passage: every HotpotQA / 2Wiki paragraph is one passage (issue 50 (a))
Rows = tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]  # corpus rows, queries, qrels


@dataclass(frozen=True)
class Source:
    """Files of one public repository at one commit."""

    repo: str
    commit: str

    def read(self, sources: Path, path: str) -> bytes:
        """The bytes of ``path`` at :attr:`commit`, from a git directory or a checkout under ``sources``."""
        owner, name = self.repo.split("/")
        for place in (sources / f"{owner}+{name}" / "repo", sources / f"{owner}+{name}", sources / owner / name):
            if (place / "objects").is_dir() and (place / "HEAD").is_file():
                return subprocess.run(["git", "--git-dir", str(place), "show", f"{self.commit}:{path}"],
                                      check=True, capture_output=True).stdout
            if (place / path).is_file():
                return (place / path).read_bytes()
        raise FileNotFoundError(f"{self.repo}: {path} not found under {sources} (fetch github:{self.repo} there, "
                                f"or check it out at {sources / f'{owner}+{name}'})")


@dataclass(frozen=True)
class Collection:
    """One set: its name, role, where it comes from, and how its files become BEIR rows."""

    name: str
    role: str  # DEV or HELD_OUT; hotpotqa-2wiki has both (its qrels/dev.tsv and qrels/test.tsv)
    source: Source | None
    convert: Callable[[Callable[[str], bytes]], Rows]


def smart_records(data: bytes) -> list[tuple[str, dict[str, str]]]:
    """``(id, {field letter: text})`` of a SMART-format file (``.I id`` then ``.T``, ``.W``... lines).

    >>> smart_records(b".I 1\\n.T\\nA title\\n.W\\nsome\\ntext\\n.I 2\\n.W\\nmore")
    [('1', {'T': 'A title', 'W': 'some text'}), ('2', {'W': 'more'})]
    """
    records: list[tuple[str, dict[str, list[str]]]] = []
    field = None
    for line in data.decode("utf-8", "replace").replace("\r", "").split("\n"):
        marker = re.match(r"^\.([A-Z])(?:\s+(\S+))?\s*$", line)
        if marker and marker.group(1) == "I":
            records.append((marker.group(2), {}))
            field = None
        elif marker:
            field = marker.group(1)
            records[-1][1].setdefault(field, [])
        elif records and field:
            records[-1][1][field].append(line.strip())
    return [(rid, {key: " ".join(" ".join(lines).split()) for key, lines in fields.items()}) for rid, fields in records]


def smart_documents(data: bytes, fields: str) -> list[dict]:
    """BEIR corpus rows: ``.T`` the title, the ``fields`` (in that order) the text."""
    rows = []
    for rid, record in smart_records(data):
        text = "\n".join(record[key] for key in fields if record.get(key))
        rows.append({"_id": rid, "title": record.get("T", ""), "text": text or record.get("T", "")})
    return rows


def _qrels_lines(data: bytes, columns: tuple[int, int, int | None], grade=lambda value: 1) -> dict[str, dict[str, int]]:
    """Query id -> document id -> grade from whitespace-separated lines (query, document, code columns)."""
    qrels: dict[str, dict[str, int]] = {}
    q, d, code = columns
    for line in data.decode().split("\n"):
        fields = line.split()
        if len(fields) > max(c for c in columns if c is not None):
            value = grade(int(fields[code])) if code is not None else 1
            if value > 0:
                qrels.setdefault(fields[q], {})[fields[d]] = value
    return qrels


def _queries(data: bytes, renumber: bool = False) -> dict[str, str]:
    records = smart_records(data)
    return {str(n) if renumber else rid: record.get("W", "") for n, (rid, record) in enumerate(records, 1)}


def _judged(rows: list[dict], queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> Rows:
    """Only the queries that have judgments (the others score nothing in any engine)."""
    return rows, {q: t for q, t in queries.items() if q in qrels}, {q: qrels[q] for q in queries if q in qrels}


def cranfield(read) -> Rows:
    grade = lambda code: 5 - code if 1 <= code <= 4 else 0  # noqa: E731 (Cleverdon: 1 complete answer .. 4 minimum interest)
    return _judged(smart_documents(read("cran/cran.all.1400"), "W"), _queries(read("cran/cran.qry"), renumber=True),
                   _qrels_lines(read("cran/cranqrel"), (0, 1, 2), grade))


def cisi(read) -> Rows:
    return _judged(smart_documents(read("CISI.ALL"), "W"), _queries(read("CISI.QRY")), _qrels_lines(read("CISI.REL"), (0, 1, None)))


def medline(read) -> Rows:
    return _judged(smart_documents(read("med/MED.ALL"), "W"), _queries(read("med/MED.QRY")),
                   _qrels_lines(read("med/MED.REL"), (0, 1, None)))


def cacm(read) -> Rows:
    qrels = {q: {d.lstrip("0"): 1 for d in docs} for q, docs in _qrels_lines(read("qrels.text"), (0, 1, None)).items()}
    qrels = {q.lstrip("0"): docs for q, docs in qrels.items()}
    return _judged(smart_documents(read("cacm.all"), "WKA"), _queries(read("query.text")), qrels)


def _slash_records(data: bytes) -> list[tuple[str, str]]:
    """``(id, text)`` of the NPL files: an id line, text lines, a ``/`` line."""
    records, lines = [], []
    for line in data.decode().split("\n"):
        if line.strip() == "/":
            if lines:
                records.append((lines[0].strip(), " ".join(" ".join(lines[1:]).split())))
            lines = []
        elif line.strip() or lines:
            lines.append(line)
    return records


def npl(read) -> Rows:
    rows = [{"_id": rid, "title": "", "text": text} for rid, text in _slash_records(read("npl/doc-text"))]
    queries = {rid: text.lower() for rid, text in _slash_records(read("npl/query-text"))}
    qrels = {rid: {doc: 1 for doc in text.split()} for rid, text in _slash_records(read("npl/rlv-ass"))}
    return _judged(rows, queries, qrels)


def _numpy_strings(text: str) -> list[str]:
    """The strings of a numpy array's repr (``['a' "b's"]``): each literal on its own, not concatenated."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [ast.literal_eval(token.string) for token in tokens if token.type == tokenize.STRING]


def scifact(read) -> Rows:
    archive = zipfile.ZipFile(io.BytesIO(read("data/scifact.zip")))
    rows = [{"_id": row["doc_id"], "title": row["title"], "text": " ".join(s.strip() for s in _numpy_strings(row["abstract"]))}
            for row in csv.DictReader(io.TextIOWrapper(archive.open("corpus_train.csv"), "utf-8"))]
    queries, qrels = {}, {}
    for row in csv.DictReader(io.TextIOWrapper(archive.open("claims_validation.csv"), "utf-8")):
        queries[row["id"]] = row["claim"]
        for doc in row["cited_doc_ids"].strip("[]").split():
            qrels.setdefault(row["id"], {})[doc] = 1
    return _judged(rows, queries, qrels)


def musique(read) -> Rows:
    from multihop_passages import musique_passages

    corpus, queries, relevant = musique_passages(json.loads(read("data/musique_train.json")), "d0")
    return corpus, queries, {q: {p: 1 for p in sorted(ps)} for q, ps in relevant.items()}


def hotpotqa_2wiki(_read) -> Rows:
    from multihop_passages import passage_corpus

    corpus, queries, qrels = [], {}, {}
    for number, name in enumerate(("hotpotqa_train_100.json", "2wikimultihopqa_dev_2.json")):
        rows, more, relevant = passage_corpus(json.loads((SHARED / name).read_text(encoding="utf-8")), PARAGRAPH, f"d{number}")
        corpus += rows
        queries.update(more)
        qrels.update({q: {p: 1 for p in sorted(ps)} for q, ps in relevant.items()})
    return corpus, queries, qrels


GLASGOW = Source("lailaglez/belief-network-irs", "9094e4cde738bd93ed1747dc958b5acb0e0fa684")
COLLECTIONS = (
    Collection("cranfield", DEV, GLASGOW, cranfield),
    Collection("cisi", DEV, Source("Shakiba-Alipour/Information-Retrieval-on-CISI", "7a23c34602e8949d795bb1835004546e00d1d1ba"), cisi),
    Collection("hotpotqa-2wiki", f"{DEV} + {HELD_OUT}", None, hotpotqa_2wiki),
    Collection("medline", HELD_OUT, GLASGOW, medline),
    Collection("cacm", HELD_OUT, Source("kavinsan/Information-Retrieval-Project", "feda4806b8d19af85753c580640d40e572f99339"), cacm),
    Collection("npl", HELD_OUT, Source("stefreschke/Information-Retrieval", "ec84884f012ae2c655004f1025753381bef27adb"), npl),
    Collection("scifact", HELD_OUT, Source("sumithra-p-v/claimverifier", "b42f1c3444b28884ddcfadffafbfe223646c6c37"), scifact),
    Collection("musique", HELD_OUT, Source("OSU-NLP-Group/HippoRAG", "3d95d255a8db0c1699b853cfb4fbe5056708162d"), musique),
)
NAMES = tuple(c.name for c in COLLECTIONS)


@dataclass(frozen=True)
class EvalSet:
    """One evaluated set: a BEIR folder, the qrels split to score, and its role."""

    name: str
    folder: Path
    split: str
    role: str


def eval_sets(out: Path, names: tuple[str, ...] = NAMES) -> list[EvalSet]:
    """The evaluated sets of the prepared folders under ``out``, dev sets first (hotpotqa-2wiki gives two)."""
    sets = []
    for collection in COLLECTIONS:
        if collection.name not in names:
            continue
        if collection.name == "hotpotqa-2wiki":
            sets += [EvalSet("hotpotqa-2wiki, tune half", out / collection.name, "dev", DEV),
                     EvalSet("hotpotqa-2wiki, confirm half", out / collection.name, "test", HELD_OUT)]
        else:
            sets.append(EvalSet(collection.name, out / collection.name, "test", collection.role))
    return sorted(sets, key=lambda s: s.role != DEV)


def prepare(out: Path, sources: Path, names: tuple[str, ...] = NAMES) -> list[tuple[str, int, int, float]]:
    """Write each named collection as ``out/<name>/{corpus.jsonl, queries.jsonl, qrels/<split>.tsv}``;
    ``(name, documents, judged queries, mean words per document)`` of each."""
    from bench_retrieval import half

    summary = []
    for collection in COLLECTIONS:
        if collection.name not in names:
            continue
        read = (lambda path, source=collection.source: source.read(sources, path)) if collection.source else None
        corpus, queries, qrels = collection.convert(read)
        splits = {"test": qrels}
        if collection.name == "hotpotqa-2wiki":
            splits = {split: {q: r for q, r in qrels.items() if half(q) == role} for split, role in (("dev", "tune"), ("test", "confirm"))}
        _write(out / collection.name, corpus, queries, splits)
        words = sum(len(f"{row['title']} {row['text']}".split()) for row in corpus) / max(1, len(corpus))
        summary.append((collection.name, len(corpus), len(qrels), words))
    return summary


def _write(folder: Path, corpus: list[dict], queries: dict[str, str], splits: dict[str, dict[str, dict[str, int]]]) -> None:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"_id": r["_id"], "title": r["title"], "text": r["text"]}, ensure_ascii=False) + "\n"
                          for r in corpus)
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n" for q, t in queries.items())
    for split, qrels in splits.items():
        with (folder / "qrels" / f"{split}.tsv").open("w", encoding="utf-8") as handle:
            handle.write("query-id\tcorpus-id\tscore\n")
            handle.writelines(f"{q}\t{d}\t{g}\n" for q in qrels for d, g in qrels[q].items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sources", type=Path, required=True, help="folder holding the fetched repositories")
    parser.add_argument("--out", type=Path, required=True, help="folder for the BEIR folders (outside the repository)")
    parser.add_argument("--names", nargs="+", choices=NAMES, default=list(NAMES), help="which sets (default all)")
    args = parser.parse_args(argv)
    roles = {c.name: c.role for c in COLLECTIONS}
    print("| set | role | documents | judged queries | words per document |\n|---|---|---:|---:|---:|")
    for name, docs, queries, words in prepare(args.out, args.sources, tuple(args.names)):
        print(f"| {name} | {roles[name]} | {docs:,} | {queries} | {words:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
