"""Scale bench (issue 48): corpora with Wikipedia-like word statistics, generated (no download), built at
the sizes users train on; build wall time, passages/s and peak RSS of the build's whole process tree.

Corpus (:func:`make_corpus`): Search-R1 / FlashRAG ``wiki-18`` JSON lines, ``{"id", "contents":
"\\"Title\\"\\ntext"}``, 100-word passages grouped in articles (1 + a geometric number of passages,
3.6 on average, wiki-18's 21M passages over about 5.9M articles) sharing a 1-3 word title. Words are
drawn from a Zipf-Mandelbrot law, p(rank r) ~ 1 / (r + 2.7) (Mandelbrot's fit of English word
frequencies; Zipf's exponent 1), over a vocabulary of ``--vocabulary`` pseudo-words spelled from
consonant-vowel syllables, frequent words short (the top 90 have one syllable). Seeded numpy
(PCG64): the same seed and flags write the same bytes (the report prints their SHA-256).
Queries (:func:`make_queries`): 3- and 8-word queries from the same law, their own seeded stream.

Build (:func:`time_build`): ``stillweb build corpus --workers N --language en`` in a child process;
wall seconds, passages/s (wall), CPU seconds, and the peak resident memory of the process tree (the
sum of every process's RSS, sampled every 50 ms; forked workers' shared pages count once per
process, so this is an upper bound) beside the largest single process's (``ru_maxrss``).
``--base-python`` builds the same corpora with an older checkout's Python (its ``stillweb``) in the
same run: the baseline, as ratios. ``--pages N`` also times the page builds: ``stillweb build
synthetic --articles N`` and ``stillweb build wikipedia`` of the same world's dump.

Heavy sizes share the machine: wrap them in ``flock /tmp/heavy.lock`` (see TEAM.md)::

    python scripts/bench_scale.py --passages 100000 --dir /tmp/scale
    flock /tmp/heavy.lock python scripts/bench_scale.py --passages 1000000,2000000,5000000 --dir /tmp/scale --append
    flock /tmp/heavy.lock python scripts/bench_scale.py --passages 1000000 --base-python /tmp/base/.venv/bin/python \\
        --dir /tmp/scale --append
    flock /tmp/heavy.lock python scripts/bench_scale.py --passages 0 --pages 300000 --dir /tmp/scale --append
    flock /tmp/heavy.lock python scripts/bench_scale.py --passages 100000,1000000 --search --dir /tmp/scale --append

``--search`` also times search on each built corpus (``bench_scale_search.py``): stillweb's
``Snapshot.search`` beside Pyserini and bm25s on the same rows and 3- and 8-word queries, interleaved,
and the resident memory of a process serving the snapshot.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, load  # noqa: E402

SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]  # 90 two-letter syllables
MANDELBROT_OFFSET = 2.7  # p(r) ~ 1 / (r + 2.7)
PASSAGE_WORDS = 100  # the DPR / wiki-18 passage
MEAN_PASSAGES_PER_ARTICLE = 3.6  # wiki-18: 21M passages over ~5.9M articles
CHUNK = 10_000  # passages generated at once


def spell(rank: int) -> str:
    """The pseudo-word of ``rank``: the 90 most frequent words have one syllable, the next 8,100 two, ...

    >>> spell(0), spell(89), spell(90), spell(8190)
    ('ba', 'zu', 'baba', 'bababa')
    """
    length, start, block = 1, 0, len(SYLLABLES)
    while rank >= start + block:
        start, block, length = start + block, block * len(SYLLABLES), length + 1
    rank -= start
    parts = []
    for _ in range(length):
        rank, digit = divmod(rank, len(SYLLABLES))
        parts.append(SYLLABLES[digit])
    return "".join(parts)


def vocabulary_bytes(size: int) -> np.ndarray:
    """The vocabulary as a (size, width) uint8 matrix: each word's letters, one space, zero padding."""
    words = [spell(rank).encode() for rank in range(size)]
    width = max(map(len, words)) + 1
    matrix = np.frombuffer(b"".join(word.ljust(width, b"\0") for word in words), dtype=np.uint8).reshape(size, width).copy()
    matrix[np.arange(size), [len(word) for word in words]] = ord(" ")
    return matrix


