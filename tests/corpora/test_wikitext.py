"""Tests of the wikitext parser: plaintext, links, categories, page kinds and infobox facts."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.corpora.sources.wikipedia_xml import read_dump
from stillweb.corpora.snapshot.records import ExtractedFact, ParsedPage
from stillweb.corpora.wikitext import classify_value, normalize_title, parse_page

SAMPLES = ("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2", "enwiki-table-markup.xml.bz2")
LEAK = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|'''|''|\{\||\|\}|\|-|\|\|")


def facts_of(wikitext: str) -> list[tuple[str, str, str]]:
    return [(f.relation, f.value, f.value_type) for f in parse_page("Subject", wikitext).facts]


# ---------------------------------------------------------------- plaintext


def test_headings_become_lines_after_a_blank_line() -> None:
    page = parse_page("X", "Intro text.\n== History ==\nOld times.\n=== Early ===\nEarlier.")
    assert page.text == "Intro text.\n\nHistory\nOld times.\n\nEarly\nEarlier."


def test_references_files_comments_and_style_are_removed() -> None:
    wikitext = (
        "'''Bold''' and ''italic''.<ref>{{cite web|url=http://x|title=T}}</ref> Again<ref name=a/>.\n"
        "[[File:Pic.jpg|thumb|A caption with [[Nested link]] and [[Other|more]].]]<!-- hidden -->\n"
        "[[Image:Other.png|left]]End."
    )
    page = parse_page("X", wikitext)
    assert page.text == "Bold and italic. Again.\n\nEnd."
    assert "Nested link" not in page.links


def test_inline_templates_keep_readable_content_and_others_are_dropped() -> None:
    wikitext = (
        "{{About|something}}{{Use mdy dates|date=2015}}A {{convert|10|km|mi}} road, "
        "{{lang|fr|la route}}, {{nowrap|New York}}, born {{birth date|1809|2|12}} "
        "and {{birth date|1809|2|12|df=y}}.{{Citation needed|date=2010}}\n{{Navbox|list1=[[A]]}}"
    )
    text = parse_page("X", wikitext).text
    assert text == "A 10 km road, la route, New York, born February 12, 1809 and 12 February 1809."


def test_tables_are_flattened_to_rows() -> None:
    wikitext = "Before.\n{| class=\"wikitable\"\n|+ Caption\n|-\n! Name !! Year\n|-\n| [[Alpha]] || 1999\n|}\nAfter."
    page = parse_page("X", wikitext)
    assert "Name | Year\nAlpha | 1999" in page.text
    assert not LEAK.search(page.text)
    assert page.links == ["Alpha"]


def test_links_are_normalized_and_namespaces_dropped() -> None:
    wikitext = (
        "[[paris_france#History|Paris]] [[ Berlin ]] [[Category:Cities|sort]] [[fr:Paris]] "
        "[[wikt:word|word]] [[:Category:Towns]] [[Rome (city)|]] [[Star Wars: A New Hope]] [[Berlin]]"
    )
    page = parse_page("X", wikitext)
    assert page.links == ["Paris france", "Berlin", "Rome (city)", "Star Wars: A New Hope"]
    assert page.categories == ["Cities"]
    assert page.text == "Paris Berlin word Towns Rome Star Wars: A New Hope Berlin"


@pytest.mark.parametrize(
    ("title", "wikitext", "kind"),
    [
        ("Mercury", "'''Mercury''' may refer to:\n* [[Mercury (planet)]]\n{{disambiguation}}", "disambiguation"),
        ("Aa", "Rivers:\n* [[Aa (river)]]\n{{geodis}}", "disambiguation"),
        ("Smith", "{{hndis|Smith, John}}", "disambiguation"),
        ("Bar", "{{Disambig}}", "disambiguation"),
        ("Baz", "{{dab}}", "disambiguation"),
        ("List of rivers", "* [[Nile]]", "list"),
        ("Nile", "The '''Nile''' is a river.", "article"),
    ],
)
def test_page_kind(title: str, wikitext: str, kind: str) -> None:
    assert parse_page(title, wikitext).kind == kind


def test_normalize_title() -> None:
    assert normalize_title("new_york_city#Parks") == "New york city"
    assert normalize_title(":  eBay ") == "EBay"
    assert normalize_title("{{bad}}") == ""


def test_developer_input_of_wrong_type_raises() -> None:
    with pytest.raises(TypeError, match="NoneType"):
        parse_page("X", None)  # type: ignore[arg-type]


# ------------------------------------------------------------------- facts


def test_infobox_is_removed_from_text_and_mapped_fields_become_typed_facts() -> None:
    wikitext = """{{Infobox person
| name = Ada Example
| image = Ada.jpg
| caption = Ada in 1850
| birth_date = {{birth date and age|1950|3|4}}
| death_date = {{death date and age|2001|5|6|1950|3|4}}
| birth_place = [[Springfield (Illinois)|Springfield]], [[Illinois]], U.S.
| spouse = {{plainlist|
* [[Bob Example]]
* [[Carl Example (painter)|Carl Example]]
}}
| children = [[Dan Example]], [[Eve Example]]
| party = [[Alpha Party]]<br />[[Beta Party]]
| founded = 1901
| occupation = Lawyer<br>Politician
| signature = Ada sig.svg
| empty_field =
| awards = {{ubl|[[One]]|[[Two]]}}
| instruments = {{hlist|Piano|Organ}}
| marked = <!-- nothing -->{{Citation needed}}
| hobby = Chess
}}
'''Ada Example''' was a person."""
    page = parse_page("Ada Example", wikitext)
    assert page.text == "Ada Example was a person."
    assert facts_of(wikitext) == [
        ("birth_date", "1950-03-04", "date"),
        ("death_date", "2001-05-06", "date"),
        ("birth_place", "Springfield (Illinois)", "entity"),  # single-valued: the first link only
        ("spouse", "Bob Example", "entity"),
        ("spouse", "Carl Example (painter)", "entity"),
        ("child", "Dan Example", "entity"),  # DBpedia's mapping of the template (children -> child)
        ("child", "Eve Example", "entity"),
        ("party", "Alpha Party", "entity"),
        ("party", "Beta Party", "entity"),
        ("founded", "1901", "year"),
        ("occupation", "Lawyer", "text"),
        ("occupation", "Politician", "text"),
        ("awards", "One", "entity"),
        ("awards", "Two", "entity"),
        ("instrument", "Piano", "text"),
        ("instrument", "Organ", "text"),
    ]
    assert page.unmapped == [("infobox person|hobby", "Chess")]
    assert page.mapped_fields == 10
    birth = page.facts[0]
    assert birth == ExtractedFact("birth_date", "1950-03-04", "date", date="1950-03-04", template="infobox person",
                                  field="birth_date")
    assert page.facts[2].object_title == "Springfield (Illinois)"
    assert "Bob Example" in page.links


def test_numbered_keys_fold_and_labels_pair() -> None:
    wikitext = """{{Infobox military conflict
| conflict = A war
| place = [[Atlantic Ocean]], [[Europe]]
| commander1 = [[John Burgoyne]]<ref>A book, p. 3.</ref>
| commander2 = [[Horatio Gates]]
| combatant1 = {{flagcountry|Kingdom of Great Britain}}
| strength2 = 30,000 (total number that served)
}}{{Infobox country
| leader_title1 = President | leader_name1 = [[Joe Biden]]
| leader_title2 = Vice President | leader_name2 = [[Kamala Harris]]
| established_event1 = Independence from Spain | established_date1 = {{start date|1776|7|4}}
}}"""
    page = parse_page("X", wikitext)
    assert facts_of(wikitext) == [
        ("place", "Atlantic Ocean", "entity"),
        ("place", "Europe", "entity"),
        ("commander", "John Burgoyne", "entity"),
        ("commander", "Horatio Gates", "entity"),
        ("combatant", "Kingdom of Great Britain", "entity"),  # {{flagcountry}} links its country
        ("head_of_state", "Joe Biden", "entity"),
        ("leader", "Kamala Harris", "entity"),
        ("independence_date", "1776-07-04", "date"),
    ]
    assert page.unmapped == [("infobox military conflict|strength2", "30,000")]  # free text: not read


def test_values_are_cleaned_and_read_as_their_relation_type() -> None:
    wikitext = """{{Infobox settlement
| population_total = 1,234,567<ref name=census/>
| area_total_km2 = {{convert|123.4|km2|sqmi}}
| elevation_m = about 250 m (820 ft)
| established_date = c. 1850
| mayor = [[Jane Roe]] (since 2010)[a]
}}{{Infobox film
| runtime = 120 minutes
| released = {{film date|1999|3|4}}
| genre = Drama, Comedy
| country = {{unbulleted list|United States|France}}
| producer = a very long description of several people who produced this film over many years
}}"""
    assert facts_of(wikitext) == [
        ("population", "1234567", "number"),
        ("area_km2", "123.4", "number"),
        ("elevation_m", "250", "number"),
        ("founded", "1850", "year"),
        ("mayor", "Jane Roe", "entity"),
        ("runtime", "120", "number"),
        ("release_date", "1999-03-04", "date"),
        ("genre", "Drama", "text"),
        ("genre", "Comedy", "text"),
        ("country", "United States", "entity"),
        ("country", "France", "entity"),
    ]


def test_unknown_templates_give_no_facts_but_keep_their_text() -> None:
    page = parse_page("X", "{{Infobox made-up thing\n| launch_rocket = [[Saturn V]]\n}}Body.")
    assert page.facts == []
    assert page.unmapped == [("infobox made-up thing|launch_rocket", "Saturn V")]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("February 12, 1809", ("date", "1809-02-12", None, "1809-02-12")),
        ("12 February 1809", ("date", "1809-02-12", None, "1809-02-12")),
        ("1809-02-12", ("date", "1809-02-12", None, "1809-02-12")),
        ("Feb 12, 1809", ("date", "1809-02-12", None, "1809-02-12")),
        ("1809", ("year", "1809", None, "1809")),
        ("1,234,567", ("number", "1234567", 1234567.0, None)),
        ("123.4", ("number", "123.4", 123.4, None)),
        ("42", ("number", "42", 42.0, None)),
        ("February 30, 1809", ("text", "February 30, 1809", None, None)),
        ("3 months", ("text", "3 months", None, None)),
    ],
)
def test_classify_value(value: str, expected: tuple) -> None:
    assert classify_value(value) == expected


def test_date_templates_in_infobox() -> None:
    wikitext = (
        "{{Infobox person\n| birth_date = {{dts|1809|2|12}}\n| death_date = {{Death date|1809|02|12|mf=yes}}\n}}"
        "{{Infobox film\n| released = {{dts|12 February 1809}}\n}}{{Infobox company\n| founded = {{start date|1861|3}}\n}}"
        "{{Infobox writer\n| birth_date = {{birth year and age|1950}}\n| death_date = {{start date|1861|3}}\n}}"
    )
    assert facts_of(wikitext) == [
        ("birth_date", "1809-02-12", "date"),
        ("death_date", "1809-02-12", "date"),
        ("release_date", "1809-02-12", "date"),
        ("founded", "1861", "year"),  # a month without a day: its year
        ("birth_date", "1950", "year"),
    ]  # a month and year is no date: dropped


def test_nested_infobox_module_gives_its_own_facts() -> None:
    wikitext = "{{Infobox person\n| spouse = Bea Example\n| module = {{Infobox officeholder|office = [[Mayor]]}}\n}}"
    page = parse_page("A", wikitext)
    assert [(f.relation, f.value, f.template) for f in page.facts] == [
        ("spouse", "Bea Example", "infobox person"),
        ("office", "Mayor", "infobox officeholder"),
    ]


# --------------------------------------------------------------- real pages


@cache
def parsed_samples(data_dir: Path) -> dict[str, ParsedPage]:
    """Every article of both samples by title (one title is in both: 110 distinct of 111)."""
    return {
        raw.title: parse_page(raw.title, raw.text)
        for sample in SAMPLES
        for raw in read_dump(data_dir / sample)
        if raw.redirect is None
    }


@pytest.mark.slow
@pytest.mark.shared_data
def test_no_markup_leaks_in_any_real_article(shared_data: Path) -> None:
    pages = parsed_samples(shared_data)
    assert len(pages) == 110
    leaks = {title: LEAK.search(page.text)[0] for title, page in pages.items() if LEAK.search(page.text)}
    assert leaks == {}
    assert all(page.text for page in pages.values())


@pytest.mark.shared_data
def test_abraham_lincoln_facts(shared_data: Path) -> None:
    page = parsed_samples(shared_data)["Abraham Lincoln"]
    assert page.text.startswith("Abraham Lincoln (February 12, 1809 – April 15, 1865) was the 16th President")
    facts = {(f.relation, f.value): f for f in page.facts}
    birth = facts["birth_date", "1809-02-12"]
    assert (birth.value_type, birth.date) == ("date", "1809-02-12")
    spouse = facts["spouse", "Mary Todd Lincoln"]
    assert (spouse.value_type, spouse.object_title) == ("entity", "Mary Todd Lincoln")
    assert facts["party", "Republican Party (United States)"].value_type == "entity"
    assert facts["birth_place", "Hodgenville, Kentucky"].value_type == "entity"
    assert "Presidents of the United States" in page.categories
    assert "Hodgenville, Kentucky" in page.links


@pytest.mark.shared_data
def test_real_kinds_and_infobox_coverage(shared_data: Path) -> None:
    pages = parsed_samples(shared_data)
    kinds = {title: page.kind for title, page in pages.items() if page.kind != "article"}
    assert kinds["Austin (disambiguation)"] == "disambiguation"
    assert kinds["List of anthropologists"] == "list"
    assert sum(kind == "disambiguation" for kind in kinds.values()) == 8
    with_infobox = [page for page in pages.values()
                    if any(f.template.startswith("infobox") for f in page.facts) or page.unmapped]
    assert len(with_infobox) >= 47  # 45 + 3 articles with {{Infobox ...}}, minus one whose box is all images
    with_facts = [page for page in pages.values() if page.facts]
    assert len(with_facts) >= 35  # the boxes of mapped templates (spaceflight, language family... are not)
    for page in pages.values():
        for fact in page.facts:
            assert fact.value and not LEAK.search(fact.value)
            assert fact.value_type != "entity" or fact.object_title == fact.value


# ------------------------------------------------------- robustness, determinism

MARKUP_PIECES = st.sampled_from(
    ["{{", "}}", "[[", "]]", "|", "=", "==", "'''", "''", "<ref>", "</ref>", "<ref name=a/>", "{|", "|}",
     "|-", "!", "\n", "*", "#", ":", ";", "<!--", "-->", "<br>", "<table>", "</td>", "&amp;", "&", "[", "]",
     "http://x.org", "Infobox", "birth date", "File:", "Category:", "{{{", "}}}", "<math>", "__TOC__",
     "1809", "February", "12", ",", " ", "text"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(MARKUP_PIECES, st.text(max_size=5)), max_size=60).map("".join))
def test_random_wikitext_never_raises_and_never_leaks(wikitext: str) -> None:
    page = parse_page("Random", wikitext)
    assert isinstance(page.text, str)
    assert not LEAK.search(page.text)
    for fact in page.facts:
        assert fact.value_type in ("entity", "date", "year", "number", "text")


def test_deeply_nested_input_does_not_raise() -> None:
    assert isinstance(parse_page("Deep", "{{a|" * 500 + "x" + "}}" * 500).text, str)
    assert isinstance(parse_page("Deep", "[[" * 300 + "x" + "]]" * 300).text, str)


DETERMINISM_SCRIPT = """
import hashlib, sys
from stillweb.corpora.wikitext import parse_page
text = "{{Infobox person|name=A|birth_date={{birth date|1950|3|4}}|spouse={{plainlist|*[[B]]\\n*[[C]]}}}}"
text += "'''A''' is [[B|b]].<ref>x</ref>\\n== H ==\\n{|\\n| 1 || 2\\n|}\\n[[Category:Z]]" * 20
page = parse_page("A", text)
sys.stdout.write(hashlib.sha256(repr(page).encode()).hexdigest())
"""


def test_parse_page_is_identical_across_processes() -> None:
    runs = [
        subprocess.run([sys.executable, "-c", DETERMINISM_SCRIPT], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and len(runs[0]) == 64


def test_synthetic_world_facts_are_extracted_exactly() -> None:
    from stillweb.corpora.synthetic import generate_world, iter_true_facts, world_pages

    world = generate_world(120, seed=3)
    truth = {(f.subject_title, f.relation, f.value, f.value_type, f.object_title) for f in iter_true_facts(world)}
    extracted = set()
    for raw in world_pages(world):
        if raw.redirect is None:
            page = parse_page(raw.title, raw.text)
            assert not LEAK.search(page.text), raw.title
            extracted |= {(raw.title, f.relation, f.value, f.value_type, f.object_title) for f in page.facts}
    assert truth and extracted == truth  # precision and recall 1.0
