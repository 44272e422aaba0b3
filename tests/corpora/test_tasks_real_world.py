"""Real values that hold in the real world (issue 49 item 2): years carried, placeholders and compounds refused,
verbs on their domain, titles told apart by kind and year."""

from __future__ import annotations

from collections import Counter

from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.compose.operations import compose_query
from stillweb.corpora.tasks.compose.params import ComposeParams
from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.compose.generate import generate_task_list
from stillweb.corpora.tasks.graph import FactGraph, refusal
from stillweb.corpora.tasks.phrase.phrasing import ask_in_year, relation_phrase
from stillweb.corpora.tasks.prove.real_world import backward_fits, constant_refusal, is_compound, is_placeholder
from stillweb.corpora.tasks.phrase.verbalize_zh import render_question_zh, said_name_zh
from stillweb.corpora.tasks.task_world import MemoryWorld

COUNTRY = "infobox country"


def _countries(real: bool = True) -> MemoryWorld:
    """Four countries with capitals, populations (three dated), a GDP with its year, an anthem, a currency."""
    titles, texts, facts = {}, {}, []
    for i, (name, capital, people, year) in enumerate([("Ruritania", "Lunor", 4_000_000, "2016"),
                                                       ("Borduria", "Szohod", 7_500_000, "2015"),
                                                       ("Syldavia", "Klow", 640_000, "2016 estimate"),
                                                       ("Nordia", "Ostra", 1_200_000, None)]):
        titles[i] = name
        texts[i] = (f"{name} has its capital at {capital}. Its population was {people:,} in {year}. "
                    f"Its nominal GDP was {3 * i + 5} billion in 2014.")
        facts += [dict(subject=i, relation="capital", value=capital, value_type="entity", evidence=i, template=COUNTRY),
                  dict(subject=i, relation="population", value=str(people), value_type="number", number=float(people),
                       evidence=i, template=COUNTRY),
                  dict(subject=i, relation="gross_domestic_product", value=str((3 * i + 5) * 10**9), value_type="number",
                       number=float((3 * i + 5) * 10**9), evidence=i, template=COUNTRY),
                  dict(subject=i, relation="gross_domestic_product_as_of", value="2014", value_type="year",
                       date="2014", evidence=i, template=COUNTRY),
                  dict(subject=i, relation="anthem", value=f"Hymn of {name}", value_type="entity", evidence=i,
                       template=COUNTRY)]
        if year is not None:
            facts.append(dict(subject=i, relation="population_as_of", value=year, value_type="text", evidence=i,
                              template=COUNTRY))
    facts += [dict(subject=0, relation="currency_code", value="GBP; Pound sign£", value_type="text", evidence=0,
                   template=COUNTRY),
              dict(subject=1, relation="head_of_state", value="Unknown", value_type="entity", evidence=1,
                   template=COUNTRY)]
    return MemoryWorld(titles, texts, facts, real=real)


def _reasons(graph: FactGraph) -> dict[tuple[int, str], str | None]:
    return {(f.subject, f.relation): refusal(graph, f) for f in graph.facts}


def test_a_time_varying_value_carries_the_year_its_source_gives():
    graph = FactGraph(_countries())
    years = {(graph.facts[i].subject, graph.facts[i].relation): y for i, y in graph.years.items()}
    assert years == {(0, "population"): 2016, (1, "population"): 2015, (2, "population"): 2016,
                     (0, "gross_domestic_product"): 2014, (1, "gross_domestic_product"): 2014,
                     (2, "gross_domestic_product"): 2014, (3, "gross_domestic_product"): 2014}
    reasons = _reasons(graph)
    assert reasons[0, "population"] is None and reasons[3, "population"] == "time_varying_without_year"
    assert reasons[0, "anthem"] == "time_varying_without_year"  # no year field: never said as today's anthem
    assert relation_phrase("population", True, "4 million", person=False, year=2016) == \
        "had a population of 4 million in 2016"
    assert ask_in_year("population", 2016, "What") == "In 2016, how many people lived in {np}?"
    assert ask_in_year("capital", 2016, "What") == "In 2016, what was the capital of {np}?"


def test_a_synthetic_world_keeps_its_timeless_figures():
    reasons = _reasons(FactGraph(_countries(real=False)))
    assert reasons[3, "population"] is None and reasons[0, "anthem"] is None
    assert reasons[0, "currency_code"] == "compound_value"  # a compound is never one value, in any world


def test_two_figures_beside_one_year_are_not_dated():
    world = _countries()
    world.facts.append(dict(subject=0, relation="population", value="3900000", value_type="number", number=3.9e6,
                            evidence=0, template=COUNTRY))
    reasons = _reasons(FactGraph(world))
    assert reasons[0, "population"] == "time_varying_without_year"


def test_placeholders_and_compounds_are_refused_and_counted():
    assert is_placeholder("Unknown first wife") and is_placeholder(" N/A ") and is_placeholder("?")
    assert not is_placeholder("Nonesuch") and not is_placeholder("Kabul")
    assert is_compound("GBP; Pound sign£") and not is_compound("Pound sterling")
    graph = FactGraph(_countries())
    reasons = _reasons(graph)
    assert reasons[0, "currency_code"] == "compound_value" and reasons[1, "head_of_state"] == "placeholder"
    assert graph.refused["compound_value"] == 1 and graph.refused["placeholder"] == 1
    assert all(graph.facts[i].relation != "head_of_state" for i in graph.edges_of(1))  # never a constant or answer


