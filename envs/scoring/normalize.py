"""Answer normalization: when do two answer strings mean the same thing?

The outcome reward compares the agent's answer with the task's answer and
aliases after :func:`normalize_answer`, which extends the SQuAD/KILT recipe
(case, punctuation, articles, whitespace) with canonical number and date
formats, so that "1,000" = "1000" and "12 February 1809" = "February 12, 1809"
= "1809-02-12". Token F1 (:func:`best_f1`) is available as a softer metric.

>>> normalize_answer("The Battle of Hastings!")
'battle of hastings'
>>> answers_match("February 12, 1809", ["1809-02-12"])
True
>>> answers_match("1,000", ["1000"])
True
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from stillweb.corpora.tasks.answer_match import em_score, f1_score, subem_score
from stillweb.corpora.wikitext.dates import MONTH_NUMBERS

__all__ = ["normalize_answer", "answers_match", "token_f1", "best_f1", "match_score"]

_MONTH = r"(?P<month>" + "|".join(sorted(MONTH_NUMBERS, key=lambda m: (-len(m), m))) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{1,4})"

_DATE_PATTERNS = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),  # 12 February 1809
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),  # February 12, 1809
    re.compile(r"\b(?P<year>\d{4})-(?P<month>[01]?\d)-(?P<day>[0-3]?\d)\b"),  # 1809-02-12
    re.compile(rf"\b{_MONTH}\s+{_YEAR}\b"),  # February 1809
)
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])-?\d+\.\d+(?![\w])")
_ACRONYM = re.compile(r"(?<![\w.])(?:[^\W\d_]\.){2,}")  # U.S.A. -> usa
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_NON_WORD = re.compile(r"[^\w\s.-]|(?<!\d)[.-]|[.-](?!\d)")  # keep 1.5 and 1809-02-12
_SPACES = re.compile(r"\s+")


def normalize_answer(text: str) -> str:
    """Canonical form of an answer string for comparison.

    Lower-cases, strips accents, rewrites dates to ISO (``YYYY-MM-DD`` or
    ``YYYY-MM``) and numbers without thousands separators or trailing zeros,
    then removes punctuation and the articles a/an/the.

    >>> normalize_answer("12th of Feb. 1809")
    '1809-02-12'
    >>> normalize_answer("  3,500.50 km ")
    '3500.5 km'
    """
    text = unicodedata.normalize("NFKD", str(text))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    for pattern in _DATE_PATTERNS:
        text = pattern.sub(_iso_date, text)
    text = _NUMBER.sub(_plain_number, text)
    text = _ACRONYM.sub(lambda match: match.group(0).replace(".", ""), text)
    text = _NON_WORD.sub(" ", text)
    text = _ARTICLES.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def answers_match(prediction: str, golds: Iterable[str]) -> bool:
    """True when ``prediction`` equals any gold answer after normalization.

    An empty normalized prediction never matches.

    >>> answers_match("the Eiffel Tower", ["Eiffel Tower", "Tour Eiffel"])
    True
    """
    predicted = normalize_answer(prediction)
    return bool(predicted) and any(predicted == normalize_answer(gold) for gold in golds)


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token-overlap F1 between two answers, after normalization.

    >>> token_f1("Charles Darwin", "Darwin")
    0.6666666666666666
    """
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision = common / len(predicted)
    recall = common / len(expected)
    return 2 * precision * recall / (precision + recall)


def best_f1(prediction: str, golds: Iterable[str]) -> float:
    """The highest :func:`token_f1` of ``prediction`` against any gold answer."""
    return max((token_f1(prediction, gold) for gold in golds), default=0.0)


def match_score(rule: str | None, prediction: str, golds: Iterable[str]) -> float:
    """The outcome of ``prediction`` under an answer-match rule (:mod:`stillweb.corpora.tasks.answer_match`):
    ``em``, ``subem`` and ``f1`` as Search-R1 and HotpotQA score them, ``stillweb``/None :func:`answers_match`.

    >>> match_score("em", "12 Feb 1809", ["1809-02-12"]), match_score("stillweb", "12 Feb 1809", ["1809-02-12"])
    (0.0, 1.0)
    """
    golds = list(golds)
    if rule in (None, "stillweb"):
        return float(answers_match(prediction, golds))
    return {"em": em_score, "subem": subem_score, "f1": f1_score}[rule](prediction, golds)


def _iso_date(match: re.Match) -> str:
    groups = match.groupdict()
    month_text = groups["month"]
    month = int(month_text) if month_text.isdigit() else MONTH_NUMBERS[month_text]
    year = int(groups["year"])
    if not 1 <= month <= 12:
        return match.group(0)
    if groups.get("day") is None:
        return f"{year:04d}-{month:02d}"
    day = int(groups["day"])
    if not 1 <= day <= 31:
        return match.group(0)
    return f"{year:04d}-{month:02d}-{day:02d}"


def _plain_number(match: re.Match) -> str:
    number = match.group(0).replace(",", "")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return number