def zipf_ranks(rng: np.random.Generator, shape: tuple[int, ...], size: int) -> np.ndarray:
    """Word ranks with p(r) ~ 1 / (r + q), by inverting the continuous law's CDF, ln((x + q) / q) / ln((V + q) / q)."""
    q = MANDELBROT_OFFSET
    ranks = q * np.exp(rng.random(shape) * np.log((size + q) / q)) - q
    return np.minimum(ranks.astype(np.int64), size - 1)


def _lines(vocab: np.ndarray, ranks: np.ndarray) -> list[str]:
    """One space-joined string per row of ``ranks`` (all numpy: gather, drop padding, one decode)."""
    gathered = vocab[ranks].reshape(len(ranks), -1)
    keep = gathered != 0
    text = gathered[keep].tobytes().decode("ascii")
    ends = np.cumsum(keep.sum(axis=1)).tolist()
    starts = [0] + ends[:-1]
    return [text[start:end - 1] for start, end in zip(starts, ends)]  # end - 1: the trailing space


def make_corpus(path: Path, passages: int, *, seed: int = 0, vocabulary: int = 1_000_000) -> dict:
    """Write ``passages`` wiki-18 lines to ``path``; returns {passages, articles, bytes, sha256}."""
    rng = np.random.default_rng([seed, 0])
    vocab = vocabulary_bytes(vocabulary)
    digest, written, articles, size = hashlib.sha256(), 0, 0, 0
    left_in_article, title = 0, ""
    with path.open("wb") as handle:
        while written < passages:
            count = min(CHUNK, passages - written)
            texts = _lines(vocab, zipf_ranks(rng, (count, PASSAGE_WORDS), vocabulary))
            lengths = rng.geometric(1 / MEAN_PASSAGES_PER_ARTICLE, count).tolist()
            title_words = rng.integers(1, 4, count).tolist()
            titles = _lines(vocab, 50 + zipf_ranks(rng, (count, 3), vocabulary - 50))  # titles skip the 50 commonest
            out = []
            for i, text in enumerate(texts):
                if left_in_article == 0:
                    left_in_article, articles = lengths[i], articles + 1
                    title = " ".join(word.capitalize() for word in titles[i].split()[: title_words[i]])
                left_in_article -= 1
                out.append(f'{{"id": "{written + i}", "contents": "\\"{title}\\"\\n{text}"}}\n')
            chunk = "".join(out).encode("ascii")
            digest.update(chunk)
            handle.write(chunk)
            written, size = written + count, size + len(chunk)
    return {"passages": written, "articles": articles, "bytes": size, "sha256": digest.hexdigest()}


def make_queries(count: int, words: int, *, seed: int = 0, vocabulary: int = 1_000_000) -> list[str]:
    """``count`` queries of ``words`` words from the corpus's law (a stream of their own per length).

    >>> make_queries(2, 3, vocabulary=1000) == make_queries(2, 3, vocabulary=1000)
    True
    """
    rng = np.random.default_rng([seed, 1, words])
    return _lines(vocabulary_bytes(vocabulary), zipf_ranks(rng, (count, words), vocabulary))


class TreeMemory(threading.Thread):
    """Samples the summed RSS (bytes) of a process and all its descendants until stopped."""

    def __init__(self, pid: int, interval: float = 0.05):
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak, self.done = pid, interval, 0, threading.Event()
        self.page = os.sysconf("SC_PAGE_SIZE")

    def run(self) -> None:
        while not self.done.wait(self.interval):
            self.peak = max(self.peak, self.sample())

    def sample(self) -> int:
        parents: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    stat = Path(entry.path, "stat").read_text()
                    parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
        tree, grew = {self.pid}, True
        while grew:
            before = len(tree)
            tree |= {pid for pid, parent in parents.items() if parent in tree}
            grew = len(tree) > before
        total = 0
        for pid in tree:
            try:
                total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * self.page
            except (OSError, IndexError, ValueError):
                continue
        return total


def timed_tree(command: list[str]) -> dict:
    """Run ``command``; wall and CPU seconds, peak tree RSS and largest single RSS (MiB), the load before."""
    before = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    sampler = TreeMemory(process.pid)
    sampler.start()
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    if status != 0:
        raise SystemExit(f"failed ({status}): {' '.join(command)}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "tree_mib": sampler.peak / 2**20,
            "largest_mib": usage.ru_maxrss / 1024, "load": before}


