"""An older checkout's generator as the baseline of scripts/bench_tasks.py, in the same run (issue 49 items 1, 6).

``--base-python PY`` (an older checkout's venv python, e.g. the blind read's main 8d1597f) builds the same
synthetic world with that checkout and times its main set with the same parameters, one worker, CPU time;
this checkout then reads both sets' questions with :func:`~stillweb.corpora.tasks.phrase.patterns.reading_figures`,
so the rate and the reading figures are compared on one machine under one load.

    python scripts/bench_tasks.py --articles 5000 --seed 7 --count 1000 --base-python ../base/.venv/bin/python
"""

from __future__ import annotations

import json
import statistics
import subprocess
from pathlib import Path

from stillweb.corpora.tasks.phrase.patterns import reading_figures, reading_problems

__all__ = ["checkout_run", "base_lines"]

# Run by the older checkout's python: its own module paths (before and after issue 51's move).
_SCRIPT = r"""
import json, sys, time
from pathlib import Path
articles, seed, count, max_hops = (int(a) for a in sys.argv[1:5])
out = Path(sys.argv[5])
try:
    from stillweb.corpora.build.from_source import build_synthetic
    from stillweb.corpora.tasks.compose.generate import generate_task_list
    from stillweb.corpora.tasks.compose.params import ComposeParams
    from stillweb.corpora.tasks.compose.attempts import GenerationParams
except ImportError:
    from stillweb.corpora.build_from_source import build_synthetic
    from stillweb.corpora.tasks.generate import generate_task_list
    from stillweb.corpora.tasks.compose_params import ComposeParams
    from stillweb.corpora.tasks.attempts import GenerationParams
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.task_world import open_world
if not (out / "manifest.json").exists():
    build_synthetic(articles, seed, out, workers=1, progress=False)
world = open_world(out)
graph = FactGraph(world)
params = GenerationParams(count=count, seed=seed, compose=ComposeParams(min_hops=2, max_hops=max_hops))
started = time.process_time()
run = generate_task_list(world, params, workers=1, graph=graph)
seconds = time.process_time() - started
print(json.dumps({"tasks": len(run.tasks), "attempts": run.attempts, "seconds": seconds,
                  "rejections": dict(sorted(run.rejections.items())), "questions": [t.question for t in run.tasks],
                  "hops": [t.hops for t in run.tasks]}))
"""


def checkout_run(python: str, articles: int, seed: int, count: int, max_hops: int, out: Path) -> dict:
    """The older checkout's main set on its own build of the same world: tasks, attempts, CPU seconds, rejections,
    questions, hops, and that checkout's commit."""
    found = subprocess.run([python, "-c", _SCRIPT, str(articles), str(seed), str(count), str(max_hops), str(out)],
                           capture_output=True, text=True, check=False)
    if found.returncode != 0:
        raise SystemExit(f"the base checkout's run failed ({python}): {found.stderr.strip()[-2000:]}")
    result = json.loads(found.stdout.strip().splitlines()[-1])
    checkout = Path(python).absolute().parent.parent.parent  # .../.venv/bin/python (not resolved: a symlink)
    result["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True,
                                      text=True, check=False).stdout.strip() or "?"
    return result


def base_lines(base: dict, tasks: list, seconds: float, attempts: int) -> list[str]:
    """This checkout's main set beside the base's: rate, yield, hops, the reading figures and their limits."""
    rate, base_rate = len(tasks) / seconds, base["tasks"] / base["seconds"]
    rows = [("this checkout", rate, len(tasks), attempts, [t.hops for t in tasks], [t.question for t in tasks]),
            (f"base (commit {base['commit']})", base_rate, base["tasks"], base["attempts"], base["hops"], base["questions"])]
    lines = ["| | tasks/s per core | tasks per 1,000 attempts | median hops | sentence words p50 | question words p50 "
             "| sentences p50 | nested dash | clause before verb | limits missed |", "|---" * 10 + "|"]
    for label, speed, made, tried, hops, questions in rows:
        figures = reading_figures(questions)
        lines.append(f"| {label} | {speed:.0f} | {1000 * made / tried:.0f} | {statistics.median(hops)} | "
                     f"{figures['sentence_words_p50']} | {figures['question_words_p50']} | {figures['sentences_p50']} | "
                     f"{100 * figures['nested_dash_share']:.1f}% | {100 * figures['clause_before_verb_share']:.1f}% | "
                     f"{'; '.join(reading_problems(figures)) or 'none'} |")
    lines += ["", f"- rate, this checkout / base: {rate / base_rate:.2f}; base rejections: {base['rejections']}"]
    return lines
