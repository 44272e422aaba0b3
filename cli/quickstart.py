"""``stillweb quickstart``: the main job on the embedded default corpus.

1. Builds (or reuses) the default snapshot, a synthetic world of 20,000
   articles with seed 0, in ``$STILLWEB_HOME/snapshots/`` (default
   ``~/.cache/stillweb``), and prints its fingerprint and example searches.
2. Generates (or reuses) the default task set ``default``: multi-hop questions
   with proven unique answers, a sample of them solved by the reference agent.
3. Runs the reference agent through ``stillweb/WikiQA-v0`` on a handful of test
   tasks and prints a table of turns, outcome and reward parts, then the commands to try next.

``STILLWEB_QUICKSTART_ARTICLES`` changes the default world size (the docs' test
runner and ``scripts/newcomer.sh`` use a small world: the full one takes minutes).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import gymnasium as gym

import stillweb.envs  # noqa: F401 - registers the environments
from stillweb.corpora.build.from_source import build_synthetic
from stillweb.corpora.home import default_home
from stillweb.corpora.snapshot.manifest import SnapshotError, read_manifest
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.files import read_tasks, task_set_dir
from stillweb.envs import ReferenceAgent, run_episode
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.envs.wikiqa.solvability import generate_verified_tasks

ARTICLES_VARIABLE = "STILLWEB_QUICKSTART_ARTICLES"
DEFAULT_ARTICLES = 20_000
DEFAULT_SEED = 0
EXAMPLE_QUERIES = ("university founded", "film directed by", "capital city population")
TASK_SET = "default"


def register(subparsers) -> None:
    """Add ``quickstart``."""
    parser = subparsers.add_parser(
        "quickstart",
        help="build the default snapshot and try it",
        description="Build (or reuse) the default synthetic snapshot, run example searches, generate the default "
        "task set and run the reference agent on a few tasks.",
        epilog="examples:\n  stillweb quickstart\n  stillweb quickstart --articles 2000 --out /tmp/syn\n"
        f"  {ARTICLES_VARIABLE}=2000 stillweb quickstart      # a small world by default (seconds, not minutes)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", help="snapshot directory (default: $STILLWEB_HOME/snapshots/synthetic-<articles>-s<seed>)")
    parser.add_argument("--articles", type=int, default=int(os.environ.get(ARTICLES_VARIABLE, DEFAULT_ARTICLES)),
                        help=f"articles in the world (default 20000, or ${ARTICLES_VARIABLE})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="world seed (default 0)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="build processes (default: all cores)")
    parser.add_argument("--tasks", type=int, default=200, help="tasks in the default task set (default 200)")
    parser.add_argument("--verify", type=int, default=20, help="tasks the reference agent must solve at generation (default 20)")
    parser.add_argument("--episodes", type=int, default=5, help="reference-agent episodes to show (default 5)")
    parser.set_defaults(handler=run)


def ensure_snapshot(out: Path, articles: int, seed: int, workers: int) -> Snapshot:
    """Open the snapshot at ``out`` if it was built with these parameters, else build it."""
    try:
        manifest = read_manifest(out)
        if manifest.get("source") == {"kind": "synthetic", "articles": articles, "seed": seed}:
            return Snapshot.open(out)
    except SnapshotError:
        pass
    print(f"building the synthetic world ({articles} articles, seed {seed}) in {out} ...")
    build_synthetic(articles, seed, out, workers=workers)
    return Snapshot.open(out)


def run(args) -> int:
    """Build or reuse the default snapshot and show what it can do."""
    out = Path(args.out) if args.out else default_home() / "snapshots" / f"synthetic-{args.articles}-s{args.seed}"
    snapshot = ensure_snapshot(out, args.articles, args.seed, args.workers)
    counts = snapshot.manifest["counts"]
    print(f"snapshot:    {snapshot.path}")
    print(f"fingerprint: {snapshot.fingerprint}")
    print(f"documents:   {counts['docs']}  facts: {counts['facts']}  links: {counts['links']}  redirects: {counts['redirects']}")
    for query in EXAMPLE_QUERIES:
        print(f"\nsearch {query!r}:")
        for rank, result in enumerate(snapshot.search(query, k=3), 1):
            print(f"  {rank}. [doc {result.doc_id}] {result.title} ({result.score:.2f}): {result.snippet[:100]}")
    ensure_tasks(snapshot, args.tasks, args.seed, args.verify)
    first_task = run_reference_episodes(snapshot, args.episodes)
    print(f"\nfingerprint: {snapshot.fingerprint}")
    print_next_steps(snapshot.path, first_task)
    return 0


def print_next_steps(path: Path, task_id: str | None) -> None:
    """The commands a newcomer runs next, with this snapshot's real path and a real task id."""
    print("\nnext:")
    print(f"  stillweb tasks show {path} {TASK_SET} {task_id or ''}".rstrip() + "     # one task: question, answer, evidence")
    print(f"  stillweb serve {path} --port 8000            # the tools and environments over HTTP")
    print(f"  stillweb view {path} --tasks {TASK_SET}            # look at the documents and tasks in a browser")
    print(f'  python3 -c "import gymnasium as gym, stillweb.envs; env = gym.make(\'stillweb/WikiQA-v0\', '
          f'snapshot=\'{path}\', tasks=\'{TASK_SET}\'); print(env.reset(seed=0)[0][-300:])"')


