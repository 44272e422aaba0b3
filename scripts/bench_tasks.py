"""Benchmark the hard-query generator and append the figures to BENCHMARKS.md.

Measures verified tasks per second per core (composition, uniqueness proof,
evidence check, rendering and the shortcut search included; one worker; the
fact-graph build is timed apart and included in a second figure), then the
distributions of hops, shapes and levels, the uniqueness discards and shortcut
rejections; the complexity of a hard set (``--hard-count`` tasks at level 3
with 4-6 hops) next to WebShaper's 500; and, separately, the reference
agent's pass rate and mean steps per level on a sample of each set.

Question figures (issue 35): tasks per 1,000 attempts, the answer distribution (distinct
answers, largest share, how many answers are given by 1, 2, 3 tasks), question length, the
sentence-pattern counts, and the same for a real snapshot with ``--real`` (the shared
dump sample: ``--real-count 400 --real-seed 3``). Reading figures (issue 49): words per sentence and
question, nested dashes, clauses before a verb, against an older checkout's generator on the same world
in the same run with ``--base-python`` (scripts/bench_tasks_base.py).

    python scripts/bench_tasks.py --snapshot /tmp/stillweb-bench/search-syn-100000 --count 10000
    python scripts/bench_tasks.py --articles 5000 --count 2000 --hard-count 300 --oracle-sample 50 --real snapshots/enwiki-sample
    python scripts/bench_tasks.py --real-only --real snapshots/enwiki-sample --held-out snapshots/enwiki-tables
    python scripts/bench_tasks.py --articles 5000 --seed 7 --count 1000 --hard-count 100 --max-hops 5 --base-python ../base/.venv/bin/python
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section, snapshot_phrase  # noqa: E402
from bench_tasks_base import base_lines, checkout_run  # noqa: E402
from bench_tasks_real import real_section  # noqa: E402

from stillweb.corpora.build.from_source import build_synthetic  # noqa: E402
from stillweb.corpora.tasks.store.card import WEBSHAPER_REFERENCE, question_word_median  # noqa: E402
from stillweb.corpora.tasks.compose.params import ComposeParams  # noqa: E402
from stillweb.corpora.tasks.formalization import formalization_stats  # noqa: E402
from stillweb.corpora.tasks.phrase.patterns import reading_problems  # noqa: E402
from stillweb.corpora.tasks.compose.generate import GenerationResult, generate_task_list  # noqa: E402
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.graph import FactGraph  # noqa: E402
from stillweb.corpora.tasks.prove.keys import formalization_key_reason  # noqa: E402
from stillweb.corpora.tasks.store.quality import task_set_stats  # noqa: E402
from stillweb.corpora.tasks.task_world import open_world  # noqa: E402
from stillweb.envs.wikiqa.solvability import solve_with_reference  # noqa: E402

BASELINE = (
    "Baseline: round 1 of issue 5 (commits e6c65b2, 3e98d95; 3,000-article world, hops 2..6): 125-150 verified "
    "tasks/s per core; level 3: 9.79 mean triples (median 10), 5.08 variables, 4.69 constants, 67 question words. "
    "Before issue 35 (3a1d039): shared sample 168 tasks, 19 distinct answers, 76% one answer; 200 synthetic tasks "
    "(5k world, seed 11): 108 verbless frames, 49 'that <noun>', 45 restated classes, 12% redundant branches. "
    "Before issue 49 (blind read on 8d1597f): 342 verified tasks/s per core on the 5k world, question words p50 37, "
    "177 of 300 questions nesting a dashed clause between the frame and its verb (the base checkout's row below "
    "measures it again in this run when --base-python is given)."
)


def main() -> None:
    """Parse arguments, run the benchmark, append the section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=100_000, help="size of the world to build (without --snapshot)")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--hard-count", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-hops", type=int, default=6)
    parser.add_argument("--oracle-sample", type=int, default=200)
    parser.add_argument("--snapshot", type=Path, default=None, help="reuse this snapshot instead of building one")
    parser.add_argument("--real", type=Path, default=None, help="also measure the question figures of this real snapshot")
    parser.add_argument("--real-count", type=int, default=400)
    parser.add_argument("--real-seed", type=int, default=3)
    parser.add_argument("--real-only", action="store_true",
                        help="only the real-page figures of issue 49 (--real, and --held-out if given)")
    parser.add_argument("--held-out", type=Path, default=None, help="a real snapshot kept out of development")
    parser.add_argument("--base-python", default=None,
                        help="an older checkout's venv python: its main set on the same world is the baseline (ratios)")
    args = parser.parse_args()
    if args.real_only:
        if args.real is None:
            parser.error("--real-only needs --real SNAPSHOT")
        pairs = [("developed on", args.real)] + ([("held out", args.held_out)] if args.held_out else [])
        append_section("Task generator, real pages (scripts/bench_tasks.py --real-only, issue 49)",
                       real_section(pairs, args.real_count, args.real_seed, snapshot_phrase))
        return

    snapshot = args.snapshot or Path(f"/tmp/stillweb-bench-tasks/syn-{args.articles}-s{args.seed}")
    if not (snapshot / "manifest.json").exists():
        build_synthetic(args.articles, args.seed, snapshot, workers=1, progress=True)
    load_before = os.getloadavg()
    started = time.process_time()
    world = open_world(snapshot)
    graph = FactGraph(world)
    graph_seconds = time.process_time() - started
    started = time.process_time()
    world.search("warm up", 10)  # once per process: the index readers and a format 6 snapshot's numba cache
    warm_seconds = time.process_time() - started
    searching = _SearchClock(world)  # the shortcut filter's share of the main run
    params = GenerationParams(count=args.count, seed=args.seed, compose=ComposeParams(min_hops=2, max_hops=args.max_hops))
    main_run, main_seconds = _timed(world, graph, params)
    search_seconds, searches = searching.stop()
    unkeyed = GenerationParams(count=args.count, seed=args.seed,
                               compose=ComposeParams(min_hops=2, max_hops=args.max_hops, require_key=False))
    base_run, base_seconds = _timed(world, graph, unkeyed)  # the baseline in the same run: no keys
    hard = GenerationParams(count=args.hard_count, seed=args.seed, compose=ComposeParams(min_hops=4, max_hops=6, level=3))
    hard_run, hard_seconds = _timed(world, graph, hard)
    real_run, real_seconds = None, 0.0
    if args.real is not None:
        real_world = open_world(args.real)
        real_params = GenerationParams(count=args.real_count, seed=args.real_seed)
        real_run, real_seconds = _timed(real_world, FactGraph(real_world), real_params)
    base = None
    if args.base_python:  # the older checkout builds the same world itself (its snapshot format may differ)
        base = checkout_run(args.base_python, args.articles, args.seed, args.count, args.max_hops,
                        Path(f"{snapshot}-base"))
    load_after = os.getloadavg()
    main_oracle = _oracle(snapshot, main_run.tasks[: args.oracle_sample])
    hard_oracle = _oracle(snapshot, hard_run.tasks[: args.oracle_sample])

    tasks = main_run.tasks
    made = len(tasks)
    shortcut = sum(v for k, v in main_run.rejections.items() if k.startswith("shortcut"))
    shapes = Counter(t.shape for t in tasks)
    body = "\n".join([
        f"World: {snapshot_phrase(snapshot)} ({len(graph.facts)} facts); seed {args.seed}. "
        f"Load average (1/5/15 min) before: {_load(load_before)}, after the generation runs: {_load(load_after)} "
        f"({os.cpu_count()} cores).",
        BASELINE,
        "",
        f"### Speed ({args.count} tasks, hops 2..{args.max_hops}, 1 worker)",
        "",
        f"- **{made / main_seconds:.0f} verified tasks/s per core** (proofs, evidence, rendering, shortcut search; "
        f"CPU time of the one worker, so the machine's load does not count): "
        f"{made} tasks from {main_run.attempts} attempts in {main_seconds:.1f} CPU s ({main_run.attempts / main_seconds:.0f} attempts/s); "
        f"with the fact-graph build ({graph_seconds:.1f} s, once per process): {made / (main_seconds + graph_seconds):.0f} tasks/s; "
        f"the first search (index readers, numba cache) {warm_seconds:.1f} s, once per process",
        f"- the shortcut filter's searches: {searches} in {search_seconds:.1f} CPU s ({1000 * search_seconds / max(1, searches):.1f} ms "
        f"each, {_pct(round(1000 * search_seconds), round(1000 * main_seconds))} of the run); without them "
        f"{made / max(1e-9, main_seconds - search_seconds):.0f} tasks/s per core",
        f"- hard set ({args.hard_count} tasks, level 3, hops 4..6): {len(hard_run.tasks) / hard_seconds:.0f} tasks/s per core "
        f"({hard_run.attempts} attempts)",
        f"- baseline in the same run, keys off (`ComposeParams(require_key=False)`, as before issue 40): "
        f"{len(base_run.tasks) / base_seconds:.0f} tasks/s per core; keyed / unkeyed: "
        f"{(made / main_seconds) / (len(base_run.tasks) / base_seconds):.2f}",
        "",
        *(["### Reading (issue 49 item 1: a sentence per entity, then the ask) against the base checkout", "",
            *base_lines(base, tasks, main_seconds, main_run.attempts), ""] if base is not None else []),
        "### Distributions (main set)",
        "",
        f"- uniqueness discards (not_unique): {main_run.rejections.get('not_unique', 0)} "
        f"({_pct(main_run.rejections.get('not_unique', 0), main_run.attempts)} of attempts)",
        f"- shortcut rejections: {shortcut} ({_pct(shortcut, main_run.attempts)} of attempts); "
        f"all reasons: {dict(sorted(main_run.rejections.items()))}",
        f"- hops: {dict(sorted(Counter(t.hops for t in tasks).items()))}",
        f"- levels: {dict(sorted(Counter(t.level for t in tasks).items()))}",
        f"- distinct shapes: {len(shapes)}; top 10: {shapes.most_common(10)}",
        "",
        "### Complexity against WebShaper's 500",
        "",
        "| | main set | level 3 of main set | hard set (level 3, hops 4..6) | WebShaper 500 |",
        "|---|---|---|---|---|",
        *_complexity_rows([tasks, [t for t in tasks if t.level == 3], hard_run.tasks]),
        "",
        "### Questions (issue 35: answers, length, sentence patterns)",
        "",
        f"- main set: {_question_line(main_run)}",
        f"- hard set: {_question_line(hard_run)}",
        f"- main set, keys (issue 40): {_key_line(main_run)}",
        f"- unkeyed baseline: {_key_line(base_run)}",
        *([f"- real snapshot {snapshot_phrase(args.real)} (count {args.real_count}, seed {args.real_seed}, "
           f"{real_seconds:.1f} s): {_question_line(real_run)}",
           f"- real snapshot, keys (issue 40): {_key_line(real_run)}"] if real_run is not None else []),
        "",
        "### Oracle (reference agent through WikiQA-v0, tools only; run separately)",
        "",
        f"- main set: {_oracle_line(main_oracle)}",
        f"- hard set: {_oracle_line(hard_oracle)}",
    ])
    append_section("Task generator, round 5: told questions (scripts/bench_tasks.py, issue 49)", body)


