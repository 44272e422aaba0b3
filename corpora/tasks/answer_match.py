"""Answer matching, in one place: when does an answer string mean a golden answer? The rule a
task set is scored by is stored with it (``answer_match``); each rule has its normalizer here.

- ``stillweb``: stillweb's own matcher (:func:`normalize_answer`, :func:`answers_match`), the
  default for generated sets: the SQuAD/KILT recipe (case, punctuation, articles, whitespace)
  extended with accents stripped and canonical number and date formats, so that "1,000" =
  "1000" and "12 February 1809" = "February 12, 1809" = "1809-02-12". Token F1 over it
  (:func:`best_f1`) is the softer metric the ``f1`` reward part reports.
- ``em``: Search-R1's ``qa_em.em_check`` (and verl's ``search_r1_like_qa_em``), character
  for character (:func:`qa_normalize`): lower-case, drop ASCII punctuation
  (``string.punctuation``), drop the articles a/an/the, collapse whitespace; 1 when the
  prediction equals any golden answer.
- ``subem``: Search-R1's ``subem_check``: 1 when a normalized golden answer is contained in
  the normalized prediction.
- ``f1``: the token F1 of HotpotQA's official ``hotpot_evaluate_v1.py`` (same normalization;
  ``yes``/``no``/``noanswer`` must match exactly), the best over the golden answers.

Chinese (and Japanese, Korean) answers, in the ``stillweb`` and ``em`` rules: an answer holding
a Han, Kana or Hangul character, or a full-width form, first has its full-width forms folded to
ASCII, its CJK punctuation (。，、《》「」“”…) dropped, traditional characters read as simplified
(:mod:`stillweb.corpora.search.chinese`), and the spaces beside CJK characters removed (Chinese writes
none); there are no articles to drop. ``stillweb`` also reads 1949年10月1日 as 1949-10-01, and its
token F1 counts each CJK character as a token, as CMRC 2018's evaluation does. Answers without
such characters are normalized exactly as before (Search-R1's ``em`` byte for byte).

:func:`match_score` scores a prediction under any rule. The rules are one registry,
:data:`ANSWER_MATCH_RULES` (name -> :class:`AnswerRule`: its scorer and a one-line summary): to add a rule,
add one entry there; ``ANSWER_MATCHES``, the CLI's ``--answer-match`` choices and help, ``RewardConfig`` and
the task records' check all read it.

>>> em_score("The Eiffel Tower.", ["eiffel tower"]), subem_score("It is Paris, France", ["paris"])
(1.0, 1.0)
>>> round(f1_score("Charles Darwin", ["Darwin"]), 4)
0.6667
>>> normalize_answer("The Battle of Hastings!")
'battle of hastings'
>>> answers_match("February 12, 1809", ["1809-02-12"]), answers_match("1,000", ["1000"])
(True, True)
>>> em_score("中華人民共和國。", ["中华人民共和国"]), answers_match("1949年10月1日", ["1949-10-01"])
(1.0, True)
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from stillweb.corpora.search.analyzers import CJK_CHARACTER, CJK_RANGES
from stillweb.corpora.search.chinese import fold_to_simplified
from stillweb.corpora.errors import UsageError
from stillweb.corpora.wikitext.dates import MONTH_NUMBERS

__all__ = ["ANSWER_MATCHES", "ANSWER_MATCH_RULES", "AnswerRule", "DEFAULT_ANSWER_MATCH", "answers_match", "best_f1", "check_answer_match", "em_score",
           "f1_score", "match_score", "normalize_answer", "qa_normalize", "subem_score", "token_f1"]

DEFAULT_ANSWER_MATCH = "stillweb"
_PUNCTUATION = str.maketrans("", "", string.punctuation)  # removes exactly string.punctuation's characters
_YES_NO = ("yes", "no", "noanswer")
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
# Chinese, Japanese and Korean answers are written without spaces between words (CJK_RANGES).
_CJK_OR_WIDE = re.compile(f"[{CJK_RANGES}\u3000-\u303f\uff00-\uffef]")
_SPACE_BY_CJK = re.compile(f"\\s+(?=[{CJK_RANGES}])|(?<=[{CJK_RANGES}])\\s+")
_WIDE_TO_ASCII = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}  # ！..～ -> !..~
# CJK punctuation (the CJK Symbols and Punctuation block but its letters 々〆〇), general punctuation
# Chinese text uses (dashes, curly quotes, ellipsis, middle dots) and the half-width forms' marks:
_CJK_PUNCTUATION = {code: 0x20 for code in [*range(0x3001, 0x3005), *range(0x3008, 0x3021), *range(0x3030, 0x3031),
                                            *range(0x303D, 0x3040), *range(0x2010, 0x2028), 0x00B7, 0x30FB,
                                            *range(0xFF61, 0xFF66)]}
_CJK_DATE = re.compile(r"(?P<year>\d{1,4})\s*年\s*(?P<month>[01]?\d)\s*月(?:\s*(?P<day>[0-3]?\d)\s*[日号])?")


def check_answer_match(rule: object) -> str:
    """``rule`` if it is one of :data:`ANSWER_MATCHES`; ``ValueError`` naming it and the known ones otherwise."""
    if rule not in ANSWER_MATCHES:
        raise UsageError(f"unknown answer match {rule!r}; expected one of {', '.join(ANSWER_MATCHES)}")
    return str(rule)


def qa_normalize(text: str) -> str:
    """SQuAD / Search-R1 / HotpotQA answer normalization, step for step as they write it.

    >>> qa_normalize("  The  U.S.A.! ")
    'usa'
    """
    text = str(text)
    chinese = _CJK_OR_WIDE.search(text) is not None
    if chinese:
        text = _fold_cjk(text)
    text = text.lower().translate(_PUNCTUATION)
    text = " ".join(_ARTICLES.sub(" ", text).split())
    return _SPACE_BY_CJK.sub("", text) if chinese else text


def _fold_cjk(text: str) -> str:
    """Full-width forms as ASCII, CJK punctuation as spaces, traditional characters as simplified.

    >>> _fold_cjk("（中國）：１９４９，")
    '(中国):1949,'
    """
    return fold_to_simplified(text.translate(_WIDE_TO_ASCII).translate(_CJK_PUNCTUATION))


def em_score(prediction: str, golds: Iterable[str]) -> float:
    """1.0 when ``prediction`` equals a golden answer after :func:`qa_normalize` (Search-R1's ``em_check``)."""
    predicted = qa_normalize(prediction)
    return float(any(qa_normalize(gold) == predicted for gold in golds))


def subem_score(prediction: str, golds: Iterable[str]) -> float:
    """1.0 when a normalized golden answer occurs in the normalized prediction (Search-R1's ``subem_check``)."""
    predicted = qa_normalize(prediction)
    return float(any(qa_normalize(gold) in predicted for gold in golds))


def f1_score(prediction: str, golds: Iterable[str]) -> float:
    """The best token F1 over ``golds``, as HotpotQA's official evaluation computes each."""
    return max((_hotpot_f1(prediction, gold) for gold in golds), default=0.0)


def _hotpot_f1(prediction: str, gold: str) -> float:
    predicted, expected = qa_normalize(prediction), qa_normalize(gold)
    if (predicted in _YES_NO or expected in _YES_NO) and predicted != expected:
        return 0.0
    return _overlap_f1(predicted.split(), expected.split())


def _overlap_f1(predicted: list[str], expected: list[str]) -> float:
    """The F1 of the tokens two answers share (SQuAD's and HotpotQA's arithmetic)."""
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


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
    text = str(text)
    chinese = _CJK_OR_WIDE.search(text) is not None
    if chinese:
        text = _CJK_DATE.sub(_iso_date, _fold_cjk(text))
    text = unicodedata.normalize("NFKD", text)
    # Accents go; kana voicing marks (U+3099, U+309A) are not accents: が is not か.
    text = "".join(ch for ch in text if not unicodedata.combining(ch) or ch in "\u3099\u309a").casefold()
    if chinese:
        text = unicodedata.normalize("NFC", text)  # が again, not か and a lone mark
    for pattern in _DATE_PATTERNS:
        text = pattern.sub(_iso_date, text)
    text = _NUMBER.sub(_plain_number, text)
    text = _ACRONYM.sub(lambda match: match.group(0).replace(".", ""), text)
    text = _NON_WORD.sub(" ", text)
    text = _ARTICLES.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    return _SPACE_BY_CJK.sub("", text) if chinese else text


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
    return _overlap_f1(_f1_tokens(normalize_answer(prediction)), _f1_tokens(normalize_answer(gold)))


def _f1_tokens(normalized: str) -> list[str]:
    """Words, with each CJK character a token of its own (CMRC 2018's mixed segmentation)."""
    if CJK_CHARACTER.search(normalized) is None:
        return normalized.split()
    return CJK_CHARACTER.sub(lambda match: f" {match.group(0)} ", normalized).split()


def best_f1(prediction: str, golds: Iterable[str]) -> float:
    """The highest :func:`token_f1` of ``prediction`` against any gold answer."""
    return max((token_f1(prediction, gold) for gold in golds), default=0.0)


@dataclass(frozen=True)
class AnswerRule:
    """One answer-match rule: ``score(prediction, golds) -> float`` in [0, 1] and what it is, in a line."""

    score: Callable[[str, list[str]], float]
    summary: str


def _stillweb_score(prediction: str, golds: list[str]) -> float:
    return float(answers_match(prediction, golds))


ANSWER_MATCH_RULES: dict[str, AnswerRule] = {
    "stillweb": AnswerRule(_stillweb_score, "stillweb's matcher: numbers, dates, accents, aliases"),
    "em": AnswerRule(em_score, "Search-R1's exact match"),
    "subem": AnswerRule(subem_score, "Search-R1's substring match"),
    "f1": AnswerRule(f1_score, "HotpotQA's token F1"),
}
ANSWER_MATCHES = tuple(ANSWER_MATCH_RULES)


def match_score(rule: str | None, prediction: str, golds: Iterable[str]) -> float:
    """The outcome of ``prediction`` under an answer-match rule:
    ``em``, ``subem`` and ``f1`` as Search-R1 and HotpotQA score them, ``stillweb``/None :func:`answers_match`.

    >>> match_score("em", "12 Feb 1809", ["1809-02-12"]), match_score("stillweb", "12 Feb 1809", ["1809-02-12"])
    (0.0, 1.0)
    """
    return ANSWER_MATCH_RULES[rule or DEFAULT_ANSWER_MATCH].score(prediction, list(golds))


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
