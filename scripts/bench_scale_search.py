"""The search side of the scale bench (issue 48 items 1, 2, 5), run by ``bench_scale.py --search``.

On the rows of one generated corpus and the same 3- and 8-word queries (:func:`bench_scale.make_queries`):

- **stillweb**: :meth:`Snapshot.search` top 10, titles and snippets included (what an agent gets);
- **Pyserini**: ``LuceneSearcher.search`` top 10 over the same JSON lines indexed by Pyserini's own
  indexer (``-collection JsonCollection -storeRaw -optimize``: one segment, its fastest), BM25 k1 0.9,
  b 0.4, each hit's stored document loaded (Anserini does so for every hit), as Search-R1's retriever
  uses it;
- **bm25s** (corpora up to ``--bm25s-max`` passages: it holds every token in Python lists):
  :class:`~stillweb.corpora.search.baselines.Bm25sIndex`, one query at a time on one thread.

The engines run in this one process, interleaved query by query in a rotating order (a load spike
falls on all of them alike), after 20 warm-up queries each; p50 and p95 of wall and thread-CPU
milliseconds (the CPU time leaves out waits for a core on a loaded machine). Serving memory: a child
process opens the snapshot and answers the queries; its resident memory (RSS), proportional share (PSS)
and private memory after that, from ``/proc/self/smaps_rollup``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import percentile, timed_ms  # noqa: E402

K = 10
WARM = 20


def pyserini_index(corpus: Path, out: Path, timed_tree, threads: int = 2) -> dict:
    """Index ``corpus`` (wiki-18 JSON lines) with Pyserini's indexer into ``out``; timed_tree's figures."""
    folder = out.with_name(out.name + "-input")
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / corpus.name
    if not link.exists():
        link.symlink_to(corpus.resolve())
    return timed_tree([sys.executable, "-m", "pyserini.index.lucene", "-collection", "JsonCollection", "-input", str(folder),
                       "-index", str(out), "-threads", str(threads), "-storeRaw", "-optimize"])


def _texts(corpus: Path) -> list[str]:
    return [json.loads(line)["contents"] for line in corpus.open(encoding="utf-8")]


def search_latency(snapshot: Path, pyserini: Path | None, corpus: Path | None, queries: dict[int, list[str]]) -> dict:
    """``{engine: {words: {"p50", "p95", "cpu50", "cpu95"}}}`` over ``queries`` (words -> queries), interleaved."""
    from stillweb.corpora.search.baselines import Bm25sIndex, _stdout_to_stderr
    from stillweb.corpora.snapshot.reading import Snapshot

    opened = Snapshot.open(snapshot)
    engines = {"stillweb": lambda query: opened.search(query, K)}
    if pyserini is not None:
        with _stdout_to_stderr():
            from pyserini.search.lucene import LuceneSearcher

            searcher = LuceneSearcher(str(pyserini))
        engines["Pyserini"] = lambda query: searcher.search(query, K)
    if corpus is not None:
        bm25s = Bm25sIndex(_texts(corpus))
        engines["bm25s"] = lambda query: bm25s.search([query], K)
    warm = [query for batch in queries.values() for query in batch[:WARM // 2]]
    for function in engines.values():
        for query in warm:
            function(query)
    names = list(engines)
    timings = {name: {words: ([], []) for words in queries} for name in names}
    for words, batch in queries.items():
        for i, query in enumerate(batch):
            for name in names[i % len(names):] + names[:i % len(names)]:
                timed_ms(timings[name][words], engines[name], query)
    return {name: {words: {"p50": percentile(wall, 50), "p95": percentile(wall, 95), "cpu50": percentile(cpu, 50),
                           "cpu95": percentile(cpu, 95)} for words, (wall, cpu) in by_words.items()}
            for name, by_words in timings.items()}


_SERVE = """
import json, sys
from stillweb.corpora.snapshot.reading import Snapshot
snapshot = Snapshot.open(sys.argv[1])
for query in json.loads(sys.argv[2]):
    snapshot.search(query, 10)
fields = {}
for line in open("/proc/self/smaps_rollup"):
    parts = line.split()
    if parts[0] in ("Rss:", "Pss:", "Private_Clean:", "Private_Dirty:"):
        fields[parts[0][:-1]] = int(parts[1]) / 1024
print(json.dumps(fields))
"""


def serving_memory(snapshot: Path, queries: list[str]) -> dict:
    """RSS, PSS and private MiB of a fresh process that opened ``snapshot`` and answered ``queries``."""
    result = subprocess.run([sys.executable, "-c", _SERVE, str(snapshot), json.dumps(queries)], capture_output=True,
                            text=True, check=True)
    fields = json.loads(result.stdout.strip().splitlines()[-1])
    return {"rss": fields["Rss"], "pss": fields["Pss"], "private": fields["Private_Clean"] + fields["Private_Dirty"]}


def latency_table(rows: list[tuple[int, dict, float]]) -> list[str]:
    """Markdown: per corpus size and engine, p50/p95 wall and p50 CPU ms for each query length, and the load."""
    lengths = sorted({words for _size, figures, _load in rows for by_words in figures.values() for words in by_words})
    head = " | ".join(f"{words}-word p50 / p95 ms (CPU p50)" for words in lengths)
    lines = [f"| passages | engine | {head} | load |", "|---:|---|" + "---:|" * len(lengths) + "---:|"]
    for size, figures, load in rows:
        for name, by_words in figures.items():
            cells = " | ".join(f"{by_words[w]['p50']:.2f} / {by_words[w]['p95']:.2f} ({by_words[w]['cpu50']:.2f})" for w in lengths)
            lines.append(f"| {size:,} | {name} | {cells} | {load:.1f} |")
    return lines


def bars(rows: list[tuple[int, dict, float]]) -> list[str]:
    """Issue 48 item 1's bar at each size: stillweb's p50 against Pyserini's, and against stillweb's smallest size."""
    lines = []
    smallest = min(rows, key=lambda row: row[0]) if rows else None
    for size, figures, _load in rows:
        ours = figures["stillweb"]
        for words, cell in ours.items():
            parts = []
            if "Pyserini" in figures:
                theirs = figures["Pyserini"][words]["p50"]
                parts.append(f"{cell['p50'] / theirs:.2f}x Pyserini's p50 (CPU {cell['cpu50'] / figures['Pyserini'][words]['cpu50']:.2f}x)")
            if smallest is not None and smallest[0] < size:
                base = smallest[1]["stillweb"][words]
                parts.append(f"{cell['p50'] / base['p50']:.2f}x the {smallest[0]:,} figure (CPU {cell['cpu50'] / base['cpu50']:.2f}x)")
            if parts:
                lines.append(f"- {size:,} passages, {words}-word queries: stillweb p50 " + ", ".join(parts))
    return lines