class _SearchClock:
    """CPU seconds spent in ``world.search`` until :meth:`stop` (the search is replaced by a timed call)."""

    def __init__(self, world) -> None:
        self.world, self.search, self.seconds, self.calls = world, world.search, 0.0, 0

        def timed(query: str, k: int):
            started = time.process_time()
            try:
                return self.search(query, k)
            finally:
                self.seconds += time.process_time() - started
                self.calls += 1

        world.search = timed

    def stop(self) -> tuple[float, int]:
        self.world.search = self.search
        return self.seconds, self.calls


def _timed(world, graph: FactGraph, params: GenerationParams) -> tuple[GenerationResult, float]:
    """The run and its CPU seconds (one worker, so CPU time is time on one core, whatever the load)."""
    started = time.process_time()
    result = generate_task_list(world, params, workers=1, progress=True, graph=graph)
    return result, time.process_time() - started


def _oracle(snapshot: Path, sample: list[dict]) -> dict:
    steps: dict[int, list[int]] = defaultdict(list)
    failures = 0
    started = time.perf_counter()
    for task in sample:
        solved = solve_with_reference(snapshot, task)
        if solved.solved:
            steps[task.level].append(solved.steps)
        else:
            failures += 1
    return {"n": len(sample), "failures": failures, "steps": steps, "seconds": time.perf_counter() - started}


