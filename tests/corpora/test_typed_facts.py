"""Real infobox lines read right, with types (issue 35 item 1): one test per error class.

The snippets are lines of the shared English Wikipedia dump sample (Afghanistan, Alabama, Abraham
Lincoln, Aristotle...) or of the pages the issue names (Angela Merkel's embedded infobox).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stillweb.corpora.graph.fact_sample import dump_facts, sample_facts
from stillweb.corpora.wikitext import parse_page
from stillweb.corpora.wikitext.infobox import read_number
from stillweb.corpora.wikitext.ontology import relation_type


DUMP = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


def read(template: str, lines: str, title: str = "Subject") -> tuple[list[tuple[str, str, str]], list]:
    page = parse_page(title, "{{" + template + "\n" + lines + "\n}}\n'''Subject''' is a page.")
    return [(f.relation, f.value, f.value_type) for f in page.facts], page.dropped


def test_shown_text_not_link_target_for_text_values():
    facts, _ = read("Infobox country", "|demonym         = [[Demography of Afghanistan|Afghan]]")
    assert facts == [("demonym", "Afghan", "text")]


def test_a_label_is_no_value():
    facts, dropped = read("Infobox country", "|capital = [[Andorra la Vella]]\n|largest_city    = capital")
    assert facts == [("capital", "Andorra la Vella", "entity")]
    assert dropped == [("infobox country|largest_city", "label_as_value")]


def test_a_population_under_the_largest_city_is_not_a_city():
    facts, _ = read("Infobox U.S. state",
                    "|LargestCity = [[Birmingham, Alabama|Birmingham]] <br />212,038 <small>(2012 estimate)</small>")
    assert facts == [("largest_city", "Birmingham, Alabama", "entity")]
    facts, dropped = read("Infobox country", "|largest_city = 212,038")
    assert facts == [] and dropped == [("infobox country|largest_city", "number_for_entity")]


def test_an_aside_in_parentheses_is_not_the_value():
    facts, _ = read("Infobox U.S. state", "|Governor = [[Robert J. Bentley]] ([[Republican Party (United States)|R]])")
    assert facts == [("governor", "Robert J. Bentley", "entity")]


def test_a_cross_reference_is_no_religion():
    facts, dropped = read("Infobox officeholder", "|religion      = See: [[Abraham Lincoln and religion]]")
    assert facts == [] and dropped == [("infobox officeholder|religion", "cross_reference")]


def test_a_second_infobox_about_someone_else_is_not_the_subject():
    page = parse_page("Abraham Lincoln", """{{Infobox officeholder
|name = Abraham Lincoln
|birth_date = {{birth date|1809|2|12}}
}}
{{Infobox person
|name = Mary Todd Lincoln
|birth_date = {{birth date|1818|12|13}}
|birth_place = [[Lexington, Kentucky]]
}}
'''Abraham Lincoln''' was a president.""")
    assert [(f.relation, f.value) for f in page.facts] == [("birth_date", "1809-02-12")]
    assert ("infobox person|birth_place", "other_subject") in page.dropped
    # an unnamed second box (Alabama's state symbols) and one naming the page stay the page's
    page = parse_page("Alabama", "{{Infobox U.S. state|Name = Alabama}}{{Infobox country|name=Alabama|capital=[[Montgomery]]}}")
    assert [(f.relation, f.value) for f in page.facts] == [("capital", "Montgomery")]


def test_four_digit_numbers_are_numbers_not_years():
    facts, _ = read("Infobox settlement", "| population_total = 2500\n| elevation_m = 1500")
    assert facts == [("population", "2500", "number"), ("elevation_m", "1500", "number")]
    assert read_number("$19.654 billion") == ("19654000000", 19654000000.0)


def test_a_year_in_a_figures_aside_is_kept_as_its_as_of_year():
    """Alabama's '2010Pop = 4,858,979 (2015 est.)' is dated 2015 (issue 49 item 2), as its own field would date it."""
    facts, _ = read("Infobox U.S. state", "|2010Pop = 4,858,979 (2015 est.)<ref name=PopEstUS/>\n"
                                          "|2010Density = 36.5 (2011 est.)")
    assert facts == [("population", "4858979", "number"), ("population_as_of", "2015", "year"),
                     ("population_density_per_km2", "36.5", "number"),
                     ("population_density_per_km2_as_of", "2011", "year")]
    facts, _ = read("Infobox economy", "|gini = 31.3 (2010)\n|per capita = $4,425 (nominal, 2016 est.)")
    assert facts == [("gini_coefficient", "31.3", "number"), ("gini_coefficient_as_of", "2010", "year"),
                     ("gdp_per_capita", "4425", "number"), ("gdp_per_capita_as_of", "2016", "year")]
    for aside in ("(2010–2015)", "(2nd)", "(in 2010 US dollars)", "(1,500 m)"):  # no one year of the figure
        facts, _ = read("Infobox country", f"|population_estimate = 40,400,000 {aside}")
        assert facts == [("population", "40400000", "number")], aside
    facts, _ = read("Infobox country", "|area_km2 = 1,234 (2010)")  # DBpedia has no areaAsOf: no qualifier
    assert facts == [("area_km2", "1234", "number")]


