"""Real page hops (issue 49 item 4): where the data has a keyed chain through another page for an attempt's answer,
its question reads two pages or more; where it has none, a one-page question is allowed and counted on the card."""

from __future__ import annotations

from collections import Counter

import pytest

from stillweb.corpora.tasks.compose.generate import TaskGenerationError, generate_task_list
from stillweb.corpora.tasks.compose.page_hops import two_page_roots
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.store.card import page_hop_lines

from test_tasks_diversity import COUNTRIES, _params, linked_world


def _pages(task) -> int:
    return len(set(task.evidence_docs))


def test_the_answers_with_a_chain_through_another_page_are_found():
    graph = FactGraph(linked_world(linked=3))
    assert sorted(graph.label_of(e) for e in two_page_roots(graph, 5)) == sorted(COUNTRIES[:3])
    # a capital's own chains ("the capital of the country whose domain is .ru0") all read the country's page
    assert not any(graph.label_of(e).endswith("ville") for e in two_page_roots(graph, 5))
    named = FactGraph(linked_world(linked=3, city_pages=False))  # through a capital known only by its name
    assert sorted(named.label_of(e) for e in two_page_roots(named, 5)) == sorted(COUNTRIES[:3])
    assert two_page_roots(graph, 1) == frozenset()  # one hop is one fact: never two pages
    assert not two_page_roots(FactGraph(linked_world(linked=0)), 5)


def test_two_pages_where_a_chain_exists_one_page_allowed_where_none():
    world = linked_world(linked=4)
    graph = FactGraph(world)
    chained = two_page_roots(graph, 5)
    made = generate_task_list(world, _params(count=24), graph=graph)  # enough to draw look-ups where chains exist
    tasks = made.tasks
    assert tasks and made.rejections["too_few_pages"] > 0  # look-ups refused where a chain existed
    assert all(_pages(t) >= 2 for t in tasks if t.answer_doc in chained), [t.question for t in tasks]
    one_page = [t for t in tasks if _pages(t) == 1]
    assert one_page and all(t.answer_doc not in chained for t in one_page)
    assert any(graph.label_of(t.answer_doc) in COUNTRIES[4:] for t in one_page)  # an unlinked country's look-up
    hops = made.page_hops
    assert hops["two_pages"] == sum(_pages(t) >= 2 for t in tasks) > 0
    assert hops["one_page_no_chain"] == len(one_page) and hops["one_page_with_chain"] == 0
    assert hops["attempts"] == made.attempts and hops["two_pages"] <= hops["could"] < made.attempts


def test_a_world_without_links_keeps_its_one_page_questions_and_counts_them():
    made = generate_task_list(linked_world(linked=0), _params())
    assert made.tasks and made.rejections["too_few_pages"] == 0
    assert made.page_hops == Counter(attempts=made.attempts, could=0, one_page_no_chain=len(made.tasks))
    with pytest.raises(TaskGenerationError, match="too_few_pages="):  # the blanket rule refuses them all
        generate_task_list(linked_world(linked=0), _params(min_pages=2))


def test_one_page_allowed_everywhere_counts_the_look_ups_a_chain_would_have_replaced():
    made = generate_task_list(linked_world(), _params(min_pages=1, count=30))  # enough to draw chained look-ups
    hops = made.page_hops
    assert made.rejections["too_few_pages"] == 0 and hops["one_page_with_chain"] > 0
    assert hops["one_page_with_chain"] + hops["one_page_no_chain"] == sum(_pages(t) == 1 for t in made.tasks)


def test_a_synthetic_world_has_no_page_rule_and_no_card_line():
    made = generate_task_list(linked_world(real=False), _params())
    assert made.page_hops is None and made.rejections["too_few_pages"] == 0
    assert page_hop_lines(None) == []
    line, = page_hop_lines(Counter(attempts=200, could=50, two_pages=10, one_page_no_chain=4))
    assert line.startswith("- page hops: 50 of 200 attempts (25.0%) could read two pages")
    assert "10 kept questions did (5.0% of attempts, 71.4% of questions); 4 read one page where no such" in line
