"""The typed facts of a Wikipedia dump, for measuring how well pages are read (issue 35 item 1).

:func:`dump_facts` parses every article of a dump the way a build does and returns its infobox
figures (mapped, dropped and unmapped fields, the mapped share, facts per page) and every fact
with the infobox line it was read from; :func:`sample_facts` picks ``n`` of them by a keyed hash
of the seed (no library RNG stream), so a hand check of "the same 100 facts" is reproducible.
``scripts/sample_facts.py`` prints a sample next to the raw lines for a reader to judge.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

from stillweb.corpora.sources.wikipedia_xml import read_dump
from stillweb.corpora.wikitext import parse_page
from stillweb.corpora.wikitext.ontology import relation_type

__all__ = ["dump_facts", "sample_facts", "raw_line"]


def dump_facts(path: str | Path) -> dict:
    """Infobox figures and every typed fact (with its raw line) of the articles of a dump, in dump order."""
    mapped = pages = 0
    dropped: Counter[str] = Counter()
    unmapped = 0
    facts: list[dict] = []
    for raw in read_dump(Path(path)):
        if raw.redirect is not None:
            continue
        page = parse_page(raw.title, raw.text)
        pages += 1
        mapped += page.mapped_fields
        unmapped += len(page.unmapped)
        dropped.update(reason for _, reason in page.dropped)
        for fact in page.facts:
            kind = relation_type(fact.relation)
            facts.append({"page": raw.title, "relation": fact.relation, "value": fact.value,
                          "value_type": fact.value_type, "template": fact.template, "field": fact.field,
                          "domain": kind.domain if kind else "", "range": kind.range if kind else "",
                          "line": raw_line(raw.text, fact.field)})
    total = mapped + unmapped + sum(dropped.values())
    return {"pages": pages, "facts": facts, "facts_per_page": round(len(facts) / pages, 2) if pages else 0.0,
            "mapped_fields": mapped, "dropped_fields": sum(dropped.values()), "unmapped_fields": unmapped,
            "dropped": dict(sorted(dropped.items())), "mapped_share": round(mapped / total, 4) if total else 0.0}


def sample_facts(facts: list[dict], n: int, seed: int) -> list[dict]:
    """``n`` facts chosen by blake2b of (seed, page, relation, value): the same sample on every machine,
    and a change of the reader that adds or drops a fact changes only that fact's place in it."""
    def key(position: int) -> tuple[bytes, int]:
        fact = facts[position]
        text = "\x1f".join((str(seed), fact["page"], fact["relation"], fact["value"]))
        return hashlib.blake2b(text.encode(), digest_size=8).digest(), position

    chosen = sorted(range(len(facts)), key=key)[:n]
    return [facts[position] for position in sorted(chosen)]


def raw_line(wikitext: str, field: str) -> str:
    """The first ``| key = ...`` line of ``wikitext`` whose key folds to ``field`` ("" when none)."""
    if not field:
        return ""
    pattern = re.compile(r"^[ \t]*\|?[ \t]*" + r"[ _]?".join(map(re.escape, field.split("_"))) + r"[ \t]*=.*$",
                         re.IGNORECASE | re.MULTILINE)
    match = pattern.search(wikitext)
    return match[0].strip()[:300] if match else ""
