"""The ``card.md`` of an imported task set: the source files and their formats, the answer-match
rule, counts per split, every unmapped evidence item counted by reason, and the solvability
report (deterministic: file names, not paths; sorted keys; no times)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stillweb.corpora.tasks.store.import_check import format_solvability
from stillweb.corpora.tasks.importers.evidence import UNMAPPED_REASONS
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.corpora.version import PACKAGE_VERSION

__all__ = ["render_import_card"]


def render_import_card(name: str, fingerprint: str, formats: Mapping[str, str], tasks: Sequence[TaskRecord],
                       rows: int, options: Any, summary: Mapping[str, Any] | None,
                       qrels_unused: Mapping[str, int] | None = None, skipped: Mapping[str, int] | None = None) -> str:
    """The markdown card of an imported set (``options``: the :class:`~.run.ImportOptions` used;
    ``qrels_unused``: per qrels file, its judgements of query ids no imported row has; ``skipped``:
    questions not read, by reason)."""
    matches = Counter(task.answer_match for task in tasks)
    unanswerable = sum(not task.answerable for task in tasks)
    unmapped = (summary or {}).get("unmapped", {})
    lines = [
        f"# Task set `{name}` (imported)",
        "",
        f"- stillweb version: {PACKAGE_VERSION}",
        f"- snapshot fingerprint: `{fingerprint}`",
        "- sources: " + ", ".join(f"`{Path(path).name}` ({fmt})" for path, fmt in formats.items()),
        f"- tasks: {len(tasks)} of {rows} questions"
        + (" (--require-evidence: tasks whose gold evidence is not all present were dropped)"
           if options.require_evidence else ""),
        f"- splits: {', '.join(f'{split}: {count}' for split, count in sorted(Counter(t.split for t in tasks).items()))}",
        f"- answer match: {', '.join(f'{rule} ({count})' for rule, count in sorted(matches.items()))} "
        "(RewardConfig(answer_match=...) overrides it)",
        f"- split seed: {options.seed}; retrieval check depth k: {options.k if options.retrieval else 'not run'}",
    ]
    if qrels_unused:
        lines.append("- qrels (judged docs as evidence): " + ", ".join(
            f"`{file}` ({count} judgements of query ids not imported)" for file, count in qrels_unused.items()))
    if skipped:
        lines.append("- questions skipped (not counted above): "
                     + ", ".join(f"{reason}: {count}" for reason, count in skipped.items()))
    if unanswerable:
        lines.append(f"- unanswerable (the source marks them; abstaining is correct): {unanswerable}")
    lines += ["", "## Solvability", "", *(format_solvability(summary) or ["- no task names evidence"]), "",
              "## Unmapped evidence items", "", "| reason | items | meaning |", "|---|---|---|"]
    lines += [f"| {reason} | {count} | {UNMAPPED_REASONS.get(reason, '')} |" for reason, count in unmapped.items()]
    if not unmapped:
        lines.append("| (none) | 0 | every evidence item was mapped to a document |")
    lines.append("")
    return "\n".join(lines)
