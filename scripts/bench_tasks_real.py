"""Real-page question figures for scripts/bench_tasks.py (issue 49 items 2-4, 6): yields, rejections and refused
facts by reason, the share of attempts that could read two pages and the share that did (the card's page-hop line),
answer repetition; with the default rule (two pages where the answer has a keyed chain through another page), beside
baselines measured in the same run: one page allowed everywhere (``min_pages=1``) and two pages required everywhere
(``min_pages=2``, the rule before the page rule followed the data).

    python scripts/bench_tasks.py --real-only --real snapshots/enwiki-sample --held-out snapshots/enwiki-tables
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.compose.generate import GenerationResult, TaskGenerationError, answer_group, generate_task_list
from stillweb.corpora.tasks.compose.page_hops import two_page_roots
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.store.card import page_hop_lines
from stillweb.corpora.tasks.task_world import open_world

__all__ = ["real_section"]


def _run(world, graph: FactGraph, params: GenerationParams) -> GenerationResult | str:
    try:
        return generate_task_list(world, params, graph=graph)
    except TaskGenerationError as error:  # none could be made: the message says why
        return str(error)


def _line(label: str, run: GenerationResult | str) -> list[str]:
    if isinstance(run, str):
        return [f"- {label}: {run}"]
    tasks, rejected = run.tasks, run.rejections
    answers = Counter(answer_group(t) for t in tasks)
    pages = Counter(len(set(t.evidence_docs)) for t in tasks)
    return [
        f"- {label}: **{len(tasks)} tasks from {run.attempts} attempts**; pages read per question "
        f"{dict(sorted(pages.items()))}",
        *(f"  {line[2:]}" for line in page_hop_lines(run.page_hops)),
        f"  answers: {len(answers)} distinct, most repeated {max(answers.values(), default=0)} times; "
        f"rejections: {dict(sorted(rejected.items(), key=lambda kv: (-kv[1], kv[0])))}",
    ]


def _linked_share(graph: FactGraph) -> str:
    """How many entities have a fact usable in a question that joins them to another page."""
    linked = [e for e in graph.entities if any(graph.is_page(o) and o != e for i in graph.edges_of(e)
                                              for o in (graph.facts[i].subject, graph.facts[i].object))]
    chained = two_page_roots(graph, GenerationParams(count=1).compose.max_hops)
    return (f"{len(linked)} of {len(graph.entities)} entities with facts are joined to another page by a said fact; "
            f"{len(chained)} have a keyed chain through another page (compose/page_hops.py): only their questions "
            "must read two pages")


def real_section(snapshots: list[tuple[str, Path]], count: int, seed: int, phrase) -> str:
    """The section's lines for each (label, snapshot): refusals, yields with and without the page rule."""
    lines = [f"Load average (1/5/15 min) before: {'/'.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores). "
             "Baselines in the same run: one page allowed everywhere (`min_pages=1`) and two pages required "
             "everywhere (`min_pages=2`), all other rules on."]
    for label, path in snapshots:
        world = open_world(path)
        graph = FactGraph(world)
        lines += ["", f"### {label}: {phrase(path)}", "",
                  f"- facts refused by reason: {dict(sorted(graph.refused.items()))}; {_linked_share(graph)}"]
        lines += _line(f"default rules (count {count}, seed {seed})",
                       _run(world, graph, GenerationParams(count=count, seed=seed)))
        lines += _line("baseline, one page allowed everywhere",
                       _run(world, graph, GenerationParams(count=count, seed=seed, min_pages=1)))
        lines += _line("baseline, two pages required everywhere",
                       _run(world, graph, GenerationParams(count=count, seed=seed, min_pages=2)))
    lines.append(f"Load average after: {'/'.join(f'{x:.1f}' for x in os.getloadavg())}.")
    return "\n".join(lines)
