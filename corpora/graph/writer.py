"""The hyperlink graph, the facts and the redirects of a snapshot being built.

Links and facts name their targets by title, and a title can only be turned
into a doc id once every article has been seen. :class:`GraphWriter` therefore
spills them, and each page's title with its first doc id, to temporary Parquet
files as pages arrive, and resolves all titles at the end with Arrow's vectorised
``index_in`` against the title column, so a build's memory holds neither every
link nor every title of the corpus (issue 48); a corpus with nothing to resolve
(a row corpus: no links, facts or redirects) never reads its titles back.

An entity fact whose object page is of a class its relation's range contradicts (a country where
a city is expected: ``capital`` -> a page with ``{{Infobox country}}``) is dropped when titles
resolve, and counted per relation (``object_type_mismatch``); an object of unknown or more general
class stays (:func:`~stillweb.corpora.wikitext.ontology.compatible`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from stillweb.corpora.snapshot.records import FACTS_SCHEMA, LINKS_SCHEMA, REDIRECTS_SCHEMA, ParsedPage
from stillweb.corpora.wikitext.ontology import compatible, relation_type

__all__ = ["GraphWriter", "MAX_REDIRECT_HOPS"]

MAX_REDIRECT_HOPS = 5
_SPILL_ROWS = 65_536
_TITLES = pa.schema([("doc_id", pa.int64()), ("title", pa.string())])
_RAW_LINKS = pa.schema([("source", pa.int32()), ("target_title", pa.string())])
_RAW_FACTS = pa.schema([field for field in FACTS_SCHEMA if field.name != "object"] + [("object_title", pa.string())])


class _Spill:
    """Rows appended in memory and flushed to a Parquet file in fixed-size batches."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = path
        self.schema = schema
        self.rows = 0
        self._writer = pq.ParquetWriter(path, schema)
        self._columns: dict[str, list] = {name: [] for name in schema.names}

    def append(self, values: tuple) -> None:
        for column, value in zip(self._columns.values(), values):
            column.append(value)
        self.rows += 1
        if len(self._columns[self.schema.names[0]]) >= _SPILL_ROWS:
            self.flush()

    def flush(self) -> None:
        if self._columns[self.schema.names[0]]:
            self._writer.write_batch(pa.RecordBatch.from_pydict(self._columns, schema=self.schema))
            self._columns = {name: [] for name in self.schema.names}

    def close(self) -> None:
        self.flush()
        self._writer.close()

    def batches(self):
        return pq.ParquetFile(self.path).iter_batches(batch_size=_SPILL_ROWS)


