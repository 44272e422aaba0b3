"""The typed mapping: DBpedia's ontology and English infobox mappings, converted and looked up."""

from __future__ import annotations

import json
import subprocess
import sys

from stillweb.corpora.wikitext.mapping import infobox_mapping
from stillweb.corpora.wikitext.ontology import (
    DBPEDIA_MAPPING_PATH,
    compatible,
    ontology,
    property_relation,
    relation_type,
    relation_types,
)


def test_generated_file_credits_its_source_and_license():
    source = json.loads(DBPEDIA_MAPPING_PATH.read_text(encoding="utf-8"))["source"]
    assert source["repository"] == "https://github.com/dbpedia/extraction-framework"
    assert len(source["commit"]) == 40 and "CC BY-SA 3.0" in source["license"]
    assert "DBpedia" in source["credit"]


def test_every_reviewed_relation_has_types():
    for relation, rule in infobox_mapping().relations.items():
        kind = relation_type(relation)
        assert kind is not None and kind.value_type == rule.value_type, relation
        assert kind.domain and kind.range and kind.label and "_" not in kind.label, relation
        assert ontology().has_class(kind.domain), (relation, kind.domain)
        if kind.is_entity:
            assert ontology().has_class(kind.range), (relation, kind.range)
        else:
            assert kind.range.startswith("xsd:"), (relation, kind.range)


def test_relation_types_from_dbpedia():
    assert (relation_type("birth_place").domain, relation_type("birth_place").range) == ("Animal", "Place")
    assert relation_type("capital").range == "City" and relation_type("nationality").range == "Country"
    assert relation_type("time_zone").label == "time zone"
    assert relation_type("human_development_index").value_type == "number"
    assert relation_type("no_such_relation") is None
    assert all(name == kind.relation for name, kind in relation_types().items())


def test_properties_become_reviewed_relations_first_and_imperial_units_are_not_read():
    assert property_relation("birthPlace") == "birth_place"
    assert property_relation("areaTotal@squareKilometre") == "area_km2"
    assert property_relation("area@squareKilometre") == "area_km2"
    assert property_relation("populationTotal") == "population"
    assert property_relation("timeZone") == "time_zone" and property_relation("countryCode") == "country_code"
    assert property_relation("populationDensity@inhabitantsPerSquareKilometre") == "population_density_per_km2"
    assert property_relation("area@squareMile") is None and property_relation("elevation@foot") is None


def test_class_hierarchy_and_templates():
    tree = ontology()
    assert tree.ancestors("City")[:3] == ["City", "Settlement", "PopulatedPlace"]
    assert tree.is_a("Politician", "Person") and not tree.is_a("Country", "City")
    assert tree.template_class("Infobox country") == "Country"
    assert tree.template_class("infobox officeholder") == "Politician"
    assert tree.template_property("infobox country", "time_zone") == "timeZone"
    assert tree.template_property("infobox country", "capital2") == "capital"
    assert tree.class_label("PopulatedPlace") == "populated place"


def test_compatible_drops_only_contradictions():
    assert compatible("City", "City") and compatible("Settlement", "City")  # a settlement may be the city
    assert not compatible("Country", "City") and not compatible("Person", "Place")
    assert compatible("", "City") and compatible("NoSuchClass", "City") and compatible("Country", "owl:Thing")


def test_converter_reproduces_the_shipped_file_header(tmp_path):
    # the script's --help runs (its examples are its documentation); the conversion itself needs the
    # upstream files, which are not shipped: the header records where they come from
    out = subprocess.run([sys.executable, "scripts/convert_dbpedia_mappings.py", "--help"], capture_output=True,
                         text=True, check=True, cwd=DBPEDIA_MAPPING_PATH.parent.parent).stdout
    assert "--commit" in out and "example" in out