def test_a_ppp_figure_is_not_read_as_a_nominal_one():
    """Infobox economy's gdp on Economy of Estonia is PPP; the relation is nominal GDP: dropped, counted."""
    facts, dropped = read("Infobox economy", "|gdp ={{increase}} $36.947 billion (PPP, 2015 est.)<ref>IMF</ref>\n"
                                             "|per capita = $6,500 ([[purchasing power parity|PPP]]) (2012 est.)")
    assert facts == [] and dropped == [("infobox economy|gdp", "ppp_for_nominal"),
                                       ("infobox economy|per_capita", "ppp_for_nominal")]


def test_country_templates_name_their_country():
    facts, _ = read("Infobox film", "| country = {{USA}}")
    assert facts == [("country", "United States", "entity")]
    facts, _ = read("Infobox film", "| country = {{flag|France}}<br />{{flagcountry|GBR}}")
    assert facts == [("country", "France", "entity"), ("country", "United Kingdom", "entity")]


def test_an_embedded_infobox_gives_the_subjects_facts():
    merkel = """{{Infobox officeholder
|name = Angela Merkel
|office = [[Chancellor of Germany]]
|birth_date = {{birth date and age|1954|7|17|df=y}}
|birth_place = [[Hamburg]], [[West Germany]]
|module = {{Infobox scientist
 | embed = yes
 | fields = [[Physical chemistry]]
 | doctoral_advisor = [[Lutz Zülicke]]
}}
}}
'''Angela Dorothea Merkel''' is a German politician."""
    facts = [(f.relation, f.value) for f in parse_page("Angela Merkel", merkel).facts]
    assert ("birth_place", "Hamburg") in facts and ("office", "Chancellor of Germany") in facts
    assert ("doctoral_advisor", "Lutz Zülicke") in facts and ("field", "Physical chemistry") in facts
    unnamed = merkel.replace("|module = {{Infobox scientist", "| {{Infobox scientist")  # written as a bare parameter
    assert ("doctoral_advisor", "Lutz Zülicke") in [(f.relation, f.value) for f in parse_page("Angela Merkel", unnamed).facts]


def test_demonyms_and_peoples_become_the_country_where_a_country_is_expected():
    assert read("Infobox philosopher", "|nationality = [[Greeks|Greek]]")[0] == [("nationality", "Greece", "entity")]
    assert read("Infobox person", " | nationality   = American")[0] == [("nationality", "United States", "entity")]
    assert read("Infobox scientist", "|nationality  = [[German People|German]]")[0] == [
        ("nationality", "Germany", "entity")]


def test_a_country_where_a_city_is_expected_is_dropped():
    facts, dropped = read("Infobox country", "|capital = [[France]]")
    assert facts == [] and dropped == [("infobox country|capital", "country_for_city")]
    assert read("Infobox country", "|capital = [[Singapore]]")[0] == [("capital", "Singapore", "entity")]


def test_country_fields_are_mapped_with_types():
    facts, _ = read("Infobox country", """|area_km2        = 652864<ref name="Area">CSO</ref>
|GDP_nominal     = $19.654 billion<ref name=imf2/>
|HDI_year        = 2014<!-- year -->
|HDI             = 0.465<!-- number only -->
|currency       = [[Afghan afghani|Afghani]]
|time_zone      = [[Central European Time|CET]]
|drives_on      = [[Right- and left-hand traffic#Afghanistan|right]]
|calling_code   = [[Telephone numbers in Afghanistan|+93]]""")
    assert facts == [
        ("area_km2", "652864", "number"),
        ("gross_domestic_product", "19654000000", "number"),
        ("human_development_index_as_of", "2014", "year"),
        ("human_development_index", "0.465", "number"),
        ("currency", "Afghani", "text"),
        ("time_zone", "Central European Time", "entity"),
        ("drives_on", "right", "text"),
        ("country_code", "+93", "text"),
    ]
    assert relation_type("time_zone").domain == "Place" and relation_type("human_development_index").range == "xsd:float"