def _oracle_line(oracle: dict) -> str:
    per_level = ", ".join(f"L{level}: {sum(s) / len(s):.1f} (n={len(s)})" for level, s in sorted(oracle["steps"].items()))
    rate = oracle["n"] / oracle["seconds"] if oracle["seconds"] else 0.0
    return (f"{oracle['n'] - oracle['failures']}/{oracle['n']} solved in {oracle['seconds']:.1f} s "
            f"({rate:.1f} tasks/s); mean steps per level: {per_level}")


def _complexity_rows(sets: list[list[dict]]) -> list[str]:
    stats = [formalization_stats(t.formalization for t in tasks) for tasks in sets]
    rows = []
    for label, key in (("tasks", "tasks"), ("mean triples", "mean_triples"), ("median triples", "median_triples"),
                       ("mean variables", "mean_variables"), ("mean constants", "mean_constants"),
                       ("malformed tasks", "malformed_tasks")):
        rows.append(f"| {label} | " + " | ".join(str(getattr(s, key)) for s in stats) + f" | {WEBSHAPER_REFERENCE[key]} |")
    words = [question_word_median([t.question for t in tasks]) for tasks in sets]
    rows.append("| median question words | " + " | ".join(str(w) for w in words)
                + f" | {WEBSHAPER_REFERENCE['median_question_words']} |")
    return rows


