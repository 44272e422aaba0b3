"""Chinese answers in the ``stillweb`` and ``em`` rules: full-width punctuation and spaces folded,
traditional and simplified forms equal, no articles; answers without CJK characters are
normalized as before (Search-R1's em byte for byte)."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.corpora.tasks.answer_match import answers_match, em_score, normalize_answer, qa_normalize, token_f1
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.scoring.rewards import RewardConfig
from stillweb.envs.wikiqa.citations import EpisodeTrace, score_episode

SAME = [
    ("北京。", "北京"), ("（北京）", "北京"), ("《红楼梦》", "红楼梦"), ("“长江”", "长江"), ("北京，中国", "北京 中国"),
    ("中華人民共和國", "中华人民共和国"), ("臺灣", "台湾"), ("北 京", "北京"), ("北京　市", "北京市"),  # ideographic space
    ("１９４９年", "1949年"), ("ＮＡＳＡ", "nasa"), ("北京 2008", "北京2008"), ("東京タワー", "东京タワー"),
]
DIFFERENT = [("北京", "南京"), ("北京市", "北京"), ("が", "か"), ("中国", "中")]


@pytest.mark.parametrize(("prediction", "gold"), SAME)
@pytest.mark.parametrize("rule", ["stillweb", "em"])
def test_chinese_forms_of_one_answer_match(rule, prediction, gold):
    task = TaskRecord.from_dict({"question": "哪里?", "answer": gold, "answer_match": rule})
    assert score_episode(task, EpisodeTrace(answer=prediction, steps=1), RewardConfig()).outcome == 1.0


@pytest.mark.parametrize(("prediction", "gold"), DIFFERENT)
def test_different_chinese_answers_do_not(prediction, gold):
    assert not answers_match(prediction, [gold]) and em_score(prediction, [gold]) == 0.0


def test_the_stillweb_rule_reads_chinese_dates_and_counts_characters_in_f1():
    assert answers_match("1949年10月1日", ["1949-10-01"]) and answers_match("1949年10月", ["October 1949"])
    assert not answers_match("1949年10月2日", ["1949-10-01"])
    assert em_score("1949年10月1日", ["1949-10-01"]) == 0.0  # em stays character for character
    assert token_f1("北京市", "北京") == pytest.approx(0.8)  # 2 of 3 characters, CMRC 2018's F1
    assert token_f1("Charles Darwin", "Darwin") == pytest.approx(2 / 3)


def _search_r1_normalize(text: str) -> str:
    """Search-R1's qa_em.normalize_answer as it is written there (lower, punctuation, articles, spaces)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FFF, blacklist_categories=("Cs",))))
def test_text_without_cjk_characters_is_normalized_as_search_r1_does(text):
    assert qa_normalize(text) == _search_r1_normalize(text)


def test_english_answers_keep_their_normal_form():
    assert normalize_answer("The Battle of Hastings!") == "battle of hastings"
    assert qa_normalize("Don’t stop") == "don’t stop"  # curly quotes are Search-R1's too, outside Chinese text
