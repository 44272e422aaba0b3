"""Benchmark difficulty profiles: episodes/s and the share of tasks in the 0.1-0.9 pass band.

Figures (appended to BENCHMARKS.md with ``--append``):

1. profile throughput: episodes/s of ``profile_tasks`` with a scripted policy behind a local
   OpenAI-compatible endpoint (FastAPI on 127.0.0.1, the test stub), with local worker
   processes and with Ray tasks, next to the baseline measured in the same run: the
   reference agent in-process, one worker (no HTTP);
2. the share of tasks whose pass@1 lies in [0.1, 0.9] for the reference agent, the random
   agent and a scripted "half-right" policy (solves a keyed half of the episodes: by seed and task id).

Example:
    python scripts/bench_profile.py --articles 300 --tasks 16 -k 8 --append
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))
from bench_common import append_section  # noqa: E402
from support.chat_stub import chat_stub_app, serve  # noqa: E402
from support.network import free_port  # noqa: E402

from stillweb.corpora.build.from_source import build_synthetic  # noqa: E402
from stillweb.corpora.tasks.compose.generate import generate_tasks  # noqa: E402
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.store.files import read_tasks  # noqa: E402
from stillweb.envs.profiles import PolicySpec, ProfileRun, profile_tasks, read_profile  # noqa: E402

ENV = {"max_turns": 64}  # the reference agent's budget on 4-hop tasks
BAND = (0.1, 0.9)


def make_snapshot(folder: Path, articles: int, tasks: int) -> Path:
    """A synthetic snapshot with a task set ``bench``."""
    path = folder / f"syn-{articles}"
    build_synthetic(articles, 0, path, workers=1, progress=False)
    generate_tasks(path, "bench", GenerationParams(count=tasks, seed=0), allow_partial=True, progress=False)
    return path


def timed_profile(snapshot: Path, spec: PolicySpec, k: int, workers: int = 1, on_ray: bool = False) -> tuple[float, int]:
    """(seconds, episodes) of one fresh profile run."""
    run = ProfileRun(str(snapshot), "bench", spec, k=k, splits=("train",), env_kwargs=ENV)
    start = time.perf_counter()
    profile_tasks(run, workers=workers, on_ray=on_ray)
    seconds = time.perf_counter() - start
    return seconds, sum(row["episodes"] + row["failed_episodes"] for row in read_profile(snapshot, "bench", spec.name))


def band_share(snapshot: Path, name: str) -> tuple[float, float]:
    """(share of tasks with pass@1 in the band, mean pass@1) of a profile."""
    rates = [row["pass_at_1"] for row in read_profile(snapshot, "bench", name)]
    return sum(BAND[0] <= rate <= BAND[1] for rate in rates) / len(rates), sum(rates) / len(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=300, help="synthetic articles (default 300)")
    parser.add_argument("--tasks", type=int, default=16, help="tasks to generate (default 16)")
    parser.add_argument("-k", type=int, default=8, help="episodes per task (default 8)")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray row")
    parser.add_argument("--append", action="store_true", help="append the figures to BENCHMARKS.md")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    try:
        snapshot = make_snapshot(folder, args.articles, args.tasks)
        tasks = [task for split in ("train", "dev", "test") for task in read_tasks(snapshot, "bench", split)]
        train = sum(task.split == "train" for task in tasks)
        load = os.getloadavg()
        rows = []
        base_s, base_n = timed_profile(snapshot, PolicySpec("reference", "reference"), args.k)
        rows.append(("reference agent in-process (baseline)", 1, base_s, base_n))
        port = free_port()
        with serve(chat_stub_app(tasks, mode="reference"), port) as url:
            for workers in (1, 2):
                spec = PolicySpec("chat", f"stub-w{workers}", url, "stub", retries=1)
                seconds, episodes = timed_profile(snapshot, spec, args.k, workers=workers)
                rows.append((f"stub endpoint, local workers={workers}", workers, seconds, episodes))
            if not args.no_ray:
                import ray

                ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                         configure_logging=False)
                try:
                    seconds, episodes = timed_profile(snapshot, PolicySpec("chat", "stub-ray", url, "stub", retries=1),
                                                      args.k, on_ray=True)
                    rows.append(("stub endpoint, Ray tasks (2 CPUs)", 2, seconds, episodes))
                finally:
                    ray.shutdown()
        with serve(chat_stub_app(tasks, mode="half"), port) as url:
            timed_profile(snapshot, PolicySpec("chat", "half-right", url, "stub", retries=1), args.k, workers=2)
        timed_profile(snapshot, PolicySpec("random", "random"), args.k, workers=2)
        table = ["| policy, execution | workers | episodes | seconds | episodes/s | vs baseline |",
                 "|---|---:|---:|---:|---:|---:|"]
        for label, workers, seconds, episodes in rows:
            rate = episodes / seconds
            table.append(f"| {label} | {workers} | {episodes} | {seconds:.1f} | {rate:.2f} | "
                         f"{rate / (base_n / base_s):.2f}x |")
        bands = ["| policy | tasks | mean pass@1 | share in [0.1, 0.9] |", "|---|---:|---:|---:|"]
        for name in ("reference", "random", "half-right"):
            share, mean = band_share(snapshot, name)
            bands.append(f"| {name} | {train} | {mean:.3f} | {share:.2f} |")
        uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        body = (f"Synthetic {args.articles} articles, {train} train tasks of a generated set, k={args.k}, "
                f"max_turns 64; load at start {load[0]:.1f}, at end: `{uptime}`.\n\n"
                "### Profile throughput\n\n" + "\n".join(table) + "\n\n"
                "### Share of tasks in the 0.1-0.9 pass@1 band\n\n" + "\n".join(bands) + "\n")
        if args.append:
            append_section("Difficulty profiles (tasks profile)", body)
        else:
            print(body)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
