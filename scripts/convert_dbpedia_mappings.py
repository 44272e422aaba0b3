"""Convert DBpedia's English infobox mappings and ontology into ``corpora/dbpedia_mapping.json``.

Source: the DBpedia extraction framework (github.com/dbpedia/extraction-framework),
``mappings/Mapping_en.xml`` (the community-maintained mappings of mappings.dbpedia.org,
one ``TemplateMapping`` per infobox template) and ``ontology.owl`` (the DBpedia
ontology: classes with their parents, properties with domain and range). Both are
licensed CC BY-SA 3.0 by the DBpedia maintainers and contributors (the ontology's own
``dcterms:license``); the generated file carries that credit in its ``source`` header.

The output keeps only what the infobox reader needs (``corpora/wikitext/ontology.py``):

* ``templates``: template key (``country``, ``settlement``; the ``Infobox`` prefix dropped,
  lowercase) -> ``{"class": "Country", "fields": {field key: ontology property}}``, the property
  as ``area@squareKilometre`` when the mapping names the unit of the field's numbers;
  only infobox templates (``Infobox ...``, the taxobox family); a redirect between mapping
  pages becomes ``{"same_as": target}``, ``ConditionalMapping`` takes the class
  of its ``otherwise`` case and the fields of every case, ``IntermediateNodeMapping``
  fields are flattened onto the template (``office``, ``term_start`` of an officeholder);
* ``properties``: every property the templates (or the project's ``corpora/infobox_mapping.toml``)
  use -> ``[domain, range, English label]``;
* ``classes``: every ontology class -> ``[[parents], English label]`` (a class may have several:
  Person is an Animal and an Agent);
* ``functional``: the ontology's functional properties (``owl:FunctionalProperty``: one value per
  subject, such as ``birthDate``), which the task generator's keys read (``corpora/tasks/prove/keys.py``).

Run it on a checkout (or a ``git show``) of the repository::

    python scripts/convert_dbpedia_mappings.py --mappings Mapping_en.xml --ontology ontology.owl \\
        --commit e3dfe8bb8dbc3e2e58d9abc188e00e5f9dd0d928 --out corpora/dbpedia_mapping.json
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import mwparserfromhell

from stillweb.corpora.wikitext.titles import template_key

REPOSITORY = "https://github.com/dbpedia/extraction-framework"
LICENSE = "CC BY-SA 3.0 (https://creativecommons.org/licenses/by-sa/3.0/)"
CREDIT = ("DBpedia Mappings (mappings.dbpedia.org) and the DBpedia Ontology, by the DBpedia maintainers and "
          "contributors, converted by scripts/convert_dbpedia_mappings.py")
DBO = "http://dbpedia.org/ontology/"
RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
RDFS = "{http://www.w3.org/2000/01/rdf-schema#}"
OWL = "{http://www.w3.org/2002/07/owl#}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_INFOBOX_LIKE = frozenset({"taxobox", "automatic taxobox", "speciesbox", "chembox", "drugbox", "geobox"})
_REDIRECT_RE = re.compile(r"#REDIRECT\s*\[\[Mapping en:([^\]|]+)", re.IGNORECASE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="example:\n  python scripts/convert_dbpedia_mappings.py --mappings "
                                            "Mapping_en.xml --ontology ontology.owl --commit <sha> "
                                            "--out corpora/dbpedia_mapping.json")
    parser.add_argument("--mappings", required=True, type=Path, help="mappings/Mapping_en.xml")
    parser.add_argument("--ontology", required=True, type=Path, help="ontology.owl")
    parser.add_argument("--commit", required=True, help="the extraction-framework commit both files come from")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--project-mapping", type=Path, default=Path(__file__).parent.parent / "corpora" / "infobox_mapping.toml",
                        help="the project's reviewed mapping: the properties its relations name are kept too")
    args = parser.parse_args()
    classes, properties = read_ontology(args.ontology)
    functional = read_functional(args.ontology)
    templates = read_mappings(args.mappings, properties)
    used = {prop.split("@")[0] for spec in templates.values() for prop in spec.get("fields", {}).values()}
    with open(args.project_mapping, "rb") as handle:  # the properties the project's own rules name
        project = tomllib.load(handle)
    used |= {spec["dbpedia"] for spec in project["relations"].values() if "dbpedia" in spec}
    used |= {value[4:].split("@")[0] for spec in project["classes"].values()
             for value in spec.get("keys", {}).values() if value.startswith("dbo:")}
    used |= {other.split("@")[0] for spec in project["relations"].values() for other in spec.get("also", [])}
    used = sorted(used & set(properties))
    data = {
        "source": {"credit": CREDIT, "license": LICENSE, "repository": REPOSITORY, "commit": args.commit,
                   "files": ["mappings/Mapping_en.xml", "ontology.owl"]},
        "functional": functional,
        "classes": classes,
        "properties": {name: properties[name] for name in used},
        "templates": templates,
    }
    args.out.write_text(_dump(data), encoding="utf-8")
    print(f"{args.out}: {len(templates)} templates, {len(used)} properties, {len(classes)} classes")


def read_ontology(path: Path) -> tuple[dict[str, list], dict[str, list[str]]]:
    """``classes``: name -> [[parents], label]; ``properties``: name -> [domain, range, label]."""
    root = ElementTree.parse(path).getroot()
    classes: dict[str, list[str]] = {}
    properties: dict[str, list[str]] = {}
    for element in root:
        about = element.get(f"{RDF}about", "")
        if not about.startswith(DBO):
            continue
        name = about[len(DBO):]
        label = _english_label(element) or name
        if element.tag == f"{OWL}Class":
            parents = [_local(e.get(f"{RDF}resource", "")) for e in element.findall(f"{RDFS}subClassOf")]
            classes[name] = [[p for p in parents if p and p != "owl:Thing"], label]  # Person: Animal and Agent
        elif element.tag in (f"{OWL}ObjectProperty", f"{OWL}DatatypeProperty"):
            domain = element.find(f"{RDFS}domain")
            range_ = element.find(f"{RDFS}range")
            domain_name = _local(domain.get(f"{RDF}resource", "")) if domain is not None else ""
            if range_ is not None:
                range_name = _local(range_.get(f"{RDF}resource", ""), keep_xsd=True)
            else:  # an object property without a range points at any thing; a datatype one is a string
                range_name = "owl:Thing" if element.tag == f"{OWL}ObjectProperty" else "xsd:string"
            if element.tag == f"{OWL}ObjectProperty" and range_name.startswith("xsd:"):
                range_name = "owl:Thing"
            properties[name] = [domain_name, range_name, label]
    return dict(sorted(classes.items())), properties


def read_functional(path: Path) -> list[str]:
    """The ontology's properties typed ``owl:FunctionalProperty``, sorted."""
    functional = f"{OWL[1:-1]}FunctionalProperty"
    found = set()
    for element in ElementTree.parse(path).getroot():
        about = element.get(f"{RDF}about", "")
        types = {t.get(f"{RDF}resource", "") for t in element.findall(f"{RDF}type")}
        if about.startswith(DBO) and (functional in types or element.tag == f"{OWL}FunctionalProperty"):
            found.add(about[len(DBO):])
    return sorted(found)


