"""The task-set card (``card.md``): parameters, provenance and distributions.

The card states the generator parameters, the snapshot fingerprint, counts per
split, the distributions of hops, shapes and levels, the rejection reasons
(uniqueness discards, shortcut rejections...) with rates, the quality figures
of :func:`~stillweb.corpora.tasks.store.quality.task_set_stats` (question words,
answer repeats, the malformed detector's rate), and the complexity of the
formalizations next to WebShaper's released 500 tasks.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence

from stillweb.corpora.tasks.formalization import formalization_stats
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.tasks.store.quality import format_task_stats, task_set_stats
from stillweb.corpora.version import PACKAGE_VERSION

__all__ = ["WEBSHAPER_REFERENCE", "page_hop_lines", "render_card", "question_word_median"]

# Measured on ../shared/data/webshaper.500.jsonl (checked by tests/test_tasks_card.py).
WEBSHAPER_REFERENCE = {
    "tasks": 500,
    "mean_triples": 12.16,
    "median_triples": 11.0,
    "mean_variables": 4.33,
    "mean_constants": 7.06,
    "malformed_tasks": 47,
    "median_question_words": 59.0,
}


def question_word_median(questions: Sequence[str]) -> float:
    """Median number of whitespace-separated words per question."""
    counts = sorted(len(q.split()) for q in questions)
    if not counts:
        return 0.0
    n = len(counts)
    return (counts[(n - 1) // 2] + counts[n // 2]) / 2


def _unanswerable_line(tasks: Sequence[TaskRecord]) -> list[str]:
    """A line counting unanswerable tasks by kind (none when the set has none, so such cards are unchanged)."""
    kinds = Counter(t.emptiness_proof.kind for t in tasks if not t.answerable and t.emptiness_proof is not None)
    if not kinds:
        return []
    return [f"- unanswerable (emptiness proven, abstaining is correct): {sum(kinds.values())} ({_counts(kinds)})"]


def page_hop_lines(counts: Mapping[str, int] | None) -> list[str]:
    """The page-hop line of a real set (issue 49 item 4): the share of attempts that could read two pages, the
    share that did, and the one-page questions kept where no chain existed."""
    if counts is None:
        return []
    attempts, tasks = counts["attempts"], sum(counts.get(k, 0) for k in ("two_pages", "one_page_no_chain",
                                                                         "one_page_with_chain"))
    with_chain = counts.get("one_page_with_chain", 0)
    return [f"- page hops: {counts.get('could', 0)} of {attempts} attempts ({_rate(counts.get('could', 0), attempts)}) "
            f"could read two pages (their answer has a keyed chain through another page); "
            f"{counts.get('two_pages', 0)} kept questions did ({_rate(counts.get('two_pages', 0), attempts)} of "
            f"attempts, {_rate(counts.get('two_pages', 0), tasks)} of questions); {counts.get('one_page_no_chain', 0)} "
            "read one page where no such chain existed"
            + (f"; {with_chain} read one page though a chain existed (one page allowed)" if with_chain else "")]


def render_card(
    name: str,
    fingerprint: str,
    generator: Mapping[str, object],
    tasks: Sequence[TaskRecord],
    attempts: int,
    rejections: Mapping[str, int],
    verified: int,
    verify_limit: int | None = 0,
    refused: Mapping[str, int] | None = None,
    page_hops: Mapping[str, int] | None = None,
) -> str:
    """The markdown card of a task set (deterministic: sorted keys, no times).

    ``verify_limit`` is the solvability sample asked for: 0 (no verifier), a
    size (the first N kept candidates) or None (every kept task). ``refused``: the facts no
    question uses, by reason (:func:`~stillweb.corpora.tasks.graph.refusal`). ``page_hops``: real pages only,
    :func:`~stillweb.corpora.tasks.compose.generate.page_hop_counts` (no line without it: synthetic cards unchanged).
    """
    stats = formalization_stats(t.formalization for t in tasks)
    hard = [t for t in tasks if t.level == 3] or list(tasks)
    hard_stats = formalization_stats(t.formalization for t in hard)
    steps = [t.oracle_steps for t in tasks if t.oracle_steps is not None]
    lines = [
        f"# Task set `{name}`",
        "",
        f"- stillweb version: {PACKAGE_VERSION}",
        f"- snapshot fingerprint: `{fingerprint}`",
        f"- generator parameters: `{json.dumps(dict(generator), sort_keys=True)}`",
        f"- tasks: {len(tasks)} from {attempts} attempts ({_rate(len(tasks), attempts)} kept)",
        f"- splits: {_counts(Counter(t.split for t in tasks))}",
        *_unanswerable_line(tasks),
        *page_hop_lines(page_hops),
        f"- solvability (reference agent, tools only): {_solvability(verified, verify_limit, rejections)}",
        f"- oracle steps: mean {_mean(steps)}; per level: "
        + (", ".join(f"L{level}: {_mean(s)}" for level, s in sorted(_steps_by_level(tasks).items())) or "n/a"),
        "",
        "## Quality (malformed detector and distributions)",
        "",
        *format_task_stats(task_set_stats(tasks)),
        "",
        "## Rejections",
        "",
        "| reason | count | rate of attempts |",
        "|---|---|---|",
        *[f"| {reason} | {count} | {_rate(count, attempts)} |" for reason, count in sorted(rejections.items())],
        *[f"| fact refused: {reason} | {count} | (facts) |" for reason, count in sorted((refused or {}).items())],
        f"| shortcut (all) | {sum(v for k, v in rejections.items() if k.startswith('shortcut'))} | "
        f"{_rate(sum(v for k, v in rejections.items() if k.startswith('shortcut')), attempts)} |",
        "",
        "## Distributions",
        "",
        f"- hops: {_counts(Counter(t.hops for t in tasks))}",
        f"- levels: {_counts(Counter(t.level for t in tasks))}",
        f"- constraints: {_counts(Counter(t.constraints for t in tasks))}",
        f"- distinct shapes: {len({t.shape for t in tasks})}",
        "",
        "| shape | tasks |",
        "|---|---|",
        *[f"| `{shape}` | {count} |" for shape, count in sorted(Counter(t.shape for t in tasks).items(), key=lambda kv: (-kv[1], kv[0]))],
        "",
        "## Complexity against WebShaper (500 released tasks)",
        "",
        "| | this set | this set, hardest level | WebShaper 500 |",
        "|---|---|---|---|",
        f"| mean triples | {stats.mean_triples} | {hard_stats.mean_triples} | {WEBSHAPER_REFERENCE['mean_triples']} |",
        f"| median triples | {stats.median_triples} | {hard_stats.median_triples} | {WEBSHAPER_REFERENCE['median_triples']} |",
        f"| mean variables | {stats.mean_variables} | {hard_stats.mean_variables} | {WEBSHAPER_REFERENCE['mean_variables']} |",
        f"| mean constants | {stats.mean_constants} | {hard_stats.mean_constants} | {WEBSHAPER_REFERENCE['mean_constants']} |",
        f"| malformed tasks | {stats.malformed_tasks} | {hard_stats.malformed_tasks} | {WEBSHAPER_REFERENCE['malformed_tasks']} |",
        f"| median question words | {question_word_median([t.question for t in tasks])} | "
        f"{question_word_median([t.question for t in hard])} | {WEBSHAPER_REFERENCE['median_question_words']} |",
        "",
    ]
    return "\n".join(lines)


def _solvability(verified: int, verify_limit: int | None, rejections: Mapping[str, int]) -> str:
    if verify_limit == 0:
        return "not run (generate with --verify N, or -1 for all)"
    sample = "every kept task" if verify_limit is None else f"a sample of the first {verify_limit} kept tasks"
    failed = rejections.get("unsolvable", 0)
    return (f"verified: {verified} tasks ({sample}); {verified - failed} solved with `oracle_steps` recorded, "
            f"{failed} rejected as `unsolvable`")


def _steps_by_level(tasks: Sequence[TaskRecord]) -> dict[int, list[int]]:
    by_level: dict[int, list[int]] = {}
    for task in tasks:
        if task.oracle_steps is not None:
            by_level.setdefault(task.level, []).append(task.oracle_steps)
    return by_level


def _counts(counter: Counter) -> str:
    return ", ".join(f"{key}: {counter[key]}" for key in sorted(counter))


def _rate(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def _mean(values: Sequence[int]) -> str:
    return f"{sum(values) / len(values):.2f}" if values else "n/a"
