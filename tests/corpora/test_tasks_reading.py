"""How questions read as a whole (issue 49 item 1): the counter of patterns finds the nested dashes, the
clauses between a question word and its verb, the long sentences and the stacked Chinese descriptions that
a blind reader flagged, and passes the sentence-per-entity shape SailorFog-QA writes."""

from __future__ import annotations

import pytest

from stillweb.corpora.tasks.phrase.patterns import (
    clause_before_verb,
    nested_dash,
    reading_figures,
    reading_problems,
    sentences,
    stacked_de,
)

# Flagged by the blind read of issue 49 (landed main 8d1597f).
NESTED = ("Identify the city where a person\u2014who was married to a person who was born in Fort Koponen on October 4, "
          "1866, was educated at University of Mount Blanchard, and received Looney Prize for Public service\u2014died.")
STACKED_ZH = ("请说出作为面积为700至800平方公里、成立于19世纪上半叶、该大学所在、人口为17,208并且海拔300至400米的"
              "城市所在的国家首都的城市的名称。")
# The shape asked for: each entity in a sentence of its own, then the ask.
TOLD = ("A person was born in Fort Koponen on October 4, 1866. That person's spouse was educated at University of "
        "Mount Blanchard and received the Looney Prize for Public Service. Identify the city where the spouse died.")


@pytest.mark.parametrize("question", [
    NESTED,
    "What is the name of the city where a person who was married to Paul Wood was born?",
    "Which person, who was born in Ka, died in Lunor?",
])
def test_a_clause_between_the_question_word_and_its_verb_is_found(question):
    assert clause_before_verb(question)


@pytest.mark.parametrize("question", [
    TOLD,
    "Which film was directed by a person who was born in Ka?",
    "In which country is the city where that person died?",
    "Name the city whose mayor is a person who was born in Ka.",
    "Name the award that was received by that person.",
])
def test_a_question_word_followed_by_its_verb_passes(question):
    assert not clause_before_verb(question)


def test_nested_dashes_are_found_and_told_sentences_pass():
    assert nested_dash(NESTED) and nested_dash("Name the city where a film\u2014that stars Ann Lee\u2014was made.")
    assert not nested_dash(TOLD) and not nested_dash("A city has 50,000\u201360,000 inhabitants.")  # an en dash range


def test_sentence_and_question_lengths_are_measured():
    assert sentences(TOLD) == ["A person was born in Fort Koponen on October 4, 1866.",
                               "That person's spouse was educated at University of Mount Blanchard and received the "
                               "Looney Prize for Public Service.",
                               "Identify the city where the spouse died."]
    bad = reading_figures([NESTED] * 3)
    assert bad["sentence_words_p50"] == 35 and bad["nested_dash_share"] == 1.0 and bad["clause_before_verb_share"] == 1.0
    assert [p.split()[0] for p in reading_problems(bad)] == ["sentence_words_p50", "question_words_p50",
                                                             "nested_dash_share", "clause_before_verb_share"]
    good = reading_figures([TOLD + " " + TOLD.replace("Fort Koponen", "Ka")])
    assert good["sentence_words_p50"] <= 22 and good["question_words_p50"] == 71 and good["sentences_p50"] == 6
    assert reading_problems(good) == ["question_words_p50 71.0 (limit 45..70)"]


def test_chinese_stacked_descriptions_are_found():
    assert stacked_de(STACKED_ZH)
    told = "有一座人口为17,208的城市，海拔300至400米。该城市所在国家的首都是哪座城市？"
    assert not stacked_de(told)
    figures = reading_figures([STACKED_ZH, STACKED_ZH, told])
    assert figures["language"] == "zh" and figures["stacked_de_share"] == round(2 / 3, 4)
    assert any(p.startswith("stacked_de_share") for p in reading_problems(figures))
    assert reading_figures([STACKED_ZH])["sentence_words_p50"] == 51 + 6  # Han characters, "700", "800", "19", "17,208", "300", "400"
