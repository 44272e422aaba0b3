"""A counter of sentence patterns a person would not write (issue 35 item 4).

- ``verbless_frame``: "Which/What <noun>" followed by anything but a finite verb
  ("What person born in X and who died in Y?");
- ``that_same_noun``: "that <noun>" while two variables go by that noun ("Take a
  person ... Name the person who married that person"; a variable counts where the
  noun is followed by its relative clause or ends a phrase, or in the question's frame);
- ``restated_class``: "<noun> who worked as a <noun>";
- ``stacked_whose``: more than two "and whose" conditions in one question ("... and whose
  currency is X and whose time zone is Y and whose anthem is Z");
- ``clause_before_verb`` and ``nested_dash`` (:func:`clause_before_verb`, :func:`nested_dash`; below).

Per set, :func:`stock_opener_share` is the share of questions opening with a stock frame
("Think of", "Consider", "Take", "There is"); a person's set keeps it at most
:data:`MAX_STOCK_OPENER_SHARE` (issue 40 item 6).

How a question reads as a whole (issue 49 item 1; SailorFog-QA tells each entity in a sentence of
its own, then asks), per question and, by :func:`reading_figures`, per set against
:data:`READING_LIMITS`:

- :func:`clause_before_verb`: a clause between a question word and its verb ("the city where a
  person who was born in Ka died", "where a person—who ...—died"); a person writes none;
- :func:`nested_dash`: a clause set between dashes inside a sentence ("a person—who was married
  to ...—died"); at most 5% of a set;
- words per sentence (median at most 22) and per question (median 45 to 70), sentences split by
  :func:`sentences`; Chinese splits by 。？！, counts characters, and has its own limits
  (:data:`READING_LIMITS_ZH`, with :func:`stacked_de`: "作为...的城市所在的国家首都的城市的名称").

The nouns are every noun a question can use for a variable (the mapping's template
nouns, the type nouns, the relations' object nouns); the finite verbs are the first
words of the phrasing data's verb phrases, and the auxiliaries.

>>> question_patterns("What person born in Lunor and who died in Ka?")
['verbless_frame', 'clause_before_verb']
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

__all__ = ["PATTERNS", "STOCK_OPENERS", "MAX_STOCK_OPENER_SHARE", "READING_LIMITS", "question_patterns",
           "stock_opener_share", "clause_before_verb", "nested_dash", "stacked_de", "sentences", "reading_figures",
           "reading_problems", "READING_LIMITS_ZH"]

PATTERNS = ("verbless_frame", "that_same_noun", "restated_class", "stacked_whose", "clause_before_verb", "nested_dash")
STOCK_OPENERS = ("Think of", "Consider", "Take", "There is")
MAX_STOCK_OPENER_SHARE = 0.2
_AUXILIARIES = frozenset({"is", "was", "are", "were", "has", "had", "did", "does", "do"})
# The figures a set must meet (issue 49 item 1): (lowest, highest), None where there is no bound.
READING_LIMITS = {"sentence_words_p50": (None, 22), "question_words_p50": (45, 70), "nested_dash_share": (None, 0.05),
                  "clause_before_verb_share": (None, 0.0)}
# Chinese counts characters (a word in Latin script as one): sentences as short as SailorFog-QA's Chinese ones
# (median 34 on its 10 samples in shared/data), and no clause stacking three 的-descriptions.
READING_LIMITS_ZH = {"sentence_words_p50": (None, 38), "stacked_de_share": (None, 0.05)}
_WH_WORDS = frozenset({"where", "which", "who", "whose", "what", "when", "whom"})
_RELATIVES = frozenset({"who", "whose", "which", "where", "that", "whom"})
_DETERMINERS = frozenset({"a", "an", "the", "that", "this", "another", "its", "their", "his", "her"})
_WORD_OR_MARK_RE = re.compile(r"\u2014|[^\s\u2014,;:.?!()]+|[,;:.?!()]")
_SENTENCE_RE = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"\u201c])|(?<=[\u3002\uff1f\uff01])")
_NESTED_DASH_RE = re.compile(r"\u2014[^\u2014.?!]+\u2014|\u2014\s*(?:who|whom|whose|which|where|that|in which)\b")


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
    if clause_before_verb(question):
        found.add("clause_before_verb")
    if nested_dash(question):
        found.add("nested_dash")
    return [name for name in PATTERNS if name in found]


def clause_before_verb(question: str) -> bool:
    """True when a clause (a relative pronoun or a dash) comes between a question word and its verb.

    >>> clause_before_verb("Name the city where a person who was born in Ka died.")
    True
    >>> clause_before_verb("A person was born in Ka. Name the city where that person died.")
    False
    """
    _nouns, finite = _vocabulary()
    tokens = _WORD_OR_MARK_RE.findall(question)
    for index, token in enumerate(tokens):
        if token.lower() not in _WH_WORDS:
            continue
        for position in range(index + 1, len(tokens)):
            word = tokens[position]
            if word.lower() in finite:
                break
            if word == "," and position + 1 < len(tokens) and tokens[position + 1].lower() in _RELATIVES:
                return True  # "Which person, who was born in Ka, died ..."
            if word in ",;:.?!()":
                break
            if word == "\u2014" or (word.lower() in _RELATIVES and position > index + 1
                                    and tokens[position - 1].lower() not in _DETERMINERS
                                    and not (word.lower() == "that" and position + 1 < len(tokens)
                                             and tokens[position + 1].lower() not in finite)):
                return True
    return False


def nested_dash(question: str) -> bool:
    """True when a clause sits between dashes inside a sentence (or opens after a dash).

    >>> nested_dash("Identify the city where a person\u2014who was born in Ka\u2014died.")
    True
    >>> nested_dash("A person was born in Ka. Name the city where that person died.")
    False
    """
    return bool(_NESTED_DASH_RE.search(question))


def sentences(text: str) -> list[str]:
    """The sentences of a question: split after ".", "?" or "!" and a space before a capital (English),
    or after 。？！ (Chinese)."""
    return [part.strip() for part in _SENTENCE_RE.split(text) if part.strip()]


def reading_figures(questions) -> dict:
    """Medians of words per sentence and per question (characters for Chinese text), the shares of
    questions with a nested dash or a clause before the verb, and sentences per question; compare with
    :data:`READING_LIMITS` (issue 49 item 1).

    >>> reading_figures(["A person was born in Ka. Name the city where that person died."])["sentence_words_p50"]
    6.5
    """
    questions = list(questions)
    if not questions:
        return {"questions": 0}
    lengths = [_length(s) for q in questions for s in sentences(q)]
    return {
        "questions": len(questions),
        "language": "zh" if is_chinese(questions) else "en",
        "sentence_words_p50": _median(lengths),
        "question_words_p50": _median([_length(q) for q in questions]),
        "sentences_p50": _median([len(sentences(q)) for q in questions]),
        "nested_dash_share": round(sum(1 for q in questions if nested_dash(q)) / len(questions), 4),
        "clause_before_verb_share": round(sum(1 for q in questions if clause_before_verb(q)) / len(questions), 4),
        "stacked_de_share": round(sum(1 for q in questions if stacked_de(q)) / len(questions), 4),
    }


def stacked_de(question: str) -> bool:
    """True when one Chinese clause (between commas, 、 or stops) stacks three or more descriptions joined by
    的 (作为...的...的...的); SailorFog-QA's Chinese spreads its 的 over clauses.

    >>> stacked_de("请说出作为人口为17,208的城市所在的国家首都的城市的名称。")
    True
    >>> stacked_de("有一位出生于北京的人物。该人物的配偶出生于哪座城市？")
    False
    """
    return any(clause.count("的") >= 3 for clause in _CLAUSE_SPLIT_RE.split(question))


def reading_problems(figures: dict) -> list[str]:
    """The figures of :func:`reading_figures` outside :data:`READING_LIMITS`, as "name value (limit)"."""
    problems = []
    limits = READING_LIMITS_ZH if figures.get("language") == "zh" else READING_LIMITS
    for name, (low, high) in limits.items():
        value = figures.get(name)
        if value is None:
            continue
        if (low is not None and value < low) or (high is not None and value > high):
            problems.append(f"{name} {value} (limit {low if low is not None else ''}..{high if high is not None else ''})")
    return problems


def _length(text: str) -> int:
    """Words; for text in Chinese script, its Han characters plus its words in Latin script (names)."""
    han = len(_HAN_CHAR_RE.findall(text))
    if not han:
        return len(text.split())
    return han + len(_LATIN_WORD_RE.findall(text))


def is_chinese(questions: list[str]) -> bool:
    """True when most of ``questions`` are written in Chinese (their figures count characters)."""
    return sum(1 for q in questions if _HAN_CHAR_RE.search(q)) * 2 > len(questions)


def _median(values: list[int]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return float(ordered[middle]) if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


_HAN_CHAR_RE = re.compile(r"[\u4e00-\u9fff]")
_CLAUSE_SPLIT_RE = re.compile(r"[\uff0c\u3001\uff1b\uff1a\u3002\uff1f\uff01,;:]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9'.,\u2013-]*[A-Za-z0-9])?")


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
    backward = [spec["b"] for spec in relations.values() if spec.get("b")]  # "{who} directed {x}", "where {x} was born"
    finite |= {m[1] for b in backward for m in re.finditer(r"^(?:\{who\}|(?:where|in which) \{x\}) (\w+)", b)}
    patterns = {
        "frame": re.compile(rf"\b(?:Which|What) ({alternation}) (\w+)"),
        "that": re.compile(rf"\bthat ({alternation})\b"),
        "restated": re.compile(rf"\b({alternation}) (?:who|that) (?:[^.?,\u2014]*? )?(?:worked|working) as an? \1\b(?! \w)"),
    }
    return patterns, finite