def stillweb_command(python: str) -> list[str]:
    """The ``stillweb`` CLI as ``python`` imports it (an older checkout's venv python runs that checkout's)."""
    return [python, "-m", "stillweb.cli.main"]


def time_build(corpus: Path, out: Path, *, workers: int = 2, python: str = sys.executable) -> dict:
    """``stillweb build corpus`` of ``corpus`` into ``out`` (timed_tree's figures plus the fingerprint)."""
    import json

    figures = timed_tree([*stillweb_command(python), "build", "corpus", str(corpus), "--out", str(out),
                          "--workers", str(workers), "--language", "en", "--quiet"])
    figures["fingerprint"] = json.loads((out / "manifest.json").read_text())["fingerprint"]
    return figures


def time_page_builds(pages: int, work: Path, *, workers: int = 2, python: str = sys.executable) -> dict:
    """``build synthetic --articles pages`` and ``build wikipedia`` of the same world's XML dump."""
    from stillweb.corpora.synthetic import generate_world, world_pages, write_xml_dump

    dump = work / f"synthetic-{pages}.xml"
    if not dump.exists():
        write_xml_dump(world_pages(generate_world(pages, 0)), dump)
    cli = stillweb_command(python)
    common = ["--workers", str(workers), "--quiet"]
    results = {
        "synthetic": timed_tree([*cli, "build", "synthetic", "--articles", str(pages), "--seed", "0",
                                 "--out", str(work / "pages-synthetic"), *common]),
        "wikipedia": timed_tree([*cli, "build", "wikipedia", str(dump), "--out", str(work / "pages-wikipedia"), *common]),
    }
    dump.unlink()
    return results