def read_mappings(path: Path, properties: dict[str, list[str]]) -> dict[str, dict]:
    """Template key -> {"class", "fields"} of every English mapping page (redirects as aliases)."""
    pages: dict[str, str] = {}
    for _, element in ElementTree.iterparse(path):
        if _local_tag(element.tag) != "page":
            continue
        title = next((c.text or "" for c in element if _local_tag(c.tag) == "title"), "")
        text = next((t.text or "" for t in element.iter() if _local_tag(t.tag) == "text"), "")
        name = title[len("Mapping en:"):].replace("_", " ").lower()
        if title.startswith("Mapping en:") and (name.startswith("infobox") or name.endswith(" infobox")
                                                 or name in _INFOBOX_LIKE):
            pages[template_key(name)] = text
        element.clear()
    templates: dict[str, dict] = {}
    first: dict[str, str] = {}
    for key in sorted(pages):
        text = pages[key]
        redirect = _REDIRECT_RE.match(text.strip())
        if redirect:
            target = template_key(redirect[1])
            if target in pages and not _REDIRECT_RE.match(pages[target].strip()):
                templates[key] = {"same_as": target}
            continue
        spec = _template_spec(text, properties)
        if spec is None:
            continue
        seen = first.setdefault(json.dumps(spec, sort_keys=True), key)
        templates[key] = spec if seen == key else {"same_as": seen}  # identical mapping pages share one entry
    return templates


