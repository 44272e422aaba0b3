"""The quality of a task set: one malformed-task detector and the figures ``tasks stats`` prints.

:func:`malformed_reasons` checks one task for what makes a question unfit to
train on: a raw infobox key or a relation the phrasing data does not cover
(the question would say "whose commander2 is ..."), markup or refs in the
question or a stated value, unbalanced brackets, a value over
:data:`MAX_VALUE_WORDS` words, the answer or one of its aliases in the
question, and an answer that still carries a disambiguator ("X (album)").
:func:`task_set_stats` runs it on every task of a set and adds the
distributions (words p50/p95, hops, shapes, answer repeats and their entropy)
that the task card and ``stillweb tasks stats SNAPSHOT NAME`` show.

>>> malformed_reasons({"question": "Which album {{x}}?", "answer": "Y (album)", "aliases": [],
...                    "formalization": [], "evidence": []})
['markup', 'qualified_answer']
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from stillweb.corpora.tasks.phrase.patterns import (
    PATTERNS,
    STOCK_OPENERS,
    question_patterns,
    reading_figures,
    reading_problems,
    stock_opener_share,
)
from stillweb.corpora.tasks.phrase.phrasing import known_relations
from stillweb.corpora.tasks.store.record import TaskRecord

__all__ = ["MAX_VALUE_WORDS", "MALFORMED_REASONS", "malformed_reasons", "task_set_stats", "format_task_stats"]

MAX_VALUE_WORDS = 12
MALFORMED_REASONS = ("raw_key", "unphrased_relation", "markup", "unbalanced_brackets", "long_value",
                     "answer_in_question", "qualified_answer")  # fmt: skip


def malformed_reasons(task: TaskRecord | Mapping) -> list[str]:
    """What is wrong with one task (a :class:`TaskRecord` or its dict; an empty list when well formed),
    in :data:`MALFORMED_REASONS` order."""
    task = task.to_dict() if isinstance(task, TaskRecord) else task
    question = task["question"]
    # An imported task's evidence values are its source's sentences and paragraphs, not stated values.
    values = [] if task.get("source") else [str(item["value"]) for item in task.get("evidence", [])]
    values += [term[2:] for triple in task.get("formalization", []) for term in (triple[0], triple[2])
               if isinstance(term, str) and term.startswith("C@")]
    relations = {triple[1] for triple in task.get("formalization", []) if len(triple) == 3}
    found = set()
    if _RAW_KEY_RE.search(question):
        found.add("raw_key")
    if relations - known_relations():
        found.add("unphrased_relation")
    if any(_MARKUP_RE.search(text) for text in (question, *values)):
        found.add("markup")
    if any(not _balanced(text) for text in (question, *values)):
        found.add("unbalanced_brackets")
    if any(len(label.split()) > MAX_VALUE_WORDS for value in values for label in value.split(" | ")):
        found.add("long_value")
    lowered = question.lower()
    for name in [task["answer"], *task.get("aliases", [])]:
        name = str(name).strip().lower()
        if len(name) > 2 and re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", lowered):
            found.add("answer_in_question")
            break
    if _QUALIFIED_RE.search(str(task["answer"])):
        found.add("qualified_answer")
    return [reason for reason in MALFORMED_REASONS if reason in found]


def task_set_stats(tasks: Sequence[TaskRecord | Mapping]) -> dict:
    """Words p50/p95, hops, shapes, answer repeats (top 5, entropy in bits), the malformed rate, sentence patterns
    and the reading figures (:func:`~stillweb.corpora.tasks.phrase.patterns.reading_figures`)."""
    tasks = [task.to_dict() if isinstance(task, TaskRecord) else task for task in tasks]
    words = sorted(len(t["question"].split()) for t in tasks)
    answers = Counter(t["answer"] for t in tasks if t.get("answerable", True))
    reasons = Counter(reason for t in tasks for reason in malformed_reasons(t))
    malformed = sum(1 for t in tasks if malformed_reasons(t))
    total = len(tasks)
    entropy = -sum(n / total * math.log2(n / total) for n in answers.values()) if total else 0.0
    return {
        "tasks": total,
        "words_p50": _percentile(words, 0.5),
        "words_p95": _percentile(words, 0.95),
        "hops": dict(sorted(Counter(t["hops"] for t in tasks).items())),
        "shapes": dict(sorted(Counter(t["shape"] for t in tasks).items(), key=lambda kv: (-kv[1], kv[0]))),
        "answers_top5": [[answer, n] for answer, n in sorted(answers.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
        "answer_max_share": round(max(answers.values()) / total, 4) if answers else 0.0,
        "answer_entropy_bits": round(entropy, 3),
        "distinct_answers": len(answers),
        "tasks_per_answer": {str(k): v for k, v in sorted(Counter(answers.values()).items())},
        "malformed": malformed,
        "malformed_rate": round(malformed / total, 4) if total else 0.0,
        "malformed_reasons": dict(sorted(reasons.items())),
        "patterns": {name: sum(1 for t in tasks if name in question_patterns(t["question"])) for name in PATTERNS},
        "stock_opener_share": round(stock_opener_share(t["question"] for t in tasks), 4),
        "reading": reading_figures(t["question"] for t in tasks),
    }


def format_task_stats(stats: dict) -> list[str]:
    """The stats as markdown list lines (for the card and the CLI)."""
    top = ", ".join(f"{answer} ({n})" for answer, n in stats["answers_top5"])
    reasons = ", ".join(f"{k}: {v}" for k, v in stats["malformed_reasons"].items()) or "none"
    return [
        f"- question words: p50 {stats['words_p50']}, p95 {stats['words_p95']} (WebShaper 500: p50 59, p95 114)",
        f"- hops: {', '.join(f'{k}: {v}' for k, v in stats['hops'].items())}",
        f"- shapes: {len(stats['shapes'])} distinct",
        f"- answers: {stats['distinct_answers']} distinct, entropy {stats['answer_entropy_bits']} bits, "
        f"largest share {100 * stats['answer_max_share']:.1f}%; top 5: {top}",
        "- answers given by n tasks (n: answers): "
        + (", ".join(f"{n}: {k}" for n, k in stats.get("tasks_per_answer", {}).items()) or "none"),
        f"- malformed: {stats['malformed']} of {stats['tasks']} ({100 * stats['malformed_rate']:.1f}%); reasons: {reasons}",
        "- sentence patterns a person would not write (tasks): "
        + ", ".join(f"{k}: {v}" for k, v in stats.get("patterns", {}).items()),
        f"- stock openers ({' / '.join(STOCK_OPENERS)}): {100 * stats.get('stock_opener_share', 0.0):.1f}% of questions",
        *_reading_lines(stats.get("reading")),
    ]


def _reading_lines(reading: dict | None) -> list[str]:
    """How the questions read as a whole (issue 49): sentence and question medians, nested dashes, clauses
    between a question word and its verb, and the limits missed."""
    if not reading or not reading.get("questions"):
        return []
    missed = "; ".join(reading_problems(reading)) or "none"
    return [f"- reading: sentence words p50 {reading['sentence_words_p50']}, question words p50 "
            f"{reading['question_words_p50']}, sentences p50 {reading['sentences_p50']}; nested dash "
            f"{100 * reading['nested_dash_share']:.1f}%, clause before verb {100 * reading['clause_before_verb_share']:.1f}% "
            f"of questions; limits missed: {missed}"]


def _percentile(sorted_values: Sequence[int], q: float) -> float:
    """Linear-interpolated percentile (numpy's default) of sorted values."""
    if not sorted_values:
        return 0.0
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return round(sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low), 1)


def _balanced(text: str) -> bool:
    depth = {"(": 0, "[": 0}
    closing = {")": "(", "]": "["}
    for char in text:
        if char in depth:
            depth[char] += 1
        elif char in closing:
            depth[closing[char]] -= 1
            if depth[closing[char]] < 0:
                return False
    return all(value == 0 for value in depth.values())


_RAW_KEY_RE = re.compile(r"\b[a-z]+_[a-z_]+\b|\b[a-z]{3,}\d+\b")
_MARKUP_RE = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|</?[a-zA-Z][a-zA-Z0-9]*[ />]|&[a-z]+;|'''|\{\||\|\}")
_QUALIFIED_RE = re.compile(r"\s\([^()]+\)$")