def build_table(rows: list[tuple[str, int, dict]]) -> list[str]:
    """Markdown rows: side, passages, wall, passages/s, CPU, tree and largest RSS, load, fingerprint."""
    lines = ["| build | passages | wall s | passages/s | CPU s | peak RSS, process tree MiB | largest process MiB | "
             "load before | fingerprint |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for side, passages, f in rows:
        lines.append(f"| {side} | {passages:,} | {f['wall']:.1f} | {passages / f['wall']:,.0f} | {f['cpu']:.0f} | "
                     f"{f['tree_mib']:,.0f} | {f['largest_mib']:,.0f} | {f['load']:.1f} | {f['fingerprint'][:12]} |")
    return lines


def memory_slope(rows: list[tuple[str, int, dict]], target: int = 21_000_000) -> list[str]:
    """Growth of the tree peak between consecutive sizes (MiB per 1M passages) and a linear extrapolation of the
    last two sizes to ``target`` passages (wiki-18)."""
    ours = sorted((passages, f["tree_mib"]) for side, passages, f in rows if side == "this checkout")
    lines = []
    for (small, low), (big, high) in zip(ours, ours[1:]):
        lines.append(f"- peak tree RSS {small:,} -> {big:,} passages: {high - low:+,.0f} MiB "
                     f"({(high - low) / (big - small) * 1e6:+,.0f} MiB per 1M passages)")
    if len(ours) >= 2:
        (small, low), (big, high) = ours[-2], ours[-1]
        lines.append(f"- extrapolated linearly from the last two sizes to {target:,} passages (wiki-18): "
                     f"{high + (high - low) / (big - small) * (target - big):,.0f} MiB")
    return lines


def search_side(args, corpus: Path, snapshot: Path, passages: int, body: list[str]) -> tuple[int, dict, float]:
    """Pyserini's index of ``corpus`` (timed), the engines' latencies and the serving memory; notes go to ``body``."""
    from bench_scale_search import pyserini_index, search_latency, serving_memory

    queries = {words: make_queries(args.queries, words, seed=args.seed, vocabulary=args.vocabulary) for words in (3, 8)}
    lucene = None if args.no_pyserini else args.dir / f"pyserini-{passages}"
    if lucene is not None:
        f = pyserini_index(corpus, lucene, timed_tree, threads=args.workers)
        body.append(f"- Pyserini's index of {passages:,} passages ({args.workers} threads, optimized to one segment): "
                    f"{f['wall']:.0f} s wall, {f['cpu']:.0f} CPU s, peak tree RSS {f['tree_mib']:,.0f} MiB, load {f['load']:.1f}")
    load_before = os.getloadavg()[0]
    figures = search_latency(snapshot, lucene, corpus if passages <= args.bm25s_max else None, queries)
    memory = serving_memory(snapshot, queries[3] + queries[8])
    body.append(f"- serving {passages:,} passages: one process that opened the snapshot and answered {2 * args.queries} "
                f"queries: RSS {memory['rss']:,.0f} MiB, PSS {memory['pss']:,.0f} MiB, private {memory['private']:,.0f} MiB")
    print(body[-1], flush=True)
    if lucene is not None:
        shutil.rmtree(lucene)
        shutil.rmtree(lucene.with_name(lucene.name + "-input"))
    return passages, figures, (load_before + os.getloadavg()[0]) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", default="100000", help="comma-separated corpus sizes to build (0: none)")
    parser.add_argument("--pages", type=int, default=0, help="also time the page builds at this many pages")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocabulary", type=int, default=1_000_000, help="pseudo-words in the Zipf law")
    parser.add_argument("--dir", type=Path, required=True, help="work folder (corpora and snapshots, removed after)")
    parser.add_argument("--base-python", help="an older checkout's venv python: its build of each corpus is the baseline")
    parser.add_argument("--keep", action="store_true", help="keep the corpora and snapshots")
    parser.add_argument("--append", action="store_true", help="append the figures to BENCHMARKS.md")
    parser.add_argument("--search", action="store_true", help="also time search: stillweb beside Pyserini and bm25s")
    parser.add_argument("--queries", type=int, default=200, help="search: queries of each length (3 and 8 words)")
    parser.add_argument("--bm25s-max", type=int, default=1_000_000, help="search: bm25s on corpora up to this size")
    parser.add_argument("--no-pyserini", action="store_true", help="search: leave Pyserini out")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    sizes = [int(size) for size in args.passages.split(",") if int(size) > 0]
    searched: list[tuple[int, dict, float]] = []
    body, rows = [f"Machine load at the start: {load()}; {args.workers} workers; vocabulary {args.vocabulary:,}, "
                  f"seed {args.seed}.", ""], []
    for passages in sizes:
        corpus = args.dir / f"zipf-{passages}-s{args.seed}.jsonl"
        made = make_corpus(corpus, passages, seed=args.seed, vocabulary=args.vocabulary)
        body.append(f"- corpus {passages:,} passages, {made['articles']:,} articles, {made['bytes'] / 2**20:,.0f} MiB, "
                    f"sha256 {made['sha256'][:16]}")
        sides = [("this checkout", sys.executable)] + ([("base", args.base_python)] if args.base_python else [])
        for side, python in sides:
            out = args.dir / f"snap-{passages}-{side.split()[0]}"
            rows.append((side, passages, time_build(corpus, out, workers=args.workers, python=python)))
            print(build_table(rows)[-1], flush=True)
            if args.search and side == "this checkout":
                searched.append(search_side(args, corpus, out, passages, body))
            if not args.keep:
                shutil.rmtree(out)
        if not args.keep:
            corpus.unlink()
    if rows:
        body += ["", *build_table(rows), "", *memory_slope(rows)]
    if searched:
        from bench_scale_search import bars, latency_table

        body += ["", f"Search, top 10 (stillweb with titles and snippets), {args.queries} queries of each length, "
                 "engines interleaved query by query:", "", *latency_table(searched), "", *bars(searched)]
    if args.pages:
        pages = time_page_builds(args.pages, args.dir, workers=args.workers)
        body += ["", "| page build | pages | wall s | pages/s | CPU s | peak RSS, process tree MiB | largest process MiB | "
                 "load before |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for kind, f in pages.items():
            body.append(f"| `build {kind}` | {args.pages:,} | {f['wall']:.1f} | {args.pages / f['wall']:,.0f} | "
                        f"{f['cpu']:.0f} | {f['tree_mib']:,.0f} | {f['largest_mib']:,.0f} | {f['load']:.1f} |")
        if not args.keep:
            for kind in pages:
                shutil.rmtree(args.dir / f"pages-{kind}", ignore_errors=True)
    body.append(f"\nMachine load at the end: {load()}.")
    text = "\n".join(body)
    if args.append:
        append_section("Scale: generated Zipf corpora (issue 48)", text)
    else:
        print(text)


if __name__ == "__main__":
    main()
