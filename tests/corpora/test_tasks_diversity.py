"""Diversity (issue 49 item 3): answer caps, two questions per relation asked of one entity, near-duplicates through
another pivot removed; and the linked world the page-hop tests (item 4, test_tasks_page_hops.py) read."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from dataclasses import replace

from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.compose.diversity import (PER_ANSWER_RELATION, Diversity, answer_cap, answer_relation_key,
                                                      near_duplicate_key, trim_to_quota)
from stillweb.corpora.tasks.compose.generate import answer_group, generate_task_list
from stillweb.corpora.tasks.task_world import MemoryWorld

COUNTRIES = ["Ruritania", "Borduria", "Syldavia", "Nordia", "Ostland", "Veldia", "Carpania", "Moravel"]


def linked_world(real: bool = True, linked: int = len(COUNTRIES), city_pages: bool = True) -> MemoryWorld:
    """Countries with capitals; the first ``linked`` capitals are the birthplace of a person with a page: chains of
    two pages ("the country whose capital is the place where Ann Rurison was born"). ``city_pages`` False: the
    capitals are names without a page of their own (the chain goes through a named entity)."""
    titles, texts, facts = {}, {}, []
    for i, name in enumerate(COUNTRIES):
        country, city, person = 3 * i, 3 * i + 1, 3 * i + 2
        capital, who, gdp = f"{name[:3]}ville", f"Ann {name[:4]}son", (7 * i + 5) * 10**9
        titles[country] = name
        texts[country] = (f"{name} is a country. Its capital is {capital}. Its domain is .{name[:2].lower()}{i}. "
                          f"Its nominal GDP was US${gdp:,} in 2014.")
        if city_pages:
            titles[city], texts[city] = capital, f"{capital} is the capital of {name}."
        facts += [
            dict(subject=country, relation="capital", value=capital, value_type="entity",
                 object=city if city_pages else None, evidence=country, template="infobox country"),
            dict(subject=country, relation="top_level_domain", value=f".{name[:2].lower()}{i}", value_type="entity",
                 evidence=country, template="infobox country"),
            dict(subject=country, relation="gross_domestic_product", value=str(gdp), value_type="number",
                 number=float(gdp), evidence=country, template="infobox country"),
            dict(subject=country, relation="gross_domestic_product_as_of", value="2014", value_type="year",
                 date="2014", evidence=country, template="infobox country"),
        ]
        if i < linked:
            titles[person], texts[person] = who, f"{who} was born in {capital} on March {i + 1}, 19{50 + i}."
            facts += [
                dict(subject=person, relation="birth_place", value=capital, value_type="entity",
                     object=city if city_pages else None, evidence=person, template="infobox person"),
                dict(subject=person, relation="birth_date", value=f"19{50 + i}-03-{i + 1:02d}", value_type="date",
                     date=f"19{50 + i}-03-{i + 1:02d}", evidence=person, template="infobox person"),
            ]
    return MemoryWorld(titles, texts, facts, real=real)


def _params(**options) -> GenerationParams:
    return GenerationParams(count=options.pop("count", 12), seed=options.pop("seed", 0), attempts_per_task=400,
                            shortcut_filter=False, **options)


def test_answer_cap_is_max_two_or_a_tenth_and_never_over_max_per_answer():
    assert [answer_cap(n, 3) for n in (1, 10, 25, 400)] == [2, 2, 2, 3]
    assert answer_cap(400, 50) == 40 and answer_cap(5, 1) == 1


def test_diversity_caps_hold_on_a_set(small_snapshot):
    made = generate_task_list(small_snapshot, GenerationParams(count=40, seed=0))
    tasks = made.tasks
    per_answer = Counter(answer_group(t) for t in tasks)
    assert max(per_answer.values()) <= answer_cap(len(tasks), 3)
    per_relation = Counter(answer_relation_key(t) for t in tasks)
    assert max(per_relation.values()) <= PER_ANSWER_RELATION
    near = Counter(near_duplicate_key(t, answer_group(t)) for t in tasks)
    assert max(near.values()) == 1
    small = generate_task_list(small_snapshot, GenerationParams(count=10, seed=0))
    assert max(Counter(answer_group(t) for t in small.tasks).values()) <= 2  # max(2, 10/10)


def test_the_same_chain_through_another_pivot_is_a_near_duplicate():
    """'the GDP of the country whose domain is .ru0' and '... whose capital is Rurville': one kept."""
    made = generate_task_list(linked_world(real=False), _params(count=40, seed=1))
    first = next(t for t in made.tasks if t.shape.startswith("value"))
    other = replace(first, formalization=tuple(tuple("C@Elsewhere" if term.startswith("C@") else term for term in t)
                                               for t in first.formalization), canonical_hash="x")
    assert other.formalization != first.formalization  # another pivot, the same answer and pages
    diversity = Diversity(100, 3, answer_group)
    assert diversity.reason(first) is None
    diversity.add(first)
    assert diversity.reason(other) == "near_duplicate"
    assert diversity.reason(replace(other, evidence_docs=(*other.evidence_docs, 99))) is None  # another page read
    diversity.add(replace(other, evidence_docs=(*other.evidence_docs, 99)))
    assert diversity.reason(replace(other, evidence_docs=(98,))) == "answer_relation_quota"  # a third GDP ask


def test_a_short_set_is_trimmed_to_its_own_cap():
    made = generate_task_list(linked_world(real=False), _params(count=40, seed=2, max_per_answer=40))
    tasks = [replace(made.tasks[0], task_id=f"t{i}") for i in range(5)] + made.tasks[1:4]
    kept, dropped = trim_to_quota(tasks, 40, answer_group)
    assert dropped == 3 and [t.task_id for t in kept[:2]] == ["t0", "t1"]
    assert max(Counter(answer_group(t) for t in kept).values()) <= answer_cap(len(kept), 40)


_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from test_tasks_diversity import _params, linked_world
from stillweb.corpora.tasks.compose.generate import generate_task_list
made = generate_task_list(linked_world(linked=5), _params())
print(json.dumps([[t.to_dict() for t in made.tasks], made.page_hops], sort_keys=True, default=str))
"""


def test_real_sets_are_identical_in_two_processes():
    here = str(__import__("pathlib").Path(__file__).parent)
    runs = [subprocess.run([sys.executable, "-c", _SCRIPT, here], check=True, capture_output=True, text=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in (1, 2)]
    assert runs[0] == runs[1] and json.loads(runs[0])
