"""Questions a person would write: phrasing data, value words, answers, the malformed detector and stats."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stillweb.cli.main import main as cli_main
from stillweb.corpora.tasks.compose.generate import generate_task_list
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.phrase.phrasing import (
    entity_label,
    known_relations,
    merge_dated,
    natural_case,
    relation_phrase,
    value_text,
    with_article,
)
from stillweb.corpora.tasks.store.quality import malformed_reasons, task_set_stats
from stillweb.corpora.wikitext.mapping import infobox_mapping
from stillweb.corpora.wikitext.ontology import relation_types


def test_every_mapped_relation_has_phrasing_in_both_directions():
    mapping = infobox_mapping()
    assert set(mapping.relations) <= known_relations()
    for relation, rule in mapping.relations.items():
        forward = relation_phrase(relation, True, "X", person=False)
        assert "X" in forward and "_" not in forward and "{" not in forward
        if rule.value_type == "entity":
            backward = relation_phrase(relation, False, "X", person=True)
            assert "X" in backward and "{" not in backward, relation


def test_values_read_naturally():
    assert value_text("birth_date", "1992-03-04", "date", "1992-03-04", None) == "on March 4, 1992"
    assert value_text("founded", "1850", "year", "1850", None) == "in 1850"
    assert value_text("population", "2392976", "number", None, 2392976.0) == "2.393 million"  # magnitude words (issue 40)
    assert value_text("population", "392976", "number", None, 392976.0) == "392,976"
    assert value_text("genre", "Short stories", "text", None, None) == "short stories"
    assert value_text("currency", "Grisistani crown", "text", None, None) == "Grisistani crown"
    assert natural_case("NATO member") == "NATO member"
    assert relation_phrase("occupation", True, "architect", person=True) == "worked as an architect"
    assert relation_phrase("government_type", True, "that form of government", person=False) == "is governed as that form of government"
    assert with_article("university") == "a university" and with_article("album") == "an album"
    assert entity_label("Lonely Windows in Brousoo (album)") == "Lonely Windows in Brousoo"
    assert merge_dated(["was born in Lunor", "was born in the 1880s"]) == ["was born in Lunor in the 1880s"]
    assert merge_dated(["died in Ka", "died on March 4, 1992"]) == ["died in Ka on March 4, 1992"]


def _task(**fields) -> dict:
    task = {"question": "Which film directed by a person born in Lunor?", "answer": "Dawn", "aliases": [],
            "formalization": [["?", "director", "V@A"], ["V@A", "birth_place", "C@Lunor"]],
            "evidence": [{"value": "Lunor"}]}
    task.update(fields)
    return task


@pytest.mark.parametrize(
    ("fields", "reasons"),
    [
        ({}, []),
        ({"question": "Which battle whose commander2 is John?"}, ["raw_key"]),
        ({"formalization": [["?", "casualties1", "C@x"]]}, ["unphrased_relation"]),
        ({"evidence": [{"value": "France<ref>x</ref>"}]}, ["markup"]),
        ({"question": "Which film (directed by a person?"}, ["unbalanced_brackets"]),
        ({"evidence": [{"value": " ".join(["word"] * 13)}]}, ["long_value"]),
        ({"question": "Which film is Dawn?"}, ["answer_in_question"]),
        ({"aliases": ["Lunor"]}, ["answer_in_question"]),
        ({"answer": "Dawn (film)"}, ["qualified_answer"]),
    ],
)
def test_malformed_detector(fields, reasons):
    assert malformed_reasons(_task(**fields)) == reasons


@pytest.fixture(scope="module")
def tasks(small_snapshot):
    return generate_task_list(small_snapshot, GenerationParams(count=60, seed=3)).tasks


def test_generated_questions_are_well_formed_and_answers_plain(tasks, small_snapshot):
    stats = task_set_stats(tasks)
    assert stats["malformed"] == 0, [(t["question"], malformed_reasons(t)) for t in tasks if malformed_reasons(t)]
    assert 25 <= stats["words_p50"] <= 70 and stats["words_p95"] <= 116  # keyed (issue 40): fewer deep chains here
    entities = [t for t in tasks if t.shape.startswith("entity")]
    assert entities
    for task in entities:
        title = small_world_title(small_snapshot, task.answer_doc)
        assert task.answer == entity_label(title)
        assert title == task.answer or title in task.aliases


def small_world_title(snapshot, doc_id: int) -> str:
    from stillweb.corpora.snapshot.reading import Snapshot

    return Snapshot.open(snapshot).title_of(doc_id)


def test_literal_date_answers_are_humanised(tasks):
    values = [t for t in tasks if t.shape.startswith("value")]
    assert values
    for task in values:
        if any(a[:4].isdigit() and a[4:5] == "-" for a in task.aliases):  # an ISO date is only an alias
            assert not task.answer[:4].isdigit()


def test_tasks_stats_cli_is_deterministic_across_processes(small_snapshot, capsys):
    assert cli_main(["tasks", "generate", str(small_snapshot), "--name", "stats", "--count", "8", "--seed", "2",
                     "--verify", "0", "--no-progress"]) == 0
    capsys.readouterr()
    script = "from stillweb.cli.main import main; import sys; main(['tasks', 'stats', sys.argv[1], 'stats', '--json'])"
    outputs = [subprocess.run([sys.executable, "-c", script, str(small_snapshot)], capture_output=True, check=True).stdout
               for _ in range(2)]
    assert outputs[0] == outputs[1]
    stats = json.loads(outputs[0])
    assert stats["tasks"] == 8 and stats["malformed_rate"] == 0.0 and set(stats) >= {"words_p50", "answers_top5"}
    card = (small_snapshot / "tasks" / "stats" / "card.md").read_text()
    assert "malformed: 0 of 8" in card and "answers given by n tasks (n: answers): 1: 8" in card
    assert cli_main(["tasks", "stats", str(small_snapshot), "stats"]) == 0
    assert "question words: p50" in capsys.readouterr().out
    assert cli_main(["tasks", "stats", str(small_snapshot), "missing"]) != 0
    assert "no task set 'missing'" in capsys.readouterr().err


def test_graph_stats_reports_mapped_share_and_relations(small_snapshot, capsys):
    assert cli_main(["graph", "stats", str(small_snapshot), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["mapped_share"] == 1.0 and stats["unmapped_fields"] == 0  # the synthetic world is fully mapped
    relations = {row["relation"]: row for row in stats["relations"]}
    assert relations["birth_place"]["entity_facts"] == relations["birth_place"]["facts"] > 0
    assert cli_main(["graph", "stats", str(small_snapshot)]) == 0
    assert "mapped share 100.0%" in capsys.readouterr().out


@pytest.mark.slow  # builds the real-Wikipedia snapshot (~20 s on a loaded 2-core machine)
@pytest.mark.shared_data
def test_real_sample_graph_stats_and_questions(wiki_snapshot, capsys):
    assert cli_main(["graph", "stats", str(wiki_snapshot), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert 0.1 < stats["mapped_share"] < 1.0 and stats["top_unmapped"]
    assert all("|" in key for key, _ in stats["top_unmapped"])
    assert {row["relation"] for row in stats["relations"]} <= set(relation_types())  # typed relations, no raw keys
    result = generate_task_list(wiki_snapshot, GenerationParams(count=20, seed=0, attempts_per_task=100))
    figures = task_set_stats(result.tasks)
    assert figures["malformed"] == 0, [malformed_reasons(t) for t in result.tasks]


@pytest.mark.parametrize(("question", "found"), [
    ("What person born in a city with a population of 4,000,000 and who died in Ka?", ["verbless_frame"]),
    ("Which film starring Jane Roe?", ["verbless_frame"]),
    ("Take a person born in Ka. Name the person who was married to that person.", ["that_same_noun"]),
    ("Name the album that was recorded by a musician who worked as a musician.", ["restated_class"]),
    ("Which person was born in Ka and died in Lunor?", []),
    ("There is a university that was founded in 1852. What is the name of the person who was educated at that university?", []),
])
def test_pattern_counter(question, found):
    from stillweb.corpora.tasks.phrase.patterns import question_patterns

    assert question_patterns(question) == found


def test_generated_questions_have_finite_verbs_and_no_repeated_nouns(small_snapshot):
    """Issue 35: 108 of 200 synthetic questions ended in a verbless frame, 49 said "that <noun>" of a noun
    two variables share, 45 restated a class; now none does. Issue 49: 177 of 300 nested a dashed clause
    between a question word and its verb; now none does, and each entity has a sentence of its own (median
    length on a 5k world: test_questions_read_as_a_person_writes_them; this 300-article world has fewer deep
    chains, so its questions are shorter)."""
    from stillweb.corpora.tasks.compose.params import ComposeParams
    from stillweb.corpora.tasks.phrase.patterns import PATTERNS

    made = generate_task_list(small_snapshot, GenerationParams(count=150, seed=11, compose=ComposeParams(max_hops=5)))
    stats = task_set_stats(made.tasks)
    assert stats["patterns"] == {name: 0 for name in PATTERNS}, stats["patterns"]
    assert 25 <= stats["words_p50"] <= 70, stats["words_p50"]
    assert stats["malformed"] == 0
    reading = stats["reading"]
    assert reading["sentence_words_p50"] <= 22 and reading["sentences_p50"] >= 3, reading
    assert "\u2014" not in " ".join(t.question for t in made.tasks)  # no dash at all


@pytest.mark.slow  # builds a 5,000-article world (~30 s)
def test_questions_read_as_a_person_writes_them(tmp_path):
    """Issue 49 item 1 on a 5k world (seed 3; development used other seeds): every figure of READING_LIMITS
    holds (sentence median <= 22 words, question median 45-70, no nested dash, no clause before a verb) and
    the median question has 3 hops or more."""
    from stillweb.corpora.build.from_source import build_synthetic
    from stillweb.corpora.tasks.phrase.patterns import reading_problems

    world = build_synthetic(5000, 3, tmp_path / "syn5k", workers=1, progress=False).path
    made = generate_task_list(world, GenerationParams(count=300, seed=3))
    stats = task_set_stats(made.tasks)
    assert reading_problems(stats["reading"]) == [], stats["reading"]
    hops = sorted(t.hops for t in made.tasks)
    assert hops[len(hops) // 2] >= 3, stats["hops"]


def test_questions_are_true_of_their_types():
    """A person's citizenship misread as a city page: composition never joins a city by `citizenship`,
    so "a city that granted citizenship to X" cannot be written; the organisation's city still can."""
    from stillweb.corpora.tasks.task_world import MemoryWorld

    titles, texts, facts = {}, {}, []
    for i in range(6):
        person, city, org = 3 * i, 3 * i + 1, 3 * i + 2
        titles[person], titles[city], titles[org] = f"Person{i}", f"City{i}", f"Org{i}"
        texts[person] = f"Born {1900 + i}. Citizen of City{i}."
        texts[city] = f"Population {1000 * (i + 1)}."
        texts[org] = f"Based in City{i}."
        facts += [dict(subject=person, relation="citizenship", value=f"City{i}", value_type="entity", object=city,
                       template="infobox person"),
                  dict(subject=person, relation="birth_date", value=f"{1900 + i}", value_type="year", number=1900.0 + i,
                       template="infobox person"),
                  dict(subject=city, relation="population", value=str(1000 * (i + 1)), value_type="number",
                       number=1000.0 * (i + 1), template="infobox settlement"),
                  dict(subject=org, relation="headquarters", value=f"City{i}", value_type="entity", object=city,
                       template="infobox company")]
    world = MemoryWorld(titles, texts, [{**f, "evidence": f["subject"]} for f in facts])
    made = generate_task_list(world, GenerationParams(count=5, seed=0, shortcut_filter=False), )
    assert made.tasks
    for task in made.tasks:
        assert all(relation != "citizenship" for _, relation, _ in task.formalization), task.question
        assert "granted citizenship" not in task.question


def test_qualifier_fields_are_never_said_and_camel_case_labels_read_as_words():
    """The blind read (BENCHMARKS.md, issue 35) found 'whose gini coefficient as of is in 2008' and
    'whose notableIdea is Will': qualifiers of another field are not composed, labels read as words."""
    from stillweb.corpora.tasks.phrase.phrasing import is_qualifier, relation_words

    assert is_qualifier("population_as_of") and is_qualifier("ethnic_groups_in_year")
    assert is_qualifier("purchasing_power_parity_year")  # purchasing_power_parity is a relation
    assert not is_qualifier("birth_year") and not is_qualifier("founded")
    assert relation_words("notable_student").forward == "whose notable student is {x}"