def test_a_line_wrapped_mid_phrase_is_one_item():
    facts, _ = read("Infobox military conflict", """|result= American victory
* [[Kingdom of Great Britain|British]] recognition of the independence of the <br />[[United States|United States of America]]
* End of the [[First British Empire]]""")
    assert ("result", "United States of America", "text") not in facts
    assert ("result", "End of the First British Empire", "text") in facts


def test_units_and_lists_survive():
    facts, _ = read("Infobox settlement", "| area_total_km2 = {{convert|123.4|km2|sqmi}}\n| elevation_m = about 250 m (820 ft)")
    assert facts == [("area_km2", "123.4", "number"), ("elevation_m", "250", "number")]
    facts, _ = read("Infobox country", "|official_languages = {{hlist |[[Arabic]]<ref>x</ref> |[[Berber languages|Berber]]}}")
    assert facts == [("official_language", "Arabic", "text"), ("official_language", "Berber", "text")]
    facts, _ = read("Infobox country", "|official_languages = [[Catalan language|Catalan]]<sup>a</sup>")
    assert facts == [("official_language", "Catalan", "text")]  # a footnote mark is no part of the value


@pytest.mark.shared_data
def test_the_shared_sample_is_read_with_at_least_half_its_fields_typed(shared_data):
    figures = dump_facts(shared_data / DUMP)
    assert figures["mapped_share"] >= 0.5, figures
    assert figures["facts_per_page"] >= 7.0
    assert all(relation_type(fact["relation"]) is not None for fact in figures["facts"])
    assert sum(bool(fact["line"]) for fact in figures["facts"]) >= 0.95 * len(figures["facts"])  # raw lines found
    sample = sample_facts(figures["facts"], 100, 35)
    assert len(sample) == 100 and sample == sample_facts(figures["facts"], 100, 35)


@pytest.mark.slow  # parses the sample in two processes (~25 s on a loaded 2-core machine)
@pytest.mark.shared_data
def test_typed_facts_of_the_sample_are_the_same_bytes_in_two_processes(shared_data):
    code = ("import json, sys; from stillweb.corpora.graph.fact_sample import dump_facts; "
            "sys.stdout.write(json.dumps(dump_facts(sys.argv[1]), sort_keys=True))")
    outputs = []
    for seed in ("1", "2"):
        env = {"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin", "TZ": "UTC" if seed == "1" else "Asia/Tokyo"}
        run = subprocess.run([sys.executable, "-c", code, str(shared_data / DUMP)], capture_output=True, check=True,
                             env=env)
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1] and json.loads(outputs[0])["facts"]


def test_an_object_page_of_a_contradicting_class_is_dropped_when_titles_resolve(tmp_path):
    import pyarrow.parquet as pq

    from stillweb.corpora.graph.writer import GraphWriter

    pages = [
        parse_page("Utopia", "{{Infobox country\n|capital = [[Freedonia]]\n|largest_city = [[Sylvania]]\n}}"),
        parse_page("Freedonia", "{{Infobox country\n|demonym = Freedonian\n}}"),  # a country, not a city
        parse_page("Sylvania", "{{Infobox settlement\n|population_total = 100\n}}"),  # more general than City: kept
        parse_page("Ada", "{{Infobox company\n|founder = [[Bob Roe]]\n}}"),
        parse_page("Bob Roe", "{{Infobox person\n|birth_date = {{birth date|1900|1|1}}\n}}"),  # a Person is an Agent
    ]
    assert [page.entity_class for page in pages] == ["Country", "Country", "Settlement", "Company", "Person"]
    writer = GraphWriter(tmp_path / "spill")
    for doc_id, page in enumerate(pages):
        writer.add_page(doc_id, page)
    (tmp_path / "out").mkdir()
    counts = writer.finish(tmp_path / "out")
    facts = pq.read_table(tmp_path / "out" / "facts.parquet").to_pylist()
    assert [(f["subject"], f["relation"], f["object"]) for f in facts if f["object"] >= 0] == [
        (0, "largest_city", 2), (3, "founded_by", 4)]
    assert counts["object_type_mismatch"] == {"capital": 1} and counts["facts"] == len(facts)