def ensure_tasks(snapshot: Snapshot, count: int, seed: int, verify: int) -> None:
    """Generate the default task set unless it is already there; print its card's summary."""
    card = task_set_dir(snapshot.path, TASK_SET) / "card.md"
    if not card.exists():
        print(f"\ngenerating {count} tasks (seed {seed}), the first {verify} solved by the reference agent ...")
        generate_verified_tasks(snapshot.path, TASK_SET, GenerationParams(count=count, seed=seed, verify_limit=verify),
                                progress=True, allow_partial=True)
    print(f"\ntask set {TASK_SET!r}: {card}")
    wanted = ["- tasks:", "- splits:", "- solvability", "- oracle", "- hops:", "- levels:"]
    for line in card.read_text(encoding="utf-8").splitlines():
        prefix = next((prefix for prefix in wanted if line.startswith(prefix)), None)
        if prefix is not None:  # the card repeats some lines (summary and distributions): print each once
            wanted.remove(prefix)
            print(f"  {line[2:]}")


def run_reference_episodes(snapshot: Snapshot, episodes: int) -> str | None:
    """Run the reference agent on the first ``episodes`` test tasks (default limits) and print a table;
    return the first task's id."""
    tasks = read_tasks(snapshot.path, TASK_SET, "test")[:episodes]
    env = gym.make("stillweb/WikiQA-v0", snapshot=snapshot.path, tasks=TASK_SET, split="test")
    print(f"\nreference agent on {len(tasks)} test tasks of {TASK_SET!r} (stillweb/WikiQA-v0, tongyi format):")
    print(f"  {'task':<28} {'hops':>4} {'level':>5} {'turns':>5} {'outcome':>7} {'cit.prec':>8} {'cit.rec':>7} {'rubric':>6} {'gamma':>6}")
    for task in tasks:
        summary = run_episode(env, lambda record: ReferenceAgent(record), options={"task_id": task.task_id})
        parts = summary["reward_parts"] or {}
        print(f"  {summary['task_id']:<28} {task.hops:>4} {task.level:>5} {summary['turns']:>5} "
              f"{summary['outcome']:>7.1f} {parts.get('citation_precision', 0):>8.2f} {parts.get('citation_recall', 0):>7.2f} "
              f"{parts.get('rubric', 0):>6.2f} {parts.get('gamma_decay', 0):>6.2f}")
        print(f"      Q: {task.question[:150]}{'...' if len(task.question) > 150 else ''}")
        print(f"      A: {summary['answer']}")
    env.close()
    return tasks[0].task_id if tasks else None
