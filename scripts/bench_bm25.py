"""stillweb's BM25 beside bm25s and Pyserini on issue 50's collections, dev and held-out, one run:
recall@10 and nDCG@10 (ir_measures) of every engine over the same rows.

The collections are ``scripts/bench_collections.py``'s (BEIR folders prepared from public repositories
at pinned commits; see its table for each one's source and role). Each is built with ``stillweb build
corpus`` (this code's format), and the same rows are indexed again as formats 3 and 4 indexed rows
(``copy_with_index`` with ``PASSAGE_INDEX_PARAMETERS``): the ranking before issue 50, a column of the same
run. bm25s (k1 1.5, b 0.75) and Pyserini (Lucene BM25, k1 0.9, b 0.4) index each row as ``title + "\\n" +
text``, as ``stillweb eval retrieval --baseline`` does. The last column is stillweb over the better of
the two baselines; the load average is printed beside the figures, and the CPU time per query of the
ranking alone (``SearchIndex.search``, top 10) for this code and the format 4 copy, a paired ratio.

    python scripts/bench_bm25.py --sources $SCRATCH/fetched --dir $SCRATCH/stillweb-collections --no-append
    python scripts/bench_bm25.py --sources $SCRATCH/fetched --names cranfield cisi hotpotqa-2wiki
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_collections import DEV, NAMES, eval_sets, prepare  # noqa: E402
from bench_common import append_section, load  # noqa: E402

MEASURES = ("R@10", "nDCG@10")
BEFORE = "stillweb before (format 4)"
ENGINES = ("stillweb", BEFORE, "bm25s", "pyserini")


def snapshots(folder: Path):
    """This code's snapshot of the BEIR folder (built once) and the same rows as formats 3-4 indexed them."""
    from stillweb.corpora.build.from_source import build_rows
    from stillweb.corpora.build.snapshot_writer import copy_with_index
    from stillweb.corpora.search.index import PASSAGE_INDEX_PARAMETERS
    from stillweb.corpora.snapshot.reading import Snapshot

    path, before = folder / "snap", folder / "snap-format4"
    if not (path / "manifest.json").exists():
        build_rows([folder / "corpus.jsonl"], path, progress=False)
    if not (before / "manifest.json").exists():
        copy_with_index(path, before, PASSAGE_INDEX_PARAMETERS, "stillweb-snapshot/4")
    return Snapshot.open(path), Snapshot.open(before)


def measure(sets, engines: tuple[str, ...] = ENGINES) -> list[tuple[object, int, int, dict[str, dict[str, float]]]]:
    """``(set, documents, queries, {engine: {measure: value}})`` for every set (baselines built once per folder)."""
    from stillweb.corpora.search import evaluation as ev

    rows, runs = [], {}
    for item in sets:
        qrels = ev.load_qrels(item.folder / "qrels" / f"{item.split}.tsv")
        queries = {q: t for q, t in ev.load_queries(item.folder / "queries.jsonl").items() if q in qrels}
        now, before = snapshots(item.folder)
        scores = {}
        for engine in engines:
            if engine in ("stillweb", BEFORE):
                snapshot = now if engine == "stillweb" else before
                run = ev.run_snapshot(snapshot, queries)
                scores.setdefault("cpu", {})[engine] = ranking_ms(snapshot, list(queries.values()))
            else:
                key = (engine, item.folder)
                if key not in runs:  # one baseline run over every query of the folder, both splits
                    every = ev.load_queries(item.folder / "queries.jsonl")
                    runs[key] = ev.run_baseline(engine, now, every)
                run = {q: runs[key].get(q, {}) for q in queries}
            scores[engine] = ev.evaluate(qrels, run, MEASURES)
        rows.append((item, len(now), len(queries), scores))
    return rows


def ranking_ms(snapshot, queries: list[str], passes: int = 3) -> float:
    """CPU milliseconds per query of the ranking alone (``SearchIndex.search``, top 10, doc ids and scores) after
    one warm-up pass: what format 5's proximity phrases cost beside format 4's terms on the same rows."""
    for query in queries:
        snapshot._index.search(query, 10)
    started = time.process_time()
    for _ in range(passes):
        for query in queries:
            snapshot._index.search(query, 10)
    return (time.process_time() - started) * 1e3 / max(1, passes * len(queries))


def report(rows, engines: tuple[str, ...], notes: str) -> str:
    """The Markdown table of a run: one line per set and measure."""
    others = [e for e in engines if e in ("bm25s", "pyserini")]
    lines = [notes, "", "| set | role | docs | queries | measure | " + " | ".join(engines) + " | stillweb / better baseline |",
             "|---|---|---:|---:|---|" + "---:|" * (len(engines) + 1)]
    for item, docs, queries, scores in rows:
        head = f"| {item.name} | {item.role} | {docs:,} | {queries} |"
        for measure in MEASURES:
            best = max((scores[e][measure] for e in others), default=0.0)
            ratio = f"{scores['stillweb'][measure] / best:.3f}x" if best else "-"
            lines.append(f"{head} {measure} | " + " | ".join(f"{scores[e][measure]:.4f}" for e in engines) + f" | {ratio} |")
            head = "| | | | |"
        cpu = scores["cpu"]
        lines.append(f"{head} CPU ms per query, ranking alone (top 10) | {cpu['stillweb']:.3f} | {cpu[BEFORE]:.3f} | "
                     + " | ".join("-" for _ in others) + f" | now / before {cpu['stillweb'] / cpu[BEFORE]:.2f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sources", type=Path, required=True, help="folder holding the fetched repositories (bench_collections.py)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "stillweb-collections", help="BEIR folders and snapshots (outside the repository)")
    parser.add_argument("--names", nargs="+", choices=NAMES, default=list(NAMES), help="which collections (default all)")
    parser.add_argument("--engines", nargs="+", choices=ENGINES[2:], default=list(ENGINES[2:]),
                        help="baselines (bm25s: the eval extra; pyserini: its extra and a JDK 17)")
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to BENCHMARKS.md")
    args = parser.parse_args(argv)
    missing = tuple(name for name in args.names if not (args.dir / name / "corpus.jsonl").exists())
    if missing:
        prepare(args.dir, args.sources, missing)
    engines = (*ENGINES[:2], *args.engines)
    before = load()
    rows = measure(eval_sets(args.dir, tuple(args.names)), engines)
    dev = sum(1 for item, *_ in rows if item.role == DEV)
    notes = (f"k=10; {before} before, {load()} after. {dev} dev sets (settings chosen on them), {len(rows) - dev} held-out "
             "(evaluated after the choice). Collections: scripts/bench_collections.py.")
    text = report(rows, engines, notes)
    if args.no_append:
        print(text)
    else:
        append_section("Retrieval side by side: issue 50 collections, dev and held-out", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
