"""Tests of the synthetic world: determinism, coverage of kinds and relations,
collisions, link integrity, infobox facts that parse back to the ground truth,
consistency of the graph, the XML dump and shard rendering."""

from __future__ import annotations

import bz2
import hashlib
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

import mwparserfromhell
import mwxml
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stillweb.corpora.snapshot.records import VALUE_TYPES, RawPage
from stillweb.corpora.synthetic import KINDS, generate_world, iter_true_facts, world_pages, write_xml_dump
from stillweb.corpora.synthetic.wikitext_pages import render_unit
from stillweb.corpora.synthetic.facts import canonical_number

ARTICLES = 2000
SEED = 7
LINK = re.compile(r"\[\[([^\[\]|#]+)(?:\|[^\[\]]*)?\]\]")

HASH_SCRIPT = """
import hashlib, sys
from stillweb.corpora.synthetic import generate_world, iter_true_facts, world_pages
world = generate_world({articles}, {seed})
digest = hashlib.sha256()
for page in world_pages(world):
    digest.update(repr((page.title, page.redirect, page.url, page.text)).encode())
for fact in iter_true_facts(world):
    digest.update(repr(fact).encode())
sys.stdout.write(digest.hexdigest())
"""


def _world_hash_in_subprocess(articles: int, seed: int, hash_seed: str) -> str:
    """Hash of a world built in a fresh interpreter (a different PYTHONHASHSEED
    catches any set or dict order reaching the output)."""
    code = HASH_SCRIPT.format(articles=articles, seed=seed)
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture(scope="module")
def world():
    return generate_world(ARTICLES, SEED)


@pytest.fixture(scope="module")
def pages(world) -> list[RawPage]:
    return list(world_pages(world))


@pytest.fixture(scope="module")
def facts(world):
    return list(iter_true_facts(world))


@pytest.fixture(scope="module")
def by_title(pages) -> dict[str, RawPage]:
    return {page.title: page for page in pages}


@pytest.mark.slow
def test_same_seed_same_world_across_processes():
    first = _world_hash_in_subprocess(ARTICLES, SEED, "1")
    assert first == _world_hash_in_subprocess(ARTICLES, SEED, "2")
    assert first != _world_hash_in_subprocess(ARTICLES, SEED + 1, "1")


def test_article_count_and_size(world, pages):
    articles = [p for p in pages if p.redirect is None]
    assert len(articles) == len(world)
    assert abs(len(articles) - ARTICLES) <= 0.05 * ARTICLES
    average = sum(len(p.text) for p in articles) / len(articles)
    assert 1800 <= average <= 3500, average


def test_titles_unique_and_pages_well_formed(pages):
    titles = [p.title for p in pages]
    assert len(titles) == len(set(titles))
    for page in pages:
        assert page.is_wikitext and page.title and page.text and page.url.startswith("https://")
        assert "(" not in page.title or page.title.endswith(")")


def test_kinds_relations_and_value_types(world, facts):
    assert len(KINDS) >= 8
    assert all(world.counts[kind] > 0 for kind in KINDS)
    relations = {f.relation for f in facts}
    assert len(relations) >= 25, sorted(relations)
    assert {"birth_place", "birth_date", "death_date", "alma_mater", "founded_by", "headquarters", "director",
            "author", "performer", "awards", "capital", "population", "area_km2", "employees", "country",
            "located_in", "spouse", "occupation", "publisher", "release_date", "genre", "instrument",
            "record_label"} <= relations
    assert {f.value_type for f in facts} == set(VALUE_TYPES)
    subjects = [f.subject_title for f in facts]  # entity by entity: each subject's facts are consecutive
    assert len(dict.fromkeys(subjects)) == sum(1 for a, b in zip([None, *subjects], subjects) if a != b)


def test_collisions_have_qualified_titles_and_disambiguation_pages(world, by_title):
    assert len(world.disambiguations) >= 10
    kinds_with_collisions = set()
    for name, members in world.disambiguations:
        page = by_title[name]
        assert "{{disambiguation}}" in page.text
        for gid in members:
            title = world.titles[gid]
            assert title.startswith(f"{name} (") and title in by_title
            assert f"[[{title}]]" in page.text
            kinds_with_collisions.add(world.locate(gid)[0])
    assert {"person", "city"} <= kinds_with_collisions
    assert kinds_with_collisions & {"film", "album"}
    assert any(f"[[{world.titles[gid]}|{name}]]" in p.text for name, members in world.disambiguations
               for gid in members for p in list(by_title.values())[:400])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(articles=st.integers(min_value=1, max_value=400), seed=st.integers(min_value=-(2**63), max_value=2**63))
def test_any_size_and_seed_gives_a_closed_world(articles, seed):
    """For any size and seed: unique titles, redirects to articles, no red links."""
    small = generate_world(articles, seed)
    pages = list(world_pages(small))
    titles = {p.title: p for p in pages}
    assert len(titles) == len(pages)
    for page in pages:
        if page.redirect is not None:
            assert titles[page.redirect].redirect is None
        for target in LINK.findall(page.text):
            assert target.startswith("Category:") or target in titles, (page.title, target)