def _template_spec(text: str, properties: dict[str, list[str]]) -> dict | None:
    code = mwparserfromhell.parse(text)
    top = next((t for t in code.filter_templates(recursive=False)), None)
    if top is None:
        return None
    kind = _name(top)
    if kind == "templatemapping":
        cls = _param(top, "mapToClass")
    elif kind == "conditionalmapping":
        cases = [c for c in top.get("cases").value.filter_templates(recursive=False)] if top.has("cases") else []
        mappings = [m for c in cases if c.has("mapping") for m in c.get("mapping").value.filter_templates(recursive=False)]
        otherwise = [c for c in cases if _param(c, "operator") == "otherwise" and c.has("mapping")]
        chosen = otherwise[0].get("mapping").value.filter_templates(recursive=False) if otherwise else mappings
        cls = _param(chosen[0], "mapToClass") if chosen else ""
    else:
        return None
    cls = _local(cls.strip()) if ":" in cls else cls.strip()
    fields: dict[str, str] = {}
    for mapping in mwparserfromhell.parse(str(top)).filter_templates():
        if _name(mapping) != "propertymapping":
            continue
        field, prop = _param(mapping, "templateProperty"), _param(mapping, "ontologyProperty")
        unit = _param(mapping, "unit")
        if prop in properties and field and _field_key(field) not in fields:
            fields[_field_key(field)] = f"{prop}@{unit}" if unit else prop
    if not cls and not fields:
        return None
    return {"class": cls, "fields": _fold_numbered(fields)}


def _fold_numbered(fields: dict[str, str]) -> dict[str, str]:
    """``leader_name1..14`` -> one ``leader_name`` entry when they all map to one property
    (the reader folds a trailing number when the exact key is not listed); a lone ``area_km2``
    stays as it is."""
    bases: dict[str, set[str]] = {}
    for key, prop in fields.items():
        bases.setdefault(re.sub(r"_?\d+$", "", key), set()).add(prop)
    folded: dict[str, str] = {}
    for key in sorted(fields):
        base = re.sub(r"_?\d+$", "", key)
        variants = sum(1 for other in fields if re.sub(r"_?\d+$", "", other) == base)
        if base != key and variants > 1 and len(bases[base]) == 1:
            folded[base] = fields[key]
        else:
            folded.setdefault(key, fields[key])
    return dict(sorted(folded.items()))


def _field_key(field: str) -> str:
    return re.sub(r"[\s_]+", "_", field.strip().lower()).strip("_")


def _name(template) -> str:
    return str(template.name).strip().lower().replace(" ", "")


def _param(template, name: str) -> str:
    if not template.has(name):
        return ""
    value = template.get(name).value
    return re.sub(r"<!--.*?-->", "", str(value), flags=re.DOTALL).strip() if not value.filter_templates() else ""


def _english_label(element: ElementTree.Element) -> str:
    for label in element.findall(f"{RDFS}label"):
        if label.get(XML_LANG) == "en":
            return " ".join((label.text or "").split())
    return ""


def _local(uri: str, keep_xsd: bool = False) -> str:
    if uri.startswith(DBO):
        return uri[len(DBO):]
    if keep_xsd and "XMLSchema#" in uri:
        return "xsd:" + uri.rsplit("#", 1)[1]
    if keep_xsd and "rdf-syntax-ns#langString" in uri:
        return "xsd:string"
    if uri.startswith("http://dbpedia.org/datatype/"):
        return "dt:" + uri.rsplit("/", 1)[1]
    if uri.endswith("owl#Thing") or uri.startswith("owl:"):
        return "owl:Thing"
    return ""


def _local_tag(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _dump(data: dict) -> str:
    """Stable JSON, one template / property / class per line (reviewable diffs, small file)."""
    lines = ["{", f'"source": {json.dumps(data["source"], sort_keys=True)},',
             f'"functional": {json.dumps(data["functional"])},']
    for section in ("classes", "properties", "templates"):
        items = data[section]
        lines.append(f'"{section}": {{')
        rows = [f"{json.dumps(k)}: {json.dumps(v, sort_keys=True, separators=(',', ':'))}" for k, v in items.items()]
        lines.append(",\n".join(rows))
        lines.append("}," if section != "templates" else "}")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
