"""Keys (issue 40 item 1): a question pins its answer in the world, not only in the snapshot."""

from __future__ import annotations

import pytest

from stillweb.corpora.tasks.compose.generate import generate_task_list
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.prove.keys import formalization_key_reason, functional, inverse_functional, keyed_terms
from stillweb.corpora.tasks.prove.resolve import FactTables
from stillweb.corpora.tasks.prove.verify import verify_task


def test_functionality_comes_from_the_reviewed_table_then_dbpedia():
    assert functional("birth_place") and functional("capital") and inverse_functional("capital")
    assert functional("population_total")  # DBpedia: populationTotal is an owl:FunctionalProperty
    assert not functional("genre") and not functional("nationality") and not inverse_functional("birth_place")
    assert not functional("no_such_relation") and not inverse_functional("no_such_relation")  # unknown: no


@pytest.mark.parametrize("triples, inexact, reason", [
    ([["V@A", "birth_place", "?"], ["C@Some Novel", "author", "V@A"]], [], None),  # the birthplace of B's author
    ([["?", "capital", "C@Lunor"]], [], None),  # the country whose capital is Lunor
    ([["?", "spouse", "C@Ann Lee"]], [], None),
    ([["?", "birth_date", "C@the early 1890s"]], ["the early 1890s"], "no_key"),  # a period: thousands of people
    ([["?", "nationality", "C@Ruritania"]], [], "no_key"),  # a share of a class
    ([["?", "gdp_per_capita", "C@50,000–70,000"]], ["50,000–70,000"], "no_key"),
    ([["?", "capital", "C@Lunor | Ka"]], [], "no_key"),  # a union names two
    ([["?", "birth_date", "C@1902-03-04"], ["?", "birth_place", "C@Lunor"]], [], None),  # full date with a place
    ([["?", "birth_date", "C@1902-03-04"]], [], "no_key"),
    ([["V@A", "genre", "?"], ["C@Some Novel", "author", "V@A"]], [], "answer_not_functional"),
    ([["V@A", "population", "?"], ["V@A", "capital", "C@Lunor"]], [], None),
    ([["V@A", "birth_place", "?"], ["V@A", "nationality", "C@Ruritania"]], [], "no_key"),
])
def test_key_reason(triples, inexact, reason):
    assert formalization_key_reason(triples, inexact) == reason


def test_key_flows_through_chains_only_in_the_pinning_direction():
    chain = [["?", "country", "V@A"], ["V@B", "birth_place", "V@A"], ["C@Book", "author", "V@B"]]
    assert "V@A" in keyed_terms(chain) and "?" not in keyed_terms(chain)  # a city does not pin a country's cities
    assert formalization_key_reason([["V@A", "country", "?"], *chain[1:]]) is None


def test_every_generated_task_is_keyed_and_rejections_are_counted(small_snapshot):
    result = generate_task_list(small_snapshot, GenerationParams(count=60, seed=7))
    tables = FactTables(small_snapshot)
    checks = [verify_task(task, tables) for task in result.tasks]
    assert checks and all(check.keyed for check in checks), [c.line() for c in checks if not c.keyed]
    assert not any(check.ambiguous for check in checks)
    assert result.rejections["no_key"] + result.rejections["no_chain"] > 0


def test_unkeyed_composition_is_still_possible_when_asked(small_snapshot):
    from stillweb.corpora.tasks.compose.params import ComposeParams

    result = generate_task_list(small_snapshot, GenerationParams(count=30, seed=7, compose=ComposeParams(require_key=False)))
    tables = FactTables(small_snapshot)
    assert any(not verify_task(task, tables).keyed for task in result.tasks)  # the check can fail
