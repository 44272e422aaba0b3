"""The records that flow through a build and out of a snapshot: raw pages in,
parsed pages out, the Arrow schemas of the snapshot's tables, and the facts and
search results a snapshot returns.

A source (synthetic world, XML dump, parquet) yields :class:`RawPage`; the
wikitext parser turns each article into a :class:`ParsedPage` (with its
:class:`ExtractedFact` list); the snapshot builder assigns dense doc ids and
writes the tables below, whose fact rows read back as :class:`Fact`. Keeping
the schemas and records here, in one place, is what lets every layer read a
snapshot the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import pyarrow as pa

__all__ = [
    "RawPage",
    "SkippedRow",
    "ParsedPage",
    "PreParsedPage",
    "ExtractedFact",
    "Fact",
    "SearchResult",
    "DOCS_SCHEMA",
    "SOURCE_HEAD_FIELD",
    "FACTS_SCHEMA",
    "LINKS_SCHEMA",
    "REDIRECTS_SCHEMA",
    "VALUE_TYPES",
]


@dataclass(frozen=True)
class RawPage:
    """One page of a source, before parsing.

    ``text`` is wikitext for dumps and the synthetic world, plaintext for
    parquet sources (``is_wikitext=False``). ``redirect`` is the target title
    when the page is a redirect. ``position`` says where the page came from
    (``"file:row N"`` for row corpora, ``"page N"`` for dumps) for error messages.
    ``source_id`` is the corpus's own id of the row (a dump's page id, a passage
    corpus's ``id`` / ``_id``), kept next to the dense doc id.
    """

    title: str
    text: str
    redirect: str | None = None
    url: str = ""
    is_wikitext: bool = True
    position: str = ""
    source_id: str = ""
    title_from_id: bool = False  # a row corpus row without a title: its title is its source id
    # wiki-18 rows: the row's ``contents`` before the passage text, as written (``"Title"\n``, quotes
    # kept), so Search-R1's /retrieve serves the corpus's own string; None when the source has none
    source_head: str | None = None
    script: str | None = None  # a Chinese Wikipedia page: the script to write it in (hans/hant, wikitext/variants.py)


@dataclass(frozen=True)
class SkippedRow:
    """A source row that cannot become a document, and why.

    Readers yield it in place of a :class:`RawPage`; the build counts it under
    ``reason`` (a short snake_case word such as ``empty_text`` or ``not_json``)
    or, with ``strict``, stops at the first one naming ``position`` and ``detail``.
    """

    reason: str
    position: str
    detail: str = ""


# Typed values of facts: an entity (the object is another document), a date
# (ISO ``YYYY-MM-DD``), a year, a number, or free text.
VALUE_TYPES = ("entity", "date", "year", "number", "text")


@dataclass(frozen=True)
class ExtractedFact:
    """A fact stated by a page, before titles are resolved to doc ids.

    ``relation`` is the relation the infobox mapping gives the field
    (``birth_date``, ``director``...; ``corpora/infobox_mapping.toml``). ``value`` is the plaintext value as shown on the page;
    ``object_title`` is the linked article for entity values; ``date`` is ISO
    ``YYYY-MM-DD`` (or ``YYYY`` for year values); ``number`` is a float.
    """

    relation: str
    value: str
    value_type: str
    object_title: str | None = None
    number: float | None = None
    date: str | None = None
    template: str = ""
    field: str = ""  # the infobox key the fact was read from (folded: "largest_city"); not stored in snapshots


class Fact(NamedTuple):
    """One fact of a snapshot's knowledge graph: row ``index`` of ``facts.parquet``.

    Ids are doc ids (``object == -1`` for literal values). Unlike
    :class:`ExtractedFact` (what one page states, before titles resolve to doc
    ids) it names documents by id. A named tuple: the cheapest immutable
    record to build for every fact of a large world.
    """

    index: int
    subject: int
    relation: str
    value: str
    value_type: str
    object: int
    number: float | None
    date: str | None
    template: str
    evidence: int

    @property
    def is_edge(self) -> bool:
        """True when the fact links two entities."""
        return self.object >= 0


@dataclass(frozen=True)
class SearchResult:
    """One search hit: ``doc_id``, ``title``, BM25 ``score``, a text ``snippet`` and
    ``source_id`` (the corpus's own id of the document, ``""`` when it has none)."""

    doc_id: int
    title: str
    score: float
    snippet: str
    source_id: str = ""


@dataclass
class ParsedPage:
    """An article after wikitext parsing: clean plaintext, links and facts."""

    title: str
    text: str
    url: str = ""
    source_id: str = ""
    kind: str = "article"  # "article" | "disambiguation" | "list"
    source_head: str | None = None  # RawPage.source_head, carried to the docs' ``source_head`` column
    links: list[str] = field(default_factory=list)
    facts: list[ExtractedFact] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    # infobox fields the mapping does not know: (``template|key``, cleaned text), kept as text only
    unmapped: list[tuple[str, str]] = field(default_factory=list)
    mapped_fields: int = 0  # infobox fields that gave at least one fact
    # the DBpedia class of the page's (first) infobox ("Country", "Person"; "" when none): the type an
    # entity fact pointing at this page must fit (corpora/graph/writer.py)
    entity_class: str = ""
    # mapped infobox fields whose values did not fit their relation: (``template|key``, reason)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    script: str | None = None  # a Chinese Wikipedia page: the script it was written in (RawPage.script)


@dataclass(frozen=True)
class PreParsedPage:
    """An article parsed where it was read (a Ray shard task): the build takes ``parsed`` as is.

    It stands in the page stream where its :class:`RawPage` was, so doc ids,
    duplicate handling and the tables come out exactly as when the build parses.
    """

    parsed: ParsedPage
    position: str = ""
    redirect = None  # an article, never a redirect


DOCS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.int32()),
        ("source_id", pa.string()),  # the corpus's own id ("" when it has none)
        ("title", pa.string()),
        ("url", pa.string()),
        ("kind", pa.string()),
        ("text", pa.large_string()),
        ("categories", pa.list_(pa.string())),
    ]
)
# Snapshots of wiki-18 rows (FlashRAG, Search-R1) add this column: a row's ``contents`` is
# ``source_head + text``, byte for byte (other snapshots keep DOCS_SCHEMA and their fingerprints).
SOURCE_HEAD_FIELD = pa.field("source_head", pa.string())

FACTS_SCHEMA = pa.schema(
    [
        ("subject", pa.int32()),  # doc id of the entity the fact is about
        ("relation", pa.string()),
        ("value", pa.string()),  # the value as written on the page (plaintext)
        ("value_type", pa.string()),  # one of VALUE_TYPES
        ("object", pa.int32()),  # doc id of the linked entity, -1 for literals
        ("number", pa.float64()),  # parsed number (null when not numeric)
        ("date", pa.string()),  # ISO date or year (null when not a date)
        ("template", pa.string()),  # infobox template the fact came from
        ("evidence", pa.int32()),  # doc id whose text states the fact
    ]
)

LINKS_SCHEMA = pa.schema([("source", pa.int32()), ("target", pa.int32())])

REDIRECTS_SCHEMA = pa.schema([("alias", pa.string()), ("doc_id", pa.int32())])