def test_redirects_point_to_articles(pages, by_title):
    redirects = [p for p in pages if p.redirect is not None]
    assert len(redirects) >= 100
    for page in redirects:
        assert page.text == f"#REDIRECT [[{page.redirect}]]"
        assert by_title[page.redirect].redirect is None


def test_every_link_target_exists(pages, by_title):
    """There are no intentional red links: every [[link]] names a page."""
    targets = Counter()
    for page in pages:
        for target in LINK.findall(page.text):
            if not target.startswith("Category:"):
                targets[target] += 1
    missing = [t for t in targets if t not in by_title]
    assert not missing, missing[:10]
    assert sum(targets.values()) > 5 * len(by_title)


def test_list_pages(world, by_title):
    titles = [lp.title for lp in world.list_pages]
    assert any(t.startswith("List of films directed by ") for t in titles)
    assert any(t.startswith("List of cities in ") for t in titles)
    assert any(t.startswith("List of universities in ") for t in titles)
    for list_page in world.list_pages:
        text = by_title[list_page.title].text
        assert all(world.titles[gid] in text for gid in list_page.items)


def _infobox_facts(title: str, text: str) -> set[tuple]:
    """Facts of the infobox, read the way Wikipedia infoboxes are read."""
    code = mwparserfromhell.parse(text)
    infobox = next(t for t in code.filter_templates(recursive=False) if str(t.name).startswith("Infobox"))
    found = set()
    for param in infobox.params:
        relation = str(param.name).strip()
        if relation == "name":
            continue
        value = param.value
        nested = value.filter_templates(recursive=False)
        if nested and str(nested[0].name).strip() == "plainlist":
            items = [mwparserfromhell.parse(line[1:].strip()) for line in str(nested[0].get(1).value).strip().splitlines()]
        else:
            items = [value]
        for item in items:
            links = item.filter_wikilinks()
            templates = item.filter_templates()
            plain = item.strip_code().strip()
            if links:
                target = str(links[0].title)
                found.add((title, relation, target, "entity", target))
            elif templates:
                year, month, day = (int(str(templates[0].get(i).value)) for i in (1, 2, 3))
                found.add((title, relation, f"{year:04d}-{month:02d}-{day:02d}", "date", None))
            elif re.fullmatch(r"\d{4}", plain) and relation in ("founded", "first_awarded"):
                found.add((title, relation, plain, "year", None))
            elif re.fullmatch(r"[\d,]+(\.\d+)?", plain):
                number = float(plain.replace(",", ""))
                found.add((title, relation, canonical_number(number), "number", None))
            else:
                found.add((title, relation, plain, "text", None))
    return found


@pytest.mark.slow
def test_infobox_fields_parse_back_to_true_facts(world, by_title, facts):
    subjects = {world.titles[gid] for gid in range(0, world.entity_count, 3)}
    expected = {(f.subject_title, f.relation, f.value, f.value_type, f.object_title) for f in facts if f.subject_title in subjects}
    parsed = set()
    for title in subjects:
        parsed |= _infobox_facts(title, by_title[title].text)
    assert parsed == expected


def test_ingestion_path_recovers_every_true_fact(world, by_title, facts):
    """The project's wikitext parser extracts exactly the ground truth (recall and
    precision 1 on a third of the articles) and recognises page kinds."""
    from stillweb.corpora import wikitext  # this project's own parser: an import error is a failure, not a skip

    subjects = [world.titles[gid] for gid in range(0, world.entity_count, 3)]
    expected = {(f.subject_title, f.relation, f.value, f.value_type, f.object_title) for f in facts if f.subject_title in set(subjects)}
    extracted = set()
    for title in subjects:
        for fact in wikitext.parse_page(title, by_title[title].text).facts:
            value = fact.object_title if fact.value_type == "entity" else fact.value
            extracted.add((title, fact.relation, value, fact.value_type, fact.object_title))
    assert extracted == expected
    assert wikitext.parse_page(*_title_text(by_title, world.disambiguations[0][0])).kind == "disambiguation"
    assert wikitext.parse_page(*_title_text(by_title, world.list_pages[0].title)).kind == "list"


def _title_text(by_title, title: str) -> tuple[str, str]:
    return title, by_title[title].text


def test_prose_restates_facts(world, by_title, facts):
    """Entity facts appear in the article body too, not only in the infobox."""
    from stillweb.corpora.synthetic.phrases import SECTION_PLANS

    told = {kind: {r for _, relations, _ in plan for r in relations} for kind, plan in SECTION_PLANS.items()}
    kind_of = {world.titles[gid]: world.locate(gid)[0] for gid in range(world.entity_count)}
    assert all(f.relation in told[kind_of[f.subject_title]] for f in facts)
    for gid in range(0, world.entity_count, 97):
        text = by_title[world.titles[gid]].text
        body = text[text.index("\n}}\n") :]
        assert world.names[gid] in body or world.names[gid].rsplit(" ", 1)[-1] in body
        assert body.count("[[") >= 3 and "== " in body and "[[Category:" in body