def _question_line(run: GenerationResult) -> str:
    """Tasks per 1,000 attempts, answers, question words and sentence-pattern counts of one run."""
    stats = task_set_stats(run.tasks)
    per_answer = ", ".join(f"{n}: {k}" for n, k in stats["tasks_per_answer"].items())
    patterns = ", ".join(f"{k} {v}" for k, v in stats["patterns"].items())
    return (f"{len(run.tasks)} tasks, {1000 * len(run.tasks) / run.attempts:.0f} per 1,000 attempts; answers: "
            f"{stats['distinct_answers']} distinct ({_pct(stats['distinct_answers'], len(run.tasks))}), largest share "
            f"{100 * stats['answer_max_share']:.1f}%, answers given by n tasks {{{per_answer}}}; question words p50 "
            f"{stats['words_p50']}, p95 {stats['words_p95']}; patterns: {patterns}; malformed {stats['malformed']}; "
            f"reading (issue 49): {_reading(stats['reading'])}")


def _reading(figures: dict) -> str:
    """Sentence and question medians, nested dashes and clauses before the verb, the limits missed."""
    if not figures.get("questions"):
        return "no questions"
    missed = "; ".join(reading_problems(figures)) or "none"
    return (f"sentence words p50 {figures['sentence_words_p50']}, question words p50 {figures['question_words_p50']}, "
            f"sentences p50 {figures['sentences_p50']}, nested dash {100 * figures['nested_dash_share']:.1f}%, "
            f"clause before verb {100 * figures['clause_before_verb_share']:.1f}%, limits missed: {missed}")


def _key_line(run: GenerationResult) -> str:
    """Share of tasks whose formalization is keyed, rejections by reason, refused facts, hops, words, openers."""
    keyed = sum(1 for t in run.tasks if formalization_key_reason(
        t.formalization, [o.obfuscated for o in t.obfuscations if o.kind != "entity_to_description"]) is None)
    stats = task_set_stats(run.tasks)
    rejections = ", ".join(f"{k} {v}" for k, v in sorted(run.rejections.items(), key=lambda kv: (-kv[1], kv[0])))
    refused = ", ".join(f"{k} {v}" for k, v in sorted(run.refused.items())) or "none"
    return (f"{len(run.tasks)} tasks from {run.attempts} attempts, keyed {_pct(keyed, len(run.tasks))}; median words "
            f"{stats['words_p50']}; hops {stats['hops']}; stock openers {100 * stats['stock_opener_share']:.1f}%; "
            f"rejections: {rejections}; facts refused: {refused}")


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def _load(values: tuple[float, float, float]) -> str:
    return "/".join(f"{v:.2f}" for v in values)


if __name__ == "__main__":
    main()
