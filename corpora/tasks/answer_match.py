"""Answer-match rules that public QA baselines report: Search-R1's exact match, substring
match and HotpotQA's token F1; the rule a task set is scored by is stored with it.

- ``em``: Search-R1's ``qa_em.em_check`` (and verl's ``search_r1_like_qa_em``), character
  for character: lower-case, drop ASCII punctuation (``string.punctuation``), drop the
  articles a/an/the, collapse whitespace; 1 when the prediction equals any golden answer.
- ``subem``: Search-R1's ``subem_check``: 1 when a normalized golden answer is contained in
  the normalized prediction.
- ``f1``: the token F1 of HotpotQA's official ``hotpot_evaluate_v1.py`` (same normalization;
  ``yes``/``no``/``noanswer`` must match exactly), the best over the golden answers.
- ``stillweb``: stillweb's own matcher (numbers, dates, accents; :mod:`stillweb.envs.scoring.normalize`),
  the default for generated sets; it lives with the environments, so it is not computed here.

>>> em_score("The Eiffel Tower.", ["eiffel tower"]), subem_score("It is Paris, France", ["paris"])
(1.0, 1.0)
>>> round(f1_score("Charles Darwin", ["Darwin"]), 4)
0.6667
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

from stillweb.corpora.errors import UsageError

__all__ = ["ANSWER_MATCHES", "DEFAULT_ANSWER_MATCH", "check_answer_match", "em_score", "f1_score",
           "qa_normalize", "subem_score"]

ANSWER_MATCHES = ("stillweb", "em", "subem", "f1")
DEFAULT_ANSWER_MATCH = "stillweb"
_PUNCTUATION = str.maketrans("", "", string.punctuation)  # removes exactly string.punctuation's characters
_QA_ARTICLES = re.compile(r"\b(a|an|the)\b")
_YES_NO = ("yes", "no", "noanswer")


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
    text = str(text).lower().translate(_PUNCTUATION)
    return " ".join(_QA_ARTICLES.sub(" ", text).split())


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
    predicted_tokens, expected_tokens = predicted.split(), expected.split()
    same = sum((Counter(predicted_tokens) & Counter(expected_tokens)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted_tokens), same / len(expected_tokens)
    return 2 * precision * recall / (precision + recall)
