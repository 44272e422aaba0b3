"""A counter of sentence patterns a person would not write (issue 35 item 4).

- ``verbless_frame``: "Which/What <noun>" followed by anything but a finite verb
  ("What person born in X and who died in Y?");
- ``that_same_noun``: "that <noun>" while two variables go by that noun ("Take a
  person ... Name the person who married that person"; a variable counts where the
  noun is followed by its relative clause or ends a phrase, or in the question's frame);
- ``restated_class``: "<noun> who worked as a <noun>";
- ``stacked_whose``: more than two "and whose" conditions in one question ("... and whose
  currency is X and whose time zone is Y and whose anthem is Z").

Per set, :func:`stock_opener_share` is the share of questions opening with a stock frame
("Think of", "Consider", "Take", "There is"); a person's set keeps it at most
:data:`MAX_STOCK_OPENER_SHARE` (issue 40 item 6).

The nouns are every noun a question can use for a variable (the mapping's template
nouns, the type nouns, the relations' object nouns); the finite verbs are the first
words of the phrasing data's verb phrases, and the auxiliaries.

>>> question_patterns("What person born in Lunor and who died in Ka?")
['verbless_frame']
>>> question_patterns("Which person was born in Lunor and died in Ka?")
[]
"""

from __future__ import annotations

import re
import tomllib
from functools import cache

from stillweb.corpora.tasks.phrase.phrasing import PHRASING_PATH, is_clause
from stillweb.corpora.tasks.types import CLASS_NOUNS
from stillweb.corpora.wikitext.mapping import MAPPING_PATH

__all__ = ["PATTERNS", "STOCK_OPENERS", "MAX_STOCK_OPENER_SHARE", "question_patterns", "stock_opener_share"]

PATTERNS = ("verbless_frame", "that_same_noun", "restated_class", "stacked_whose")
STOCK_OPENERS = ("Think of", "Consider", "Take", "There is")
MAX_STOCK_OPENER_SHARE = 0.2
_AUXILIARIES = frozenset({"is", "was", "are", "were", "has", "had", "did", "does", "do"})


def question_patterns(question: str) -> list[str]:
    """The patterns of :data:`PATTERNS` found in ``question``, in that order."""
    nouns, finite = _vocabulary()
    found = set()
    for match in nouns["frame"].finditer(question):
        if match[2].lower() not in finite:
            found.add("verbless_frame")
    for match in nouns["that"].finditer(question):
        noun = re.escape(match[1])
        mentions = re.findall(rf"\b(?:(?:a|an|the|another) {noun}(?=\s+(?:who|that|where|whose|in which|born|died|from|with|in)\b|[\u2014.,?])"
                              rf"|(?:Which|What) {noun}\b)", question)
        if len(mentions) >= 2:
            found.add("that_same_noun")
    if nouns["restated"].search(question):
        found.add("restated_class")
    if question.count("and whose ") > 2:
        found.add("stacked_whose")
    return [name for name in PATTERNS if name in found]


def stock_opener_share(questions) -> float:
    """The share of ``questions`` opening with one of :data:`STOCK_OPENERS` (0.0 for none).

    >>> stock_opener_share(["Consider a city.", "Which city lies in Ka?"])
    0.5
    """
    questions = list(questions)
    return sum(1 for q in questions if q.startswith(STOCK_OPENERS)) / len(questions) if questions else 0.0


@cache
def _vocabulary() -> tuple[dict[str, re.Pattern], frozenset[str]]:
    with open(PHRASING_PATH, "rb") as handle:
        relations = tomllib.load(handle)["relations"]
    with open(MAPPING_PATH, "rb") as handle:
        classes = tomllib.load(handle)["classes"]
    words = {spec["noun"] for spec in relations.values() if spec.get("noun")}
    words |= {noun for spec in classes.values() for noun in spec["templates"].values()}
    words |= set(CLASS_NOUNS.values()) | {"entity"}
    alternation = "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))
    phrases = [spec["f"] for spec in relations.values()] + [p for spec in relations.values() for p in spec.get("fc", {}).values()]
    finite = frozenset(p.split()[0] for p in phrases if not is_clause(p)) | _AUXILIARIES
    patterns = {
        "frame": re.compile(rf"\b(?:Which|What) ({alternation}) (\w+)"),
        "that": re.compile(rf"\bthat ({alternation})\b"),
        "restated": re.compile(rf"\b({alternation}) (?:who|that) (?:[^.?,\u2014]*? )?(?:worked|working) as an? \1\b(?! \w)"),
    }
    return patterns, finite