def test_graph_is_consistent(world, facts):
    by_subject = defaultdict(lambda: defaultdict(list))
    for f in facts:
        by_subject[f.subject_title][f.relation].append(f.value)
    for gid in range(world.entity_count):
        kind, _ = world.locate(gid)
        fs = by_subject[world.titles[gid]]
        if kind == "film":
            director = fs["director"][0]
            assert by_subject[director]["occupation"] == ["Film director"]
            assert by_subject[director]["birth_date"][0][:4] < fs["release_date"][0][:4]
        if kind == "country":
            assert by_subject[fs["capital"][0]]["country"] == [world.titles[gid]]
        if kind == "city" and fs["mayor"]:
            assert by_subject[fs["mayor"][0]]["nationality"] == fs["country"]
        if kind == "company":
            for founder in fs["founded_by"]:
                assert int(by_subject[founder]["birth_date"][0][:4]) + 20 <= int(fs["founded"][0])
                if by_subject[founder]["death_date"]:
                    assert int(fs["founded"][0]) <= int(by_subject[founder]["death_date"][0][:4])
        if kind == "person":
            if fs["death_date"]:
                assert fs["birth_date"][0] < fs["death_date"][0]
            for spouse in fs["spouse"]:
                assert by_subject[spouse]["spouse"] == [world.titles[gid]]
            birth_city = fs["birth_place"][0]
            assert by_subject[birth_city]["country"] == fs["nationality"]
        if kind == "album":
            assert by_subject[fs["performer"][0]]["occupation"][0] in ("Musician", "Singer")
            assert by_subject[fs["record_label"][0]]["industry"] == ["Music"]


def test_graph_supports_long_chains_and_intersections(world, facts):
    """Six-hop chains exist (film -> director -> birth place -> country -> capital
    -> mayor -> alma mater), and attribute values are shared, so intersections matter."""
    graph = defaultdict(lambda: defaultdict(list))
    for f in facts:
        graph[f.subject_title][f.relation].append(f.value)

    def follow(subject: str, path: tuple[str, ...]) -> list[str]:
        frontier = [subject]
        for relation in path:
            frontier = [value for node in frontier for value in graph[node][relation]]
        return frontier

    chain = ("director", "birth_place", "country", "capital", "mayor", "alma_mater")
    films = [world.titles[world.gid("film", i)] for i in range(world.counts["film"])]
    assert sum(1 for film in films if follow(film, chain)) >= 5
    birth_places = Counter(v for f in facts if f.relation == "birth_place" for v in [f.value])
    assert birth_places.most_common(1)[0][1] >= 5
    genre_years = Counter((tuple(graph[film]["genre"]), graph[film]["release_date"][0][:3]) for film in films)
    assert genre_years.most_common(1)[0][1] >= 3


def test_shards_render_the_same_pages(world, pages):
    fresh = generate_world(ARTICLES, SEED)  # no memo filled, units rendered out of order
    units = list(range(len(fresh)))
    sharded = {unit: render_unit(fresh, unit) for shard in (2, 0, 1) for unit in units[shard::3]}
    assert [page for unit in units for page in sharded[unit]] == pages


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".xml", ".xml.bz2"])
def test_xml_dump_round_trips_through_mwxml(tmp_path, pages, suffix):
    path = tmp_path / f"dump{suffix}"
    assert write_xml_dump(iter(pages), path) == len(pages)
    opener = bz2.open if suffix.endswith(".bz2") else open
    with opener(path, "rb") as handle:
        dump = mwxml.Dump.from_file(handle)
        read = [(p.title, p.redirect, next(iter(p)).text) for p in dump]
    assert read == [(p.title, p.redirect, p.text) for p in pages]
    again = tmp_path / f"again{suffix}"
    write_xml_dump(pages, again)
    assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(again.read_bytes()).digest()


def test_xml_dump_is_identical_across_processes(tmp_path):
    code = (
        "import sys\nfrom stillweb.corpora.synthetic import generate_world, world_pages, write_xml_dump\n"
        "write_xml_dump(world_pages(generate_world(300, 3)), sys.argv[1])\n"
    )
    paths = [tmp_path / f"{i}.xml.bz2" for i in range(2)]
    for path in paths:
        subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    assert paths[0].read_bytes() == paths[1].read_bytes()


def test_xml_dump_escapes_markup(tmp_path):
    page = RawPage(title="A & B <c>", text='x < y && "q" ]]> </text>')
    path = tmp_path / "one.xml"
    write_xml_dump([page], path)
    with open(path, "rb") as handle:
        read = [(p.title, next(iter(p)).text) for p in mwxml.Dump.from_file(handle)]
    assert read == [(page.title, page.text)]


def test_developer_errors_name_the_bad_value(world, tmp_path):
    with pytest.raises(ValueError, match="0"):
        generate_world(0, 0)
    with pytest.raises(TypeError, match="'many'"):
        generate_world("many", 0)
    with pytest.raises(TypeError, match="1.5"):
        generate_world(1000, 1.5)
    with pytest.raises(IndexError, match=str(len(world))):
        render_unit(world, len(world))
    with pytest.raises(TypeError, match="page 1 is not a RawPage: 'text'"):
        write_xml_dump(["text"], tmp_path / "bad.xml")