def test_questions_say_the_year_and_never_a_refused_value():
    made = generate_task_list(_countries(), GenerationParams(count=6, seed=0, attempts_per_task=200,
                                                             shortcut_filter=False))  # one page: no links
    assert made.tasks
    for task in made.tasks:
        assert "GBP" not in task.question + task.answer and "Unknown" not in task.question + task.answer
        assert "Hymn" not in task.question + task.answer and "Nordia" != task.answer
        said = [e.relation for e in task.evidence]
        for relation, year in (("population", {"2016", "2015"}), ("gross_domestic_product", {"2014"})):
            if relation in said:
                assert any(f"n {y}" in task.question for y in year), task.question


def _books() -> MemoryWorld:
    titles = {0: "Deep Trouble", 1: "Night Train", 2: "United States", 3: "Spain"}
    texts = {0: "Deep Trouble is a 1992 novel published in the United States.", 1: "Night Train, a novel of Spain.",
             2: "United States.", 3: "Spain."}
    facts = [dict(subject=0, relation="country", value="United States", value_type="entity", object=2, evidence=0,
                  template="infobox book"),
             dict(subject=0, relation="publication_date", value="1992", value_type="year", number=1992.0, evidence=0,
                  template="infobox book"),
             dict(subject=1, relation="country", value="Spain", value_type="entity", object=3, evidence=1,
                  template="infobox book"),
             dict(subject=2, relation="capital", value="Washington, D.C.", value_type="entity", evidence=2,
                  template=COUNTRY)]
    return MemoryWorld(titles, texts, facts, real=True)


def test_a_verb_off_its_domain_is_refused():
    """A country is "home to" a city, never to a novel it published: that fact is said on the book only."""
    assert not backward_fits("country", frozenset({"book"})) and backward_fits("country", frozenset({"settlement"}))
    assert not backward_fits("country", None) and backward_fits("capital", frozenset({"book"}))
    graph = FactGraph(_books())
    assert {graph.facts[i].subject for i in graph.forward_only} == {0, 1}
    assert graph.refused["verb_off_domain"] == 2


def test_a_shared_title_is_said_with_its_kind_and_year_or_refused():
    graph = FactGraph(_books())
    assert graph.said_label("Deep Trouble", 0) == "the 1992 book Deep Trouble"
    assert constant_refusal(graph, "country", 0, True) is None
    assert constant_refusal(graph, "country", 1, True) == "ambiguous_title"  # no year tells it apart
    assert constant_refusal(graph, "capital", graph.facts[3].object, False) is None  # a named city: no work
    assert constant_refusal(graph, "notable_work", graph.facts[3].object, False) == "ambiguous_title"  # named work
    assert said_name_zh(graph, "Deep Trouble", 0) == "1992年的书籍《Deep Trouble》"  # Chinese questions too
    assert said_name_zh(graph, "Spain", 3) == "Spain"
    synthetic = FactGraph(MemoryWorld(_books().titles, _books().texts, _books().facts))
    assert synthetic.said_label("Deep Trouble", 0) == "Deep Trouble"  # a synthetic title names one thing
    assert said_name_zh(synthetic, "Deep Trouble", 0) == "Deep Trouble"
    assert constant_refusal(synthetic, "country", 1, True) is None


def test_a_common_noun_answer_is_cased_as_a_sentence_says_it():
    """'Right' on one page, 'right' on another: the answer is 'right' both times, the page's form an alias."""
    world = _countries()
    for i, side in enumerate(["Right", "right", "Left", "left"]):
        world.texts[i] += f" Traffic keeps to the {side}."
        world.facts.append(dict(subject=i, relation="drives_on", value=side, value_type="text", evidence=i,
                                template=COUNTRY))
    made = generate_task_list(world, GenerationParams(count=6, seed=0, attempts_per_task=300, shortcut_filter=False,
                                                      compose=ComposeParams(literal_answer_rate=1.0)),
                              graph=FactGraph(world))
    sides = [t for t in made.tasks if t.evidence[-1].relation == "drives_on"]
    assert sides and all(t.answer in ("right", "left") for t in sides), [(t.answer, t.aliases) for t in sides]
    assert any(t.aliases == ("Right",) or t.aliases == ("Left",) for t in sides)


def test_chinese_questions_say_the_year_of_a_time_varying_answer():
    """人口 has its own ask ({np}有多少人口？): the year goes before it, never dropped (2016年，这个国家有多少人口？)."""
    graph = FactGraph(_countries())
    asked = Counter()
    for index in range(300):
        composition = compose_query(graph, KeyedRng(0, "zh", index), ComposeParams(literal_answer_rate=1.0))
        query = composition.query
        if query is None or not query.literal_answer or (year := graph.year_of(query.answer_fact)) is None:
            continue
        question = render_question_zh(query, graph, KeyedRng(0, "zh-render", index))
        assert f"{year}年" in question, question
        asked["ask" if "有多少人口" in question else "attribute"] += 1
    assert asked["ask"] and asked["attribute"], asked
