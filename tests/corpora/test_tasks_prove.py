"""Uniqueness proof and obfuscation on a hand-made in-memory world, checked against brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.compose.operations import compose_query
from stillweb.corpora.tasks.compose.params import ComposeParams
from stillweb.corpora.tasks.graph import FactGraph, fact_year, normalize_text
from stillweb.corpora.tasks.phrase.obfuscate import number_range, year_period
from stillweb.corpora.tasks.prove.uniqueness import prove
from stillweb.corpora.tasks.query import Condition, Constant, Node, Query
from stillweb.corpora.tasks.task_world import MemoryWorld


def _world(people: int = 24) -> MemoryWorld:
    """Cities 0..3, universities 4..5, people 6.., films after them."""
    titles, texts, facts = {}, {}, []
    for c in range(4):
        titles[c] = f"City{c}"
        texts[c] = f"City{c} has a population of {(c + 1) * 10000:,}. Founded in {1800 + 17 * c}."
        facts += [dict(subject=c, relation="population", value=f"{(c + 1) * 10000:,}", value_type="number", number=float((c + 1) * 10000), evidence=c, template="infobox settlement"),
                  dict(subject=c, relation="founded", value=str(1800 + 17 * c), value_type="year", number=float(1800 + 17 * c), date=str(1800 + 17 * c), evidence=c, template="infobox settlement")]
    for u in (4, 5):
        titles[u] = f"University{u}"
        texts[u] = f"University{u} is in City{u - 4}. Established 18{u}0."
        facts += [dict(subject=u, relation="located_in", value=f"City{u - 4}", value_type="entity", object=u - 4, evidence=u, template="infobox university"),
                  dict(subject=u, relation="founded", value=f"18{u}0", value_type="year", number=float(f"18{u}0"), date=f"18{u}0", evidence=u, template="infobox university")]
    for i in range(people):
        p = 6 + i
        city, uni, year = i % 4, 4 + (i // 4) % 2, 1900 + 3 * i
        titles[p] = f"Person{i}"
        texts[p] = f"Person{i} was born on {year}-05-0{1 + i % 9} in City{city}. Alumnus of University{uni}."
        facts += [dict(subject=p, relation="birth_place", value=f"City{city}", value_type="entity", object=city, evidence=p, template="infobox person"),
                  dict(subject=p, relation="alma_mater", value=f"University{uni}", value_type="entity", object=uni, evidence=p, template="infobox person"),
                  dict(subject=p, relation="birth_date", value=f"{year}-05-0{1 + i % 9}", value_type="date", date=f"{year}-05-0{1 + i % 9}", evidence=p, template="infobox person")]
        f = 6 + people + i
        titles[f] = f"Film{i}"
        texts[f] = f"Film{i} is directed by Person{i}."
        facts.append(dict(subject=f, relation="director", value=f"Person{i}", value_type="entity", object=p, evidence=f, template="infobox film"))
    return MemoryWorld(titles, texts, facts, redirects={6: ["P0"]})


def _brute_force(query: Query, graph: FactGraph) -> set:
    """Answers by scanning every fact for every node (no indexes): an independent evaluator."""
    entities = {f.subject for f in graph.facts} | {f.object for f in graph.facts if f.is_edge}

    def holds(const: Constant, e: int) -> bool:
        cond = const.condition
        for f in graph.facts:
            if f.relation != const.relation:
                continue
            if cond.kind == "entity":
                if (f.subject == e and f.object in cond.entities) if const.node_is_subject else (f.object == e and f.subject in cond.entities):
                    return True
            elif f.subject == e and not f.is_edge:
                year = fact_year(f)
                if cond.kind == "year_range" and year is not None and cond.low <= year <= cond.high:
                    return True
                if cond.kind == "number_range" and f.value_type == "number" and cond.low <= f.number <= cond.high:
                    return True
                if cond.kind == "text" and normalize_text(f.value) in cond.keys:
                    return True
                if cond.kind == "date" and "date:" + str(f.date) in cond.keys:
                    return True
        return False

    def candidates(node: Node) -> set:
        out = {e for e in entities if all(holds(c, e) for c in node.constants)}
        for name in node.children:
            child = query.node(name)
            below = candidates(child)
            out = {e for e in out if any(
                f.relation == child.relation and ((f.subject, f.object) if child.parent_is_subject else (f.object, f.subject)) == (e, c)
                for f in graph.facts if f.is_edge for c in below)}
        return out

    root = candidates(query.root)
    if query.literal_answer:
        return {normalize_text(f.value) for f in graph.facts if f.subject in root and f.relation == query.answer_relation}
    return root


GRAPH = FactGraph(_world())


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_proof_agrees_with_brute_force(index):
    rng = KeyedRng(3, "prove-test", index)
    composition = compose_query(GRAPH, rng, ComposeParams(min_hops=2, max_hops=3, union_rate=0.5))
    if composition.query is None:
        assert composition.reason in {"not_unique", "no_chain", "no_constant", "no_fork", "no_literal_answer"}
        return
    assert set(prove(composition.query, GRAPH).answers) == _brute_force(composition.query, GRAPH) == {composition.proof.expected}


def test_proof_counts_ambiguity():
    # Films whose director was born in City0: several -> not unique.
    director = Node("V@A", 6, parent="?", relation="director", parent_is_subject=True, depth=1,
                    constants=[Constant("birth_place", True, Condition("entity", ("City0",), entities=(0,)), 0)])
    query = Query(nodes=[Node("?", 30, children=["V@A"]), director])
    proof = prove(query, GRAPH)
    assert not proof.unique and len(proof.answers) == 6
    assert len(proof.answers) == len(_brute_force(query, GRAPH))


@given(st.integers(1, 2100), st.integers(0, 50))
def test_periods_contain_the_year(year, key):
    low, high, phrase = year_period(year, KeyedRng(0, "p", key))
    assert low <= year <= high and phrase


@given(st.floats(0.01, 1e10, allow_nan=False), st.integers(0, 50))
def test_ranges_contain_the_number(number, key):
    low, high, phrase = number_range(number, KeyedRng(0, "n", key))
    assert low <= number <= high and low < high and "–" in phrase
    assert low == 0 or high <= 2 * low  # a range at most 2x wide (issue 21: "100-600 minutes" is no clue)


def test_evidence_check_rejects_unstated_facts():
    world = _world(4)
    world.texts[6] = "Nothing here."  # Person0's page no longer states its facts
    graph = FactGraph(world)
    birth = next(f.index for f in graph.facts if f.subject == 6 and f.relation == "birth_date")
    assert graph.stated_in(birth) is None
    place = next(f.index for f in graph.facts if f.subject == 7 and f.relation == "birth_place")
    assert graph.stated_in(place) == 7


def test_compose_params_reject_impossible_values():
    with pytest.raises(ValueError, match="min_hops"):
        ComposeParams(min_hops=5, max_hops=3)
    with pytest.raises(ValueError, match="level"):
        ComposeParams(level=4)


@pytest.mark.parametrize("ratio", [0, 1_000_000])
def test_testing_one_by_one_and_listing_agree(ratio, monkeypatch):
    """The semi-join either tests candidates one by one or lists and intersects: same answers."""
    from stillweb.corpora.tasks.prove import uniqueness as prove_module

    monkeypatch.setattr(prove_module, "_LIST_RATIO", ratio)
    for index in range(60):
        composition = compose_query(GRAPH, KeyedRng(5, "semi-join", index), ComposeParams(min_hops=2, max_hops=3, union_rate=0.5))
        if composition.query is not None:
            assert set(prove(composition.query, GRAPH).answers) == _brute_force(composition.query, GRAPH)
