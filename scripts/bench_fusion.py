"""Hybrid fusions side by side (issue 50 item 3): nDCG@10 of each fusion of BM25's and the shipped dense
model's rankings, as a ratio to BM25's, on the dev and held-out sets of ``scripts/bench_collections.py``
(and CMRC 2018's trial set), and the one the dev-only rule picks.

The rankings are computed once per set (BM25's top ``--depth`` and the dense model's top ``--depth``,
with their scores) from the snapshots ``scripts/bench_dense.py`` built under ``--dir``; every fusion is
then a few milliseconds of Python. Fusions (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for
Hybrid Retrieval", TOIS 2023):

- ``rrf k=K b:d``: reciprocal-rank fusion (Cormack et al. 2009), BM25:dense weights, each list's top 100
  (or the depth given);
- ``cc-mm a``, ``cc-tmm a``, ``cc-z a``: convex combination ``(1 - a) * BM25 + a * dense`` of scores
  normalised over each list: min-max, theoretical-min-max (BM25's lower bound 0, the cosine's -1, the list's
  maximum) or z-score; a document missing from a list takes that list's floor
  (:func:`stillweb.corpora.search.fusion.fuse_normalized`).

The rule, fixed before any held-out set was scored: the fusion with the best mean dev ratio among those
at least as good as RRF 1:2 (the fusion shipped before) on every dev set. Held-out sets are never used to
choose; their ratios are printed for the record.

Example::

    python scripts/bench_dense.py --collections $SCRATCH/stillweb-collections --dir $SCRATCH/bench-dense
    python scripts/bench_fusion.py --collections $SCRATCH/stillweb-collections --dir $SCRATCH/bench-dense
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, load  # noqa: E402

TARGET = 1.05
BASELINE = "rrf k=60 1:2 top 100"


def rankings(snapshot, queries: dict[str, str], depth: int) -> dict[str, tuple[list, list]]:
    """``{qid: (BM25's top depth, dense's top depth)}``, each ``[(doc_id, score)]`` best first (the searches
    hybrid search itself runs: the index's and the dense index's, past Snapshot.search's 100)."""
    asked = {qid: text for qid, text in queries.items() if text.strip()}
    embeddings = [snapshot.query_embedder.embed(text, snapshot.path) for text in asked.values()]
    dense = snapshot._dense.search_many(embeddings, depth)
    return {qid: (snapshot._index.search(text, depth), hits) for (qid, text), hits in zip(asked.items(), dense)}


def min_max(values: list[float], lowest: float | None = None) -> tuple[list[float], float]:
    """Scores scaled to [0, 1] over the list (``lowest``: a theoretical lower bound instead of the list's)."""
    if not values:
        return [], 0.0
    low = min(values) if lowest is None else lowest
    span = max(values) - low
    scaled = [(value - low) / span if span > 0 else 0.0 for value in values]
    return scaled, min(scaled)


def fusions() -> dict[str, tuple[str, int, dict, object]]:
    """``{label: (method, depth, weights, normalisers or RRF's k)}`` of the fusions compared."""
    from stillweb.corpora.search.fusion import zscores

    tmm = {"bm25": partial(min_max, lowest=0.0), "dense": partial(min_max, lowest=-1.0)}
    table = {}
    for k, dense_weight, depth in ((60, 1, 100), (60, 2, 100), (60, 3, 100), (20, 1, 100), (20, 1.5, 100),
                                   (100, 1.5, 100), (60, 2, 1000)):
        table[f"rrf k={k} 1:{dense_weight:g} top {depth}"] = ("rrf", depth, {"bm25": 1.0, "dense": float(dense_weight)}, k)
    for name, normalizers in (("mm", {"bm25": min_max, "dense": min_max}), ("tmm", tmm),
                              ("z", {"bm25": zscores, "dense": zscores})):
        for depth in (100, 500, 1000):
            for alpha in (0.3, 0.4, 0.5, 0.6, 0.8):
                if name == "tmm" and depth != 100:
                    continue  # the list's lower end plays no part: deeper lists change only the floor
                table[f"cc-{name} {alpha:g} top {depth}"] = ("cc", depth, {"bm25": 1 - alpha, "dense": alpha}, normalizers)
    return table


def fused_run(ids: list[str], ranked: dict, spec: tuple) -> dict:
    """The fused top 100 of each query as a run (``{qid: {doc: score}}``, 6 decimals as run files)."""
    from stillweb.corpora.search.dense import fuse
    from stillweb.corpora.search.fusion import fuse_normalized

    method, depth, weights, extra = spec
    run = {}
    for qid, (bm25, dense) in ranked.items():
        lists = {"bm25": bm25[:depth], "dense": dense[:depth]}
        if method == "bm25" or method == "dense":
            hits = lists[method][:100]
        elif method == "rrf":
            hits = fuse({name: [doc for doc, _ in found] for name, found in lists.items()}, 100, weights, extra)
        else:
            hits = fuse_normalized(lists, 100, weights, extra)
        run[qid] = {ids[doc]: round(float(score), 6) for doc, score in hits}
    return run


def sets(args) -> list[tuple[str, str, object, dict, dict]]:
    """``(name, role, snapshot, queries, qrels)`` of every set bench_dense.py built under ``--dir``."""
    from bench_collections import eval_sets
    from bench_retrieval import cmrc_set

    from stillweb.corpora.search import evaluation as ev
    from stillweb.corpora.snapshot.reading import Snapshot

    found = []
    for item in eval_sets(args.collections):
        if (args.dir / item.folder.name / "snap" / "dense").is_dir():
            queries_path, qrels_path = ev.beir_paths(item.folder, item.split)
            found.append((item.name, item.role, Snapshot.open(args.dir / item.folder.name / "snap"),
                          ev.load_queries(queries_path), ev.load_qrels(qrels_path)))
    if (args.dir / "cmrc" / "snap" / "dense").is_dir():
        query_set = cmrc_set(args.dir / "cmrc-rows")
        found.append(("CMRC 2018 trial (Chinese)", "held-out", Snapshot.open(args.dir / "cmrc" / "snap"),
                      query_set.queries, query_set.qrels))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collections", type=Path, required=True, help="BEIR folders from scripts/bench_collections.py")
    parser.add_argument("--dir", type=Path, required=True, help="bench_dense.py's --dir (its snapshots with dense indexes)")
    parser.add_argument("--no-append", action="store_true", help="print only; do not append to BENCHMARKS.md")
    args = parser.parse_args(argv)
    from stillweb.corpora.search import evaluation as ev
    from stillweb.corpora.search.evaluation import _document_ids

    print(f"{os.cpu_count()} cores, {load()}", flush=True)
    specs = {"bm25": ("bm25", 100, {}, None), "dense": ("dense", 100, {}, None), **fusions()}
    scores, roles, cpu = {}, {}, time.process_time()
    for name, role, snapshot, queries, qrels in sets(args):
        judged = {qid: text for qid, text in queries.items() if qid in qrels}
        ranked, ids = rankings(snapshot, judged, 1000), _document_ids(snapshot)
        scores[name] = {label: ev.evaluate(qrels, fused_run(ids, ranked, spec), ("nDCG@10",))["nDCG@10"]
                        for label, spec in specs.items()}
        roles[name] = role
        print(name, role, f"BM25 {scores[name]['bm25']:.3f}", flush=True)
    ratio = {name: {label: value / row["bm25"] for label, value in row.items()} for name, row in scores.items()}
    dev = [name for name in scores if roles[name] == "dev"]
    eligible = [label for label in fusions() if all(ratio[name][label] >= ratio[name][BASELINE] for name in dev)]
    chosen = max(eligible, key=lambda label: (sum(ratio[name][label] for name in dev) / len(dev), label))
    names = list(scores)
    lines = [f"nDCG@10 of each fusion / BM25's (format 6 rows, the shipped model's index); dev sets first. The dev-only "
             f"rule (best mean dev ratio among fusions at least as good as `{BASELINE}` on every dev set) picks "
             f"**{chosen}**. Held-out ratios below {TARGET} are marked *; CMRC's BM25 nDCG@10 is "
             f"{scores.get('CMRC 2018 trial (Chinese)', {}).get('bm25', float('nan')):.3f}, so {TARGET}x is out of reach "
             f"there (1.0 / BM25 < {TARGET}). {time.process_time() - cpu:.0f} CPU s.", "",
             "| fusion | " + " | ".join(f"{name} ({roles[name]})" for name in names) + " | dev mean | held-out min |",
             "|---|" + "---:|" * (len(names) + 2),
             "| BM25 nDCG@10 | " + " | ".join(f"{scores[name]['bm25']:.3f}" for name in names) + " | | |"]
    for label in specs:
        if label == "bm25":
            continue
        cells = [f"{ratio[name][label]:.3f}{'*' if roles[name] != 'dev' and ratio[name][label] < TARGET else ''}"
                 for name in names]
        held = min(ratio[name][label] for name in names if roles[name] != "dev")
        mark = " (chosen)" if label == chosen else " (before)" if label == BASELINE else ""
        lines.append(f"| {label}{mark} | " + " | ".join(cells)
                     + f" | {sum(ratio[name][label] for name in dev) / len(dev):.3f} | {held:.3f} |")
    text = "\n".join(lines)
    print(text)
    if not args.no_append:
        append_section("Dense: hybrid fusions compared (scripts/bench_fusion.py)", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
