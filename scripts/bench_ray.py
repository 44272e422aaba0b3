"""Benchmark stillweb on Ray (needs ``stillweb[ray]``); a local runtime of ``--cpus`` CPUs.

Figures (appended to BENCHMARKS.md with ``--append``):

1. pool step cost per env step at 64 envs, batch 64, against the in-process
   ``SyncVectorEnv`` (``gym.make_vec(..., vectorization_mode="sync")``) stepping the
   same search actions (goal: within 1.5x), with the pool's fixed per-batch round
   trip (empty batches to every actor) and the result bytes per step, which say
   what dominates;
2. rollout throughput (episodes/s, steps/s) of :class:`RolloutService` with 1 and 2
   workers and a scripted policy;
3. resident memory per actor holding 256 environments, against an actor with 1;
4. sharded build time (``on_ray=True``) against the local build (``workers=1`` and
   ``workers=--cpus``) of the same source, fingerprints compared.

Example:
    nice -n 10 python scripts/bench_ray.py --snapshot /tmp/bench-snapshots/synthetic-20000-s0 \\
        --build-source ../shared/data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 --append
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section  # noqa: E402

import stillweb.envs  # noqa: E402,F401 - registers the environments
from stillweb.corpora.build.from_source import build_synthetic, build_wikipedia  # noqa: E402
from stillweb.corpora.keyed import KeyedRng  # noqa: E402
from stillweb.corpora.snapshot.reading import Snapshot  # noqa: E402
from stillweb.envs.agents.scripted import write_call  # noqa: E402

ENV_ID = "stillweb/WikiQA-v0"
TASKS = [{"task_id": "bench", "question": "Which town is the bench mark?", "answer": "Nowhere"}]
UNLIMITED = {"max_turns": 10**6, "max_tool_calls": 10**6, "max_context_tokens": 10**12}


def search_actions(snapshot: Path, count: int) -> list[str]:
    """Tongyi search calls for the titles of keyed-random documents."""
    opened = Snapshot.open(snapshot)
    rng = KeyedRng(0, "bench_ray", "queries")
    return [write_call("tongyi", "search", {"query": opened.title_of(rng.integer(0, len(opened) - 1))}) for _ in range(count)]


def pool_overhead(snapshot: Path, envs: int, per_actor: int, steps: int) -> str:
    """Seconds per env step: SyncVectorEnv vs RayVectorEnv (full info, and info without messages)."""
    import ray

    from stillweb.envs.ray import RayVectorEnv

    kwargs = {"snapshot": str(snapshot), "tasks": TASKS, **UNLIMITED}
    actions = search_actions(snapshot, steps * envs)
    batches = [actions[turn * envs:(turn + 1) * envs] for turn in range(steps)]
    rows, figures = [], {}
    makers = {
        "in-process SyncVectorEnv (baseline)": lambda: gym.make_vec(ENV_ID, num_envs=envs, vectorization_mode="sync", **kwargs),
        f"RayVectorEnv, {per_actor} envs/actor": lambda: RayVectorEnv(ENV_ID, envs, envs_per_actor=per_actor, **kwargs),
        f"RayVectorEnv, {per_actor} envs/actor, info without messages":
            lambda: RayVectorEnv(ENV_ID, envs, envs_per_actor=per_actor, info_exclude=("messages",), **kwargs),
    }
    result_bytes = {}
    for name, make in makers.items():
        vector = make()
        vector.reset(seed=0)
        vector.step(batches[0])  # warm up
        start = time.perf_counter()
        for batch in batches[1:]:
            outcome = vector.step(batch)
        figures[name] = (time.perf_counter() - start) / ((steps - 1) * envs)
        result_bytes[name] = len(pickle.dumps(outcome[4])) / envs
        if hasattr(vector, "pool"):
            pool = vector.pool
            start = time.perf_counter()
            for _ in range(20):
                ray.get([actor.run.remote([]) for actor in pool.actors])
            figures[name + " (empty batch round trip, per env)"] = (time.perf_counter() - start) / (20 * envs)
        vector.close()
    baseline = figures["in-process SyncVectorEnv (baseline)"]
    rows = ["| vector env | us per env step | ratio to SyncVectorEnv | info bytes per env step |", "|---|---:|---:|---:|"]
    for name, seconds in figures.items():
        size = f"{result_bytes[name]:.0f}" if name in result_bytes else ""
        rows.append(f"| {name} | {seconds * 1e6:.1f} | {seconds / baseline:.2f}x | {size} |")
    return "\n".join(rows)


def rollout_throughput(snapshot: Path, episodes: int, turns: int) -> str:
    """Episodes/s and steps/s of a RolloutService with a scripted policy, 1 and 2 workers."""
    from stillweb.envs.ray import EpisodeSpec, RolloutService, ScriptedPolicy

    actions = search_actions(snapshot, turns - 1) + ["<answer>Nowhere</answer>"]
    kwargs = {"snapshot": str(snapshot), "tasks": TASKS, **UNLIMITED}
    rows = ["| workers | episodes | steps | seconds | episodes/s | steps/s |", "|---:|---:|---:|---:|---:|---:|"]
    for workers in (1, 2):
        service = RolloutService(ENV_ID, kwargs, ScriptedPolicy({"bench": actions}), workers=workers, buffer_capacity=64)
        service.run([EpisodeSpec(f"warm{w}", w) for w in range(workers)])
        start = time.perf_counter()
        trajectories = service.run([EpisodeSpec(f"ep{index}", index) for index in range(episodes)])
        seconds = time.perf_counter() - start
        service.close()
        steps = sum(trajectory.steps for trajectory in trajectories)
        rows.append(f"| {workers} | {episodes} | {steps} | {seconds:.2f} | {episodes / seconds:.2f} | {steps / seconds:.1f} |")
    return "\n".join(rows)


def actor_memory(snapshot: Path, envs: int) -> str:
    """RSS of an actor holding ``envs`` environments (after a reset each) against one holding 1."""
    from stillweb.envs.ray import EnvPool

    kwargs = {"snapshot": str(snapshot), "tasks": TASKS}
    rows = ["| envs in the actor | RSS MiB | MiB per extra env |", "|---:|---:|---:|"]
    sizes = {}
    for count in (1, envs):
        pool = EnvPool(ENV_ID, count, envs_per_actor=count, env_kwargs=kwargs, info_exclude=("messages",))
        pool.run([("reset", index, None) for index in range(count)])
        sizes[count] = pool.memory()[0]["rss_bytes"] / 2**20
        pool.close()
    rows.append(f"| 1 | {sizes[1]:.0f} | |")
    rows.append(f"| {envs} | {sizes[envs]:.0f} | {(sizes[envs] - sizes[1]) / (envs - 1):.3f} |")
    return "\n".join(rows)


def build_times(source: Path | None, articles: int, cpus: int) -> str:
    """Seconds of the local build (1 and ``cpus`` workers) and the sharded Ray build of one source."""
    from stillweb.corpora.build import on_ray

    work = Path(tempfile.mkdtemp(prefix="bench-ray-build-"))
    rows = ["| source | build | seconds | docs | fingerprint |", "|---|---|---:|---:|---|"]
    try:
        if source is not None:
            source = _multistream(source, work)
            label = f"{source.name} ({source.stat().st_size / 2**20:.1f} MiB, multistream)"
            run = lambda out, **options: build_wikipedia(source, out, progress=False, **options)  # noqa: E731
        else:
            label = f"synthetic {articles} articles"
            run = lambda out, **options: build_synthetic(articles, 0, out, progress=False, **options)  # noqa: E731
        on_ray.SHARD_BYTES = 1 << 20
        for name, options in (("local, workers=1", {}), (f"local, workers={cpus}", {"workers": cpus}),
                              (f"Ray shards of 1 MiB, {cpus} CPUs", {"on_ray": True})):
            start = time.perf_counter()
            result = run(work / name.split(",")[0].replace(" ", "-") / "snap", **options)
            seconds = time.perf_counter() - start
            manifest = result.manifest
            rows.append(f"| {label} | {name} | {seconds:.1f} | {manifest['counts']['docs']} | {manifest['fingerprint'][:12]} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return "\n".join(rows)


def _multistream(source: Path, work: Path) -> Path:
    """``source`` recompressed with 100 pages per bzip2 stream (as Wikipedia's multistream dumps)."""
    import bz2

    xml = bz2.decompress(source.read_bytes()) if source.suffix == ".bz2" else source.read_bytes()
    pages = xml.split(b"<page>")
    chunks = [pages[0]] + [b"<page>" + b"<page>".join(pages[i:i + 100]) for i in range(1, len(pages), 100)]
    out = work / (source.name.removesuffix(".bz2") + "-multistream.bz2")
    out.write_bytes(b"".join(bz2.compress(chunk) for chunk in chunks))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshot", type=Path, required=True, help="snapshot for the env figures")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray runtime (default 2)")
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--envs-per-actor", type=int, default=32)
    parser.add_argument("--steps", type=int, default=6, help="vector steps per measurement (the first is warm-up)")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--memory-envs", type=int, default=256)
    parser.add_argument("--build-source", type=Path, default=None, help="an XML dump to build (default: synthetic)")
    parser.add_argument("--build-articles", type=int, default=3000, help="synthetic articles when no --build-source")
    parser.add_argument("--append", action="store_true", help="append the figures to BENCHMARKS.md")
    args = parser.parse_args()

    import ray

    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=args.cpus, _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False)
    load = os.getloadavg()[0]
    sections = [
        f"Snapshot: {args.snapshot.name}; local Ray runtime of {args.cpus} CPUs on 127.0.0.1; "
        f"load average at start {load:.1f} (1 min), {os.cpu_count()} cores.",
        f"### Pool step cost ({args.envs} envs, batch {args.envs}, {args.steps - 1} timed steps of search calls)\n\n"
        + pool_overhead(args.snapshot, args.envs, args.envs_per_actor, args.steps),
        f"### Rollout throughput ({args.episodes} episodes of {args.turns} turns, scripted policy)\n\n"
        + rollout_throughput(args.snapshot, args.episodes, args.turns),
        f"### Memory per actor ({args.memory_envs} envs)\n\n" + actor_memory(args.snapshot, args.memory_envs),
        "### Sharded build against the local build\n\n" + build_times(args.build_source, args.build_articles, args.cpus),
    ]
    ray.shutdown()
    body = "\n\n".join(sections)
    if args.append:
        append_section("Ray: pool step cost, rollout throughput, actor memory, sharded build (issue 14)", body)
    else:
        print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
