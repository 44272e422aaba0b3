"""The declarative infobox mapping (``corpora/infobox_mapping.toml``): template fields to relations.

:func:`infobox_mapping` loads the data file once per process. The mapping says
which class a template belongs to (and the noun a question uses for its
entities), which relation each key states and with what value type, and how
numbered keys pair up (``leader_title1`` names the relation of
``leader_name1``). Keys are folded before lookup: lowercased, spaces to
underscores, and a trailing number dropped when the exact key is not mapped.

>>> mapping = infobox_mapping()
>>> mapping.field("infobox military conflict", "commander2").relation
'commander'
>>> mapping.noun("infobox philosopher")
'philosopher'
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from stillweb.corpora.errors import UsageError
from stillweb.corpora.wikitext.ontology import ontology, property_relation, relation_type
from stillweb.corpora.wikitext.titles import template_key
from stillweb.corpora.wikitext.variants import to_simplified

__all__ = ["MAPPING_PATH", "FieldRule", "InfoboxMapping", "infobox_mapping", "fold_key", "zh_field_key"]

MAPPING_PATH = Path(__file__).resolve().parent.parent / "infobox_mapping.toml"
ZH_MAPPING_PATH = Path(__file__).resolve().parent.parent / "infobox_mapping_zh.toml"
VALUE_TYPES = ("entity", "date", "year", "number", "text")


@dataclass(frozen=True)
class FieldRule:
    """What a mapped field states: its relation, value type, and whether only one entity counts."""

    relation: str
    value_type: str
    single: bool = False


@dataclass(frozen=True)
class Pairing:
    """A numbered key whose relation is named by the value of its partner key."""

    label: str
    default: str
    relations: dict[str, str]

    def relation_for(self, label_value: str) -> str:
        """The relation a label names: the longest listed label it starts with, else the default
        ("Independence from Spain" -> the relation of "independence")."""
        lowered = " ".join(label_value.lower().split())
        for label in sorted(self.relations, key=lambda key: (-len(key), key)):
            if lowered == label or lowered.startswith(label + " "):
                return self.relations[label]
        return self.default


def fold_key(raw: str) -> tuple[str, str]:
    """``(key, number)``: the key in lower snake case and its trailing number ("" if none).

    >>> fold_key("Leader_title 2")
    ('leader_title', '2')
    """
    key = _SEPARATORS_RE.sub("_", raw.strip().lower()).strip("_")
    match = _NUMBERED_RE.fullmatch(key)
    return (match[1], match[2]) if match else (key, "")


class InfoboxMapping:
    """Lookups over the mapping data; see the module docstring."""

    def __init__(self, data: dict) -> None:
        self.relations: dict[str, FieldRule] = {}
        for relation, spec in data["relations"].items():
            if spec["type"] not in VALUE_TYPES:
                raise UsageError(f"{MAPPING_PATH.name}: relation {relation!r} has unknown type {spec['type']!r}")
            self.relations[relation] = FieldRule(relation, spec["type"], bool(spec.get("single", False)))
        common = data.get("common", {}).get("keys", {})
        self._class_of: dict[str, str] = {}
        self._noun_of: dict[str, str] = {}
        self._keys: dict[str, dict[str, str]] = {}
        for name, spec in data["classes"].items():
            for template, noun in spec["templates"].items():
                self._class_of[template] = name
                self._noun_of[template] = noun
            self._keys[name] = {**common, **spec.get("keys", {})}
        self._pairs = {key: Pairing(spec["label"], spec["default"], spec["relations"]) for key, spec in data["pairs"].items()}
        self._not_read = frozenset(data.get("dbpedia", {}).get("not_read_keys", []))
        self._not_read_properties = frozenset(data.get("dbpedia", {}).get("not_read_properties", []))
        self._single_properties = frozenset(data.get("dbpedia", {}).get("single_properties", []))
        self._property_rules: dict[str, FieldRule | None] = {}
        self.pair_labels = frozenset(pairing.label for pairing in self._pairs.values())
        for keys in (*self._keys.values(), *(p.relations for p in self._pairs.values())):
            unknown = sorted(r for r in set(keys.values()) - set(self.relations) - {""}
                             if not (r.startswith("dbo:") and self.property_rule(r[4:])))
            if unknown:
                raise UsageError(f"{MAPPING_PATH.name}: relations without a [relations] entry: {unknown}")

    def class_of(self, template: str) -> str | None:
        """The class of an infobox template name (``infobox scientist`` -> ``person``), or None."""
        return self._class_of.get(template_key(template))

    def noun(self, template: str) -> str:
        """The noun for entities of this template ("" when the template is not mapped)."""
        return self._noun_of.get(template_key(template), "")

    def field(self, template: str, raw_key: str, partner_value: str | None = None) -> FieldRule | None:
        """The rule of a field, or None when it is not mapped.

        ``partner_value`` is the cleaned value of the paired label key (``leader_title1``
        for ``leader_name1``), when the key is one of the pairs.
        """
        keys = self._keys.get(self.class_of(template) or "", {})
        exact = _SEPARATORS_RE.sub("_", raw_key.strip().lower()).strip("_")
        relation = keys.get(exact)
        if relation is None and keys:
            folded, _ = fold_key(raw_key)
            relation = keys.get(folded)
            pairing = self._pairs.get(folded)
            if relation is None and pairing is not None:
                if partner_value is None:
                    return None
                relation = pairing.relation_for(partner_value)
        if relation == "" or (relation is None and exact in self._not_read):
            return None
        if relation is None:  # DBpedia's own mapping of the template (corpora/dbpedia_mapping.json)
            prop = ontology().template_property(template_key(template), exact)
            return self.property_rule(prop) if prop else None
        if relation.startswith("dbo:"):  # a reviewed key naming a DBpedia property
            return self.property_rule(relation[4:])
        return self.relations[relation]

    def property_rule(self, prop: str) -> FieldRule | None:
        """The rule of a DBpedia ``property[@unit]``: its relation (:func:`property_relation`), value
        type, and ``single`` for place ranges and the listed single properties; None when the property is listed as not read."""
        if prop not in self._property_rules:
            relation = property_relation(prop) if prop.partition("@")[0] not in self._not_read_properties else None
            kind = relation_type(relation) if relation else None
            single = kind is not None and kind.is_entity and (
                kind.range in _SINGLE_RANGES or prop.partition("@")[0] in self._single_properties)
            self._property_rules[prop] = None if kind is None else FieldRule(relation, kind.value_type, single)
        return self._property_rules[prop]

    def pairing(self, raw_key: str) -> Pairing | None:
        """The pairing of a numbered key (``leader_name1``), or None."""
        return self._pairs.get(fold_key(raw_key)[0])


@cache
def infobox_mapping() -> InfoboxMapping:
    """The mapping of ``corpora/infobox_mapping.toml`` (loaded once per process)."""
    with open(MAPPING_PATH, "rb") as handle:
        return InfoboxMapping(tomllib.load(handle))


def zh_field_key(key: str) -> str:
    """A Chinese infobox field name (folded) as the English key it stands for, else in simplified characters.

    >>> zh_field_key("出生地點"), zh_field_key("籍贯")
    ('birth_place', '籍贯')
    """
    simplified = to_simplified(key)
    return _zh_keys().get(simplified, simplified)


@cache
def _zh_keys() -> dict[str, str]:
    with open(ZH_MAPPING_PATH, "rb") as handle:
        return tomllib.load(handle)["keys"]


# Entity relations DBpedia maps to one place: only the first link of such a value is the object
# ("[[Hodgenville]], [[Kentucky]]" -> Hodgenville).
_SINGLE_RANGES = frozenset({"Place", "PopulatedPlace", "City", "Settlement", "Country"})
_SEPARATORS_RE = re.compile(r"[\s_]+")
_NUMBERED_RE = re.compile(r"(.*?[a-z])_?(\d+)")
