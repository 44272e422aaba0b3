"""stillweb's BM25 side by side with bm25s and Pyserini (issue 37): the same documents and
queries, one run: recall@10, nDCG@10 (ir_measures) and queries per second per core.

Sets (every engine indexes each row as ``title + "\\n" + text``):

- ``multihop``: HotpotQA 100 + 2WikiMultihopQA 2 (``../shared/data``) context paragraphs cut into
  2-sentence passages (``scripts/multihop_passages.py``); the queries split by a fixed hash of
  the query id (:func:`half`) into ``tune`` (the half the analyzer settings were chosen on) and
  ``confirm`` (never looked at while choosing);
- ``musique``: 100 MuSiQue questions and their 20 paragraphs each, one passage per paragraph,
  relevant = ``is_supporting`` (confirm only). Source: the MuSiQue train sample that
  HippoRAG's repository ships, github.com/OSU-NLP-Group/HippoRAG ``data/musique_train.json``
  at commit 3d95d255a8db0c1699b853cfb4fbe5056708162d (CC BY 4.0, as MuSiQue); give its path
  with ``--musique`` (no network at run time; skipped when absent);
- ``cmrc``: CMRC 2018's trial set (``../shared/data/cmrc2018_trial.json``: 256 Chinese Wikipedia
  paragraphs, 1,002 questions; CC BY-SA 4.0), one passage per paragraph, each question's relevant
  document its own paragraph (confirm only). stillweb builds it with the language it detects
  (``zh``: CJK bigrams); bm25s segments with jieba, Pyserini uses Anserini's ``-language zh``;
- ``synthetic``: a synthetic world of ``--articles`` articles (seed 0), built once and cached
  under ``--dir``; queries ask for the pages with a given fact, ``Which <kind> has <relation>
  <value>?`` for keyed entity facts shared by at most 5 pages, qrels = those pages; split into
  ``tune`` and ``confirm`` halves as above (issue 43 chose the page ranking on the tune half at
  30,000 articles);
- ``pages`` (issue 43): page snapshots. The HotpotQA/2Wiki questions over one page per title
  (the distinct context paragraphs of a title, joined), relevant = the supporting titles; over
  the shared Wikipedia dump sample's pages, known-item queries (5 consecutive words of a page's
  text at a keyed place, two per page) and title-seeking ones (a page's title), relevant = that
  page. Each split into the two halves.

Page sets also run ``stillweb format 3``: the same pages indexed as format 3 did (title^2 +
body, tantivy syntax; ``copy_with_index``), the ranking before issue 43.

Queries per second per core = queries / CPU seconds of this process (every thread, the JVM's
included) while the engine answers them, after one warm-up pass: stillweb's ranking alone (doc
ids and scores, ``SearchIndex.search``) and ``Snapshot.search`` (the search tool's titles and
snippets included), one query at a time; Pyserini's ``LuceneSearcher.search`` one at a time;
bm25s in one batch on one thread (its own API). The baselines return ids and scores only, so
their figure is the same on both rows.

Examples::

    python scripts/bench_retrieval.py --sets multihop --no-append
    python scripts/bench_retrieval.py --sets cmrc --no-append
    python scripts/bench_retrieval.py --musique /tmp/retrieval-bench/public/musique_train_hipporag.json \\
        --articles 100000 --dir /tmp/retrieval-bench
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, format_3_copy, load  # noqa: E402

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
MULTIHOP = ("hotpotqa_train_100.json", "2wikimultihopqa_dev_2.json")
ENGINES = ("stillweb", "bm25s", "pyserini")
FORMAT_3 = "stillweb format 3"
WIKI_SAMPLE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
MEASURES = ("R@10", "nDCG@10")
K = 10


@dataclass
class QuerySet:
    """One evaluated set: a snapshot, its queries and qrels (document ids = source ids or doc ids)."""

    name: str
    snapshot: object
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    role: str  # "tune" or "confirm"
    format_3: object = None  # page sets: the same pages as format 3 indexed them


def halves(name: str, snapshot, queries: dict[str, str], qrels: dict, format_3=None) -> list[QuerySet]:
    """``queries`` split into the tune and confirm halves (:func:`half`), as two sets."""
    sets = []
    for role in ("tune", "confirm"):
        chosen = {qid: text for qid, text in queries.items() if half(qid) == role and qid in qrels}
        sets.append(QuerySet(f"{name}, {role} half", snapshot, chosen, {qid: qrels[qid] for qid in chosen}, role, format_3))
    return sets


def multihop_page_sets(work: Path) -> list[QuerySet]:
    """HotpotQA/2Wiki questions over one page per title (its distinct context paragraphs joined)."""
    import json

    from stillweb.corpora.snapshot.records import RawPage
    from stillweb.corpora.snapshot.reading import Snapshot
    from stillweb.corpora.build.snapshot_writer import build_snapshot

    paragraphs: dict[str, list[str]] = {}
    queries, qrels = {}, {}
    for prefix, name in zip(("h", "w"), MULTIHOP):
        for number, question in enumerate(json.loads((SHARED / name).read_text(encoding="utf-8"))):
            for title, sentences in question["context"]:
                text = ("" if prefix == "h" else " ").join(sentences).strip()
                if text and text not in paragraphs.setdefault(title, []):
                    paragraphs[title].append(text)
            queries[f"{prefix}q{number}"] = question["question"]
            qrels[f"{prefix}q{number}"] = {title: 1 for title, _index in question["supporting_facts"]}
    pages = [RawPage(title=title, text="\n\n".join(paragraphs[title]) or title, source_id=title, is_wikitext=False,
                     position=f"page {number}") for number, title in enumerate(sorted(paragraphs))]
    built = build_snapshot(pages, work / "multihop-pages", source={"kind": "bench"}, parameters={}, progress=False)
    snapshot = Snapshot.open(built.path)
    return halves("HotpotQA+2Wiki questions, pages", snapshot, queries, qrels, format_3_copy(snapshot))


def wiki_page_sets(work: Path) -> list[QuerySet]:
    """Known-item (5 words of a page's text) and title-seeking queries over the dump sample's pages."""
    from stillweb.corpora.build.from_source import build_wikipedia
    from stillweb.corpora.keyed import KeyedRng
    from stillweb.corpora.snapshot.reading import Snapshot

    snapshot = Snapshot.open(build_wikipedia(SHARED / WIKI_SAMPLE, work / "wiki-pages", progress=False).path)
    ids = document_ids(snapshot)
    known, titles, qrels = {}, {}, {}
    for doc in range(len(snapshot)):
        words = snapshot.text_of(doc).split()
        for j in range(2):
            start = KeyedRng(0, "bench-known-item", doc, j).integer(0, max(0, len(words) - 5))
            known[f"k{doc}-{j}"] = " ".join(words[start : start + 5]) or snapshot.title_of(doc)
            qrels[f"k{doc}-{j}"] = {ids[doc]: 1}
        titles[f"t{doc}"] = snapshot.title_of(doc)
        qrels[f"t{doc}"] = {ids[doc]: 1}
    format_3 = format_3_copy(snapshot)
    return (halves("dump sample pages, known-item", snapshot, known, qrels, format_3)
            + halves("dump sample pages, title-seeking", snapshot, titles, qrels, format_3))


def half(qid: str) -> str:
    """``"tune"`` or ``"confirm"``: the low bit of blake2b(query id), fixed for ever.

    >>> half("d0q0"), half("d0q2")
    ('confirm', 'tune')
    """
    return "tune" if hashlib.blake2b(qid.encode(), digest_size=8).digest()[0] % 2 else "confirm"


def beir_snapshot(folder: Path, datasets: list[Path], sentences: int = 2):
    """Write the BEIR passages of ``datasets`` into ``folder``, build them, return (snapshot, queries, qrels)."""
    from stillweb.corpora.search import evaluation as ev
    from stillweb.corpora.build.from_source import build_rows
    from stillweb.corpora.snapshot.reading import Snapshot

    script = Path(__file__).resolve().parent / "multihop_passages.py"
    subprocess.run([sys.executable, str(script), *map(str, datasets), "--out", str(folder), "--sentences", str(sentences)],
                   check=True, capture_output=True)
    snapshot = Snapshot.open(build_rows([folder], folder / "snap", progress=False).path)
    queries_path, qrels_path = ev.beir_paths(folder)
    return snapshot, ev.load_queries(queries_path), ev.load_qrels(qrels_path)


def multihop_sets(work: Path) -> list[QuerySet]:
    """The shared HotpotQA/2Wiki passages, queries split into the tune and confirm halves."""
    snapshot, queries, qrels = beir_snapshot(work / "multihop", [SHARED / name for name in MULTIHOP])
    sets = []
    for role in ("tune", "confirm"):
        chosen = {qid: text for qid, text in queries.items() if half(qid) == role}
        sets.append(QuerySet(f"HotpotQA+2Wiki passages, {role} half", snapshot, chosen,
                             {qid: qrels[qid] for qid in chosen if qid in qrels}, role))
    return sets


def musique_set(work: Path, path: Path) -> QuerySet:
    """MuSiQue paragraphs and questions (confirm only)."""
    snapshot, queries, qrels = beir_snapshot(work / "musique", [path])
    return QuerySet("MuSiQue 100 (HippoRAG sample) paragraphs", snapshot, queries, qrels, "confirm")


def cmrc_set(work: Path, path: Path = SHARED / "cmrc2018_trial.json") -> QuerySet:
    """CMRC 2018 trial paragraphs as rows (id, title, text) and their questions (question -> its paragraph)."""
    import json

    from stillweb.corpora.build.from_source import build_rows
    from stillweb.corpora.snapshot.reading import Snapshot

    items = json.loads(path.read_text(encoding="utf-8"))
    folder = work / "cmrc"
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": item["context_id"], "title": item["title"], "text": item["context_text"]} for item in items]
    (folder / "paragraphs.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                                             encoding="utf-8")
    snapshot = Snapshot.open(build_rows([folder / "paragraphs.jsonl"], folder / "snap", progress=False).path)
    queries, qrels = {}, {}
    for item in items:
        for qa in item["qas"]:
            if qa["query_text"].strip():  # two trial questions are blank
                queries[qa["query_id"]] = qa["query_text"]
                qrels[qa["query_id"]] = {item["context_id"]: 1}
    return QuerySet("CMRC 2018 trial (Chinese) paragraphs", snapshot, queries, qrels, "confirm")


def synthetic_set(articles: int, directory: Path, count: int = 500) -> list[QuerySet]:
    """Fact-lookup questions over a synthetic world of ``articles`` articles (built once, cached)."""
    from stillweb.corpora.keyed import KeyedRng
    from stillweb.corpora.snapshot.reading import Snapshot

    path = directory / f"synthetic-{articles}-s0"
    if not (path / "manifest.json").exists():
        from stillweb.corpora.build.from_source import build_synthetic

        build_synthetic(articles, 0, path, workers=1, progress=False)
    snapshot = Snapshot.open(path)
    ids = document_ids(snapshot)
    facts = pq.read_table(path / "facts.parquet", columns=["relation", "value", "value_type", "template", "evidence"])
    holders: dict[tuple[str, str, str], list[int]] = {}
    for relation, value, kind, template, evidence in zip(*(facts.column(c).to_pylist() for c in facts.column_names)):
        if kind == "entity":
            holders.setdefault((template, relation, value), []).append(evidence)
    keys = sorted(key for key, pages in holders.items() if len(set(pages)) <= 5)
    queries, qrels = {}, {}
    for i in range(min(count, len(keys))):
        template, relation, value = keys[KeyedRng(0, "bench-retrieval", i).integer(0, len(keys) - 1)]
        qid = f"s{i}"
        queries[qid] = f"Which {template.removeprefix('infobox ')} has {relation.replace('_', ' ')} {value}?"
        qrels[qid] = {ids[doc]: 1 for doc in sorted(set(holders[(template, relation, value)]))}
    return halves(f"synthetic {len(snapshot):,} articles, fact lookups", snapshot, queries, qrels, format_3_copy(snapshot))


def document_ids(snapshot) -> list[str]:
    """The id qrels use for each row, in doc-id order: its source id, else its doc id (as ``stillweb eval``)."""
    table = pq.read_table(snapshot.path / "docs.parquet", columns=["doc_id", "source_id"])
    return [source or str(doc) for doc, source in zip(table.column("doc_id").to_pylist(), table.column("source_id").to_pylist())]


def document_texts(snapshot) -> list[str]:
    """``title + "\\n" + text`` of every row, in doc-id order."""
    table = pq.read_table(snapshot.path / "docs.parquet", columns=["title", "text"])
    return [f"{t}\n{x}" for t, x in zip(table.column("title").to_pylist(), table.column("text").to_pylist())]


def cpu_timed(function, queries: list[str], *args, min_cpu: float = 1.0):
    """``function(queries, *args)`` and the CPU seconds this process spent per pass over ``queries``:
    one untimed warm-up pass, then passes until ``min_cpu`` seconds are spent (at least one)."""
    result = function(queries, *args)
    start, passes = time.process_time(), 0
    while passes == 0 or time.process_time() - start < min_cpu:
        function(queries, *args)
        passes += 1
    return result, (time.process_time() - start) / passes


def run_engines(sets: list[QuerySet], engines: tuple[str, ...]) -> list[tuple[QuerySet, dict[str, dict]]]:
    """Every engine on every set: ``{engine: {"R@10", "nDCG@10", "qps", "index_s"}}`` per set."""
    from stillweb.corpora.search import evaluation as ev
    from stillweb.corpora.search.baselines import baseline_index

    results, built = [], {}
    for query_set in sets:
        texts, ids = document_texts(query_set.snapshot), document_ids(query_set.snapshot)
        qids = list(query_set.queries)
        texts_of_queries = [query_set.queries[q] for q in qids]
        row = {}
        for engine in engines:
            if engine == FORMAT_3 and query_set.format_3 is None:
                row[engine] = {measure: float("nan") for measure in (*MEASURES, "qps", "qps_ids", "index_s")}
                continue
            if engine in ("stillweb", FORMAT_3):
                snapshot = query_set.snapshot if engine == "stillweb" else query_set.format_3
                search = snapshot.search
                hits, seconds = cpu_timed(lambda qs: [[(h.doc_id, h.score) for h in search(q, K)] for q in qs], texts_of_queries)
                ranking = snapshot._index.search  # the ranking alone: doc ids and scores, as the others return
                _hits, ids_seconds = cpu_timed(lambda qs: [ranking(q, K) for q in qs], texts_of_queries)
                index_seconds = float("nan")
            else:
                key = (engine, str(query_set.snapshot.path))
                if key not in built:
                    start = time.process_time()
                    analyzer = query_set.snapshot.analyzer
                    built[key] = (baseline_index(engine, texts, language=analyzer.language if analyzer else "en"),
                                  time.process_time() - start)
                index, index_seconds = built[key]
                hits, seconds = cpu_timed(index.search, texts_of_queries, K)
            run = {qid: {ids[d]: round(s, 6) for d, s in found} for qid, found in zip(qids, hits)}
            scores = ev.evaluate(query_set.qrels, run, MEASURES)
            row[engine] = {**scores, "qps": len(qids) / max(seconds, 1e-9), "index_s": index_seconds}
            row[engine]["qps_ids"] = len(qids) / max(ids_seconds if engine in ("stillweb", FORMAT_3) else seconds, 1e-9)
        results.append((query_set, row))
    for index, _seconds in built.values():
        getattr(index, "close", lambda: None)()
    return results


def report(results, engines: tuple[str, ...], notes: str) -> str:
    """The Markdown tables of a run."""
    lines = [notes, "", "| set | role | docs | queries | measure | " + " | ".join(engines) + " | stillweb / best other |",
             "|---|---|---:|---:|---|" + "---:|" * (len(engines) + 1)]
    for query_set, row in results:
        head = f"| {query_set.name} | {query_set.role} | {len(query_set.snapshot):,} | {len(query_set.queries)} |"
        for measure in (*MEASURES, "qps_ids", "qps"):
            values = [row[e][measure] for e in engines]
            others = [row[e][measure] for e in engines if e not in ("stillweb", FORMAT_3)]
            ratio = f"{row['stillweb'][measure] / max(others):.2f}x" if others and max(others) > 0 else "-"
            shown = ["-" if v != v else f"{v:.4f}" if measure in MEASURES else f"{v:,.0f}" for v in values]
            name = {"qps_ids": "queries/s per core, doc ids", "qps": "queries/s per core, stillweb with titles+snippets"}.get(measure, measure)
            lines.append(f"{head} {name} | " + " | ".join(shown) + f" | {ratio} |")
            head = "| | | | |"
    built = [f"{e} {row[e]['index_s']:.1f} s" for _s, row in results[-1:] for e in engines if e not in ("stillweb", FORMAT_3)]
    if built:
        lines += ["", f"Baseline indexing CPU on the last set: {', '.join(built)}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", choices=["multihop", "musique", "cmrc", "pages", "synthetic"],
                        default=["multihop", "musique", "cmrc", "pages", "synthetic"], help="which sets (default all)")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES),
                        help="stillweb always runs; bm25s needs the eval extra, pyserini its extra and a JDK 17")
    parser.add_argument("--musique", type=Path, help="MuSiQue JSON array (HippoRAG's data/musique_train.json)")
    parser.add_argument("--articles", type=int, default=100_000, help="synthetic world size (default 100,000)")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/retrieval-bench"),
                        help="cache of the synthetic snapshot (built once; default /tmp/retrieval-bench)")
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to BENCHMARKS.md")
    args = parser.parse_args(argv)
    engines = tuple(dict.fromkeys(["stillweb", *args.engines]))
    if {"pages", "synthetic"} & set(args.sets):
        engines += (FORMAT_3,)
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as work:
        sets: list[QuerySet] = []
        if "multihop" in args.sets:
            sets += multihop_sets(Path(work))
        if "musique" in args.sets and args.musique and args.musique.is_file():
            sets.append(musique_set(Path(work), args.musique))
        if "cmrc" in args.sets:
            sets.append(cmrc_set(Path(work)))
        if "pages" in args.sets:
            sets += multihop_page_sets(Path(work)) + wiki_page_sets(Path(work))
        if "synthetic" in args.sets:
            args.dir.mkdir(parents=True, exist_ok=True)
            sets += synthetic_set(args.articles, args.dir)
        before = load()
        results = run_engines(sets, engines)
        import json

        recorded = {json.dumps({"format": q.snapshot.manifest.get("format"),
                                **{k: v for k, v in q.snapshot.manifest.get("index", {}).items() if k != "segments"}},
                               sort_keys=True) for q in sets}
        notes = (f"k={K}; {before} before, {load()} after, {os.cpu_count()} cores (under load qps are noisy: compare "
                 "within a row). stillweb snapshots' format and index parameters (manifest): "
                 + "; ".join(f"`{text}`" for text in sorted(recorded)) + ".")
        text = report(results, engines, notes)
    if args.no_append:
        print(text)
    else:
        issue = "issue 42: CMRC 2018, Chinese" if args.sets == ["cmrc"] else "issues 37, 43"
        append_section(f"Retrieval side by side: stillweb, bm25s, Pyserini ({issue})", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