class GraphWriter:
    """Collects links, facts and redirects during a build; writes the resolved tables at the end."""

    def __init__(self, spill_dir: Path) -> None:
        spill_dir.mkdir(parents=True, exist_ok=True)
        self._spill_dir = spill_dir
        self._links = _Spill(spill_dir / "links.parquet", _RAW_LINKS)
        self._facts = _Spill(spill_dir / "facts.parquet", _RAW_FACTS)
        self._titles = _Spill(spill_dir / "titles.parquet", _TITLES)  # (first doc id, title) of each page
        self._redirects: dict[str, str] = {}
        self._classes: dict[int, str] = {}  # doc id -> the DBpedia class of its infobox

    def add_redirect(self, alias: str, target: str) -> None:
        """Record that ``alias`` redirects to ``target`` (both normalized titles; the first wins)."""
        self._redirects.setdefault(alias, target)

    def add_page(self, doc_id: int, page: ParsedPage) -> None:
        """Record the title, links and facts of the article whose (first) document is ``doc_id``; pages come in
        doc id order."""
        self._titles.append((doc_id, page.title))
        if page.entity_class:
            self._classes[doc_id] = page.entity_class
        for target in page.links:
            self._links.append((doc_id, target))
        for fact in page.facts:
            self._facts.append((doc_id, fact.relation, fact.value, fact.value_type, fact.number, fact.date,
                                fact.template, doc_id, fact.object_title))

    def finish(self, out: Path) -> dict[str, int]:
        """Resolve titles (a title stands for the first doc that has it), write links, facts and redirects;
        return counts."""
        for spill in (self._links, self._facts, self._titles):
            spill.close()
        if self._links.rows or self._facts.rows or self._redirects:
            titles = pq.read_table(self._titles.path)
            names = pa.array(sorted(set(self._redirects) | set(self._redirects.values())), pa.string())
            resolver = _TitleResolver(titles.column("title").combine_chunks(), titles.column("doc_id").to_numpy(), {})
            found = resolver.resolve(names)
            title_ids = {name: int(doc) for name, doc in zip(names.to_pylist(), found) if doc >= 0}
            aliases = _resolve_redirects(self._redirects, title_ids)
            resolver = _TitleResolver(resolver.titles, resolver.doc_ids, aliases)
        else:
            aliases, resolver = {}, None

        keys = [np.empty(0, dtype=np.int64)]
        for batch in self._links.batches():
            source = batch.column("source").to_numpy().astype(np.int64)
            target = resolver.resolve(batch.column("target_title"))
            keep = (target >= 0) & (target != source)
            keys.append((source[keep] << 32) | target[keep])
        unique = np.unique(np.concatenate(keys))  # sorted by (source, target), duplicates dropped
        links = pa.table({"source": (unique >> 32).astype(np.int32), "target": (unique & 0xFFFFFFFF).astype(np.int32)},
                         schema=LINKS_SCHEMA)
        pq.write_table(links, out / "links.parquet", compression="zstd")

        entity_facts = written = 0
        mismatches: dict[str, int] = {}
        with pq.ParquetWriter(out / "facts.parquet", FACTS_SCHEMA, compression="zstd") as writer:
            for batch in self._facts.batches():
                objects = resolver.resolve(batch.column("object_title")).astype(np.int32)
                keep = self._fits(batch.column("relation").to_pylist(), objects, mismatches)
                entity_facts += int((objects[keep] >= 0).sum())
                written += int(keep.sum())
                columns = {name: batch.column(name).filter(pa.array(keep)) for name in FACTS_SCHEMA.names
                           if name != "object"}
                columns["object"] = pa.array(objects[keep], pa.int32())
                writer.write_table(pa.table({name: columns[name] for name in FACTS_SCHEMA.names}, schema=FACTS_SCHEMA))

        redirects = pa.table({"alias": list(aliases), "doc_id": list(aliases.values())}, schema=REDIRECTS_SCHEMA)
        pq.write_table(redirects, out / "redirects.parquet", compression="zstd")
        counts = {"links": links.num_rows, "facts": written, "redirects": len(aliases), "entity_facts": entity_facts}
        if mismatches:
            counts["object_type_mismatch"] = dict(sorted(mismatches.items()))
        return counts

    def _fits(self, relations: list[str], objects: np.ndarray, mismatches: dict[str, int]) -> np.ndarray:
        """Which facts to keep: all but those whose object page's class contradicts the relation's range."""
        keep = np.ones(len(relations), dtype=bool)
        verdicts: dict[tuple[str, str], bool] = {}
        for row in np.flatnonzero(objects >= 0):
            found = self._classes.get(int(objects[row]), "")
            if not found:
                continue
            relation = relations[row]
            key = (relation, found)
            if key not in verdicts:
                kind = relation_type(relation)
                verdicts[key] = kind is None or not kind.is_entity or compatible(found, kind.range)
            if not verdicts[key]:
                keep[row] = False
                mismatches[relation] = mismatches.get(relation, 0) + 1
        return keep


class _TitleResolver:
    """Titles to doc ids, vectorised: exact titles first (``titles[i]`` is doc ``doc_ids[i]``; the first of a
    repeated title), then redirect aliases; -1 when unknown."""

    def __init__(self, titles: pa.Array, doc_ids: np.ndarray, aliases: dict[str, int]) -> None:
        self.titles, self.doc_ids = titles, doc_ids.astype(np.int64)
        self._alias_keys = pa.array(list(aliases), pa.string())
        self._alias_ids = np.array(list(aliases.values()), dtype=np.int64)

    def resolve(self, names: pa.Array) -> np.ndarray:
        positions = _positions(names, self.titles)
        ids = np.where(positions >= 0, self.doc_ids[np.maximum(positions, 0)], -1)
        missing = ids < 0
        if missing.any() and len(self._alias_keys):
            positions = _positions(names.filter(pa.array(missing)), self._alias_keys)
            ids[missing] = np.where(positions >= 0, self._alias_ids[np.maximum(positions, 0)], -1)
        return ids


def _positions(names: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Position of each name in ``value_set`` (its first occurrence), -1 where absent or null."""
    return pc.fill_null(pc.index_in(names, value_set=value_set), -1).to_numpy().astype(np.int64)


def _resolve_redirects(redirects: dict[str, str], title_ids: dict[str, int]) -> dict[str, int]:
    """Alias -> doc id, following redirect chains (up to ``MAX_REDIRECT_HOPS``); broken ones are dropped."""
    resolved: dict[str, int] = {}
    for alias in sorted(redirects):
        if alias in title_ids:
            continue
        target: str | None = redirects[alias]
        for _ in range(MAX_REDIRECT_HOPS):
            if target in title_ids:
                resolved[alias] = title_ids[target]
                break
            target = redirects.get(target)
            if target is None:
                break
    return resolved
