"""A snapshot in shards: a manifest that lists shard snapshots, opened and searched as one (issue 48).

A sharded snapshot is a directory holding::

    manifest.json        format "stillweb-sharded/2": the shards in order (their folder, documents,
                         first global doc id, fingerprint), summed counts, the search parameters
    index/               meta.json naming every shard's tantivy segments, and links to their files:
                         one tantivy index over all the shards
    facts.parquet        the shards' graph tables with global doc ids (empty for row corpora)
    links.parquet, redirects.parquet
    shard-0000/ ...      each a snapshot folder (``stillweb verify`` checks it alone) whose index holds
                         its documents under their global doc ids (from ``first_doc_id``), and whose
                         impact postings (format 6) are scored with the whole collection's statistics

Doc ids are global, dense and stable: a shard's documents are numbered from the shard's first doc id,
in source order, as one build of the same rows numbers them. :meth:`~stillweb.corpora.snapshot.reading.Snapshot.open`
opens it like any snapshot: documents are the shards' memory-mapped ``docs.arrow`` tables end to end
(row = doc id). Over ``index/`` tantivy sums every segment's document frequencies, document counts and
token counts: the statistics of the whole collection, which each shard's impact postings are scored
with once every shard is written (:class:`CollectionStatistics`). A query asks each shard for its top k
(pruned, over its own postings) and the hits merge by ``(-score, doc_id)``
(:mod:`stillweb.corpora.search.shards`): the unsharded build's results, to the bit. Spread over Ray
nodes, actors hold runs of shards (:mod:`stillweb.corpora.search.shard_actors`). A format /1 sharded
snapshot (shards without impact postings) is searched by tantivy over ``index/``. The fingerprint hashes
the format, the search parameters and the shards' fingerprints in order.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import tantivy
import pyarrow.compute as pc
import pyarrow.parquet as pq

from stillweb.corpora.build.bounded import DigestSet, digest
from stillweb.corpora.search.index import SearchIndex
from stillweb.corpora.search.shards import LocalGroup, ShardedIndex, shard_index, whole_parameters
from stillweb.corpora.snapshot.manifest import (SHARDED_FORMAT, SHARDED_FORMATS, SnapshotError, check_table_footers, damaged, file_hashes,
                                                read_manifest, write_manifest_as_is)

__all__ = ["ShardPlace", "TitleHashes", "SeenTitles", "CollectionStatistics", "write_union_index", "SHARD_FOLDER", "GLOBAL_STATISTICS", "is_sharded", "check_not_a_shard", "sharded_fingerprint",
           "write_sharded_manifest", "shard_paths", "open_docs", "open_search_index", "open_sharded_index"]

SHARD_FOLDER = "shard-{:04d}"
GLOBAL_STATISTICS = "global: one tantivy index over every shard's segments"
# The graph tables and their doc id columns (-1: no document, kept as it is).
GRAPH_TABLES = {"facts.parquet": ("subject", "object", "evidence"), "links.parquet": ("source", "target"),
                "redirects.parquet": ("doc_id",)}
_NEEDED = ("docs.arrow", "facts.parquet", "redirects.parquet", "index/meta.json")
_PLACE_KEYS = ("first_doc_id", "titles_before", "segments", "impacts")
SHARD_IMPACTS = "each shard's, scored with the collection's statistics (search/shards.py)"
_KEY, _SUFFIX = "S17", b"\x01"  # a 16-byte digest and a byte numpy keeps (it drops trailing NULs; bounded.py does the same)  # a shard's own, in its index parameters


class TitleHashes:
    """A set of titles kept as their sorted 16-byte digests (:func:`~stillweb.corpora.build.bounded.digest`,
    as the index builder keeps the titles it gave a title field): the titles of earlier shards.

    >>> seen = TitleHashes.of(["Osk", "Lunor Bay"]) | TitleHashes.of(["Osk"])
    >>> len(seen), digest("Osk", 16) in seen, digest("Vell", 16) in seen
    (2, True, False)
    """

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = np.unique(np.asarray(keys, dtype=_KEY))

    @classmethod
    def of(cls, titles: Iterable[str]) -> "TitleHashes":
        return cls(np.array([digest(title, 16) + _SUFFIX for title in titles], dtype=_KEY))

    def __contains__(self, key: bytes) -> bool:
        key += _SUFFIX
        found = int(self.keys.searchsorted(key))
        return found < len(self.keys) and self.keys[found] == key

    def __or__(self, other: "TitleHashes") -> "TitleHashes":
        return TitleHashes(np.concatenate([self.keys, other.keys]))

    def __len__(self) -> int:
        return len(self.keys)

    def digest(self) -> str:
        return hashlib.sha256(self.keys.tobytes()).hexdigest()


class SeenTitles(DigestSet):
    """An index builder's titles given a title field (``IndexBuilder(title_once=...)``) in a shard: the
    earlier shards' titles count as given."""

    def __init__(self, before: TitleHashes) -> None:
        super().__init__(16)
        self.before = before

    def add(self, key: bytes) -> bool:
        return key not in self.before and super().add(key)


@dataclass(frozen=True)
class ShardPlace:
    """Where one shard goes in a sharded snapshot: its units of reading (row corpora:
    ``CorpusSpec.shards``), its first global doc id, and the titles of the shards before it (a title's
    first passage, the one with the title field, may be in an earlier shard)."""

    units: tuple = ()
    first_doc_id: int = 0
    titles_before: TitleHashes = field(default_factory=lambda: TitleHashes(np.empty(0, dtype=_KEY)))

    def seen_titles(self) -> SeenTitles:
        """The titles given a title field, for the shard's index builder (``title_once``)."""
        return SeenTitles(self.titles_before)

    def index_parameters(self) -> dict:
        """What the shard's index records of its place (so its fingerprint says it): nothing for the first."""
        if not self.first_doc_id and not len(self.titles_before):
            return {}
        return {"first_doc_id": self.first_doc_id,
                "titles_before": {"titles": len(self.titles_before), "sha256": self.titles_before.digest()}}


def is_sharded(manifest: dict) -> bool:
    """Whether ``manifest`` is a sharded snapshot's."""
    return manifest.get("format") in SHARDED_FORMATS


def check_not_a_shard(path: Path, manifest: dict) -> None:
    """:class:`SnapshotError` for a shard (after the first) opened alone: its index numbers documents
    from its first global doc id, which only the sharded snapshot above it reads."""
    first = (manifest.get("index") or {}).get("first_doc_id")
    if first:
        raise SnapshotError(f"{path} is a shard of a sharded snapshot (its documents are doc ids {first} on): "
                            f"open the sharded snapshot, {path.parent}")


def sharded_fingerprint(index: dict, shard_fingerprints: list[str]) -> str:
    """The fingerprint of shards searched as one: format, search parameters, shard fingerprints in order."""
    digest = hashlib.sha256(SHARDED_FORMAT.encode())
    digest.update(json.dumps(index, sort_keys=True).encode())
    for fingerprint in shard_fingerprints:
        digest.update(fingerprint.encode())
    return digest.hexdigest()


def write_sharded_manifest(directory: Path, shard_folders: list[str], extra: dict) -> dict:
    """Write the graph tables (doc ids moved to global ones) and ``manifest.json`` of the sharded snapshot
    at ``directory`` whose shards, in order, are the snapshots in ``shard_folders``, each built with its
    :class:`ShardPlace` (and ``index/``, :func:`write_union_index`, written before).

    ``extra``: more manifest keys (``name``, ``source``, ``parameters``, ``package_version``). The counts
    of the shards are summed (``docs``, ``rows``); every shard must be indexed alike."""
    manifests = [read_manifest(directory / folder) for folder in shard_folders]
    shards, first = [], 0
    for folder, manifest in zip(shard_folders, manifests):
        if manifest["index"].get("first_doc_id", 0) != first:
            raise SnapshotError(f"shard {folder} numbers its documents from {manifest['index'].get('first_doc_id', 0)}, "
                                f"not {first} (the documents of the shards before it)")
        shards.append({"path": folder, "docs": manifest["counts"]["docs"], "first_doc_id": first,
                       "fingerprint": manifest["fingerprint"]})
        first += manifest["counts"]["docs"]
    index = _common_index_parameters(shard_folders, manifests)
    for name, columns in GRAPH_TABLES.items():
        _write_global_table(directory, name, columns, shards)
    manifest = dict(extra, format=SHARDED_FORMAT, shards=shards, index=index,
                    counts={"docs": first, "shards": len(shards), "rows": _summed_rows([m["counts"]["rows"] for m in manifests])},
                    fingerprint=sharded_fingerprint(index, [shard["fingerprint"] for shard in shards]),
                    files={name: hash for name, hash in file_hashes(directory).items()
                           if "/" not in name or name == "index/meta.json"})
    return write_manifest_as_is(directory, manifest)


def _common_index_parameters(folders: list[str], manifests: list[dict]) -> dict:
    common = [{key: value for key, value in manifest["index"].items() if key not in _PLACE_KEYS} for manifest in manifests]
    for folder, parameters in zip(folders, common):
        if parameters != common[0]:
            raise SnapshotError(f"shard {folder} is indexed unlike {folders[0]}: shards must share index parameters")
    impacts = {bool(manifest["index"].get("impacts")) for manifest in manifests}
    if len(impacts) > 1:
        raise SnapshotError(f"some shards of {folders} have impact postings and some have none: add them to every shard")
    return dict(common[0], shards=len(folders), statistics=GLOBAL_STATISTICS, **({"impacts": SHARD_IMPACTS} if impacts == {True} else {}))


def write_union_index(directory: Path, folders: list[str]) -> None:
    """``index/``: a tantivy ``meta.json`` listing every shard's segments in shard order, and relative
    links to their files (tantivy opens a segment by its files' names in the index folder)."""
    union = directory / "index"
    union.mkdir()
    meta = None
    for folder in folders:
        shard_meta = json.loads((directory / folder / "index" / "meta.json").read_text(encoding="utf-8"))
        if meta is None:
            meta = dict(shard_meta, segments=[])
        meta["segments"] += shard_meta["segments"]
        meta["opstamp"] = max(meta.get("opstamp", 0), shard_meta.get("opstamp", 0))
        for segment in shard_meta["segments"]:
            stem = segment["segment_id"].replace("-", "")
            for file in sorted((directory / folder / "index").glob(f"{stem}.*")):
                os.symlink(Path("..") / folder / "index" / file.name, union / file.name)
    (union / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def _write_global_table(directory: Path, name: str, columns: tuple[str, ...], shards: list[dict]) -> None:
    """``name`` of every shard, in shard order, each doc id column moved by the shard's first doc id."""
    tables = []
    for shard in shards:
        table = pq.read_table(directory / shard["path"] / name)
        for column in columns:
            values = table.column(column)
            moved = pc.if_else(pc.greater_equal(values, 0), pc.add(values, pa.scalar(shard["first_doc_id"], values.type)), values)
            table = table.set_column(table.schema.get_field_index(column), column, moved)
        tables.append(table)
    pq.write_table(pa.concat_tables(tables), directory / name, compression="zstd")


def _summed_rows(accounts: list[dict]) -> dict:
    """The row accounts of the shards as one: counts summed, the first examples of each reason kept."""
    total = dict(accounts[0], skipped={}, skipped_examples={})
    for key in ("read", "written", "redirects", "missing_title"):
        total[key] = sum(account.get(key, 0) for account in accounts)
    for account in accounts:
        for reason, count in account.get("skipped", {}).items():
            total["skipped"][reason] = total["skipped"].get(reason, 0) + count
        for reason, examples in account.get("skipped_examples", {}).items():
            kept = total["skipped_examples"].setdefault(reason, [])
            kept.extend(examples[: max(0, 5 - len(kept))])
    total["skipped"] = dict(sorted(total["skipped"].items()))
    total["skipped_examples"] = dict(sorted(total["skipped_examples"].items()))
    return total


def shard_paths(path: Path, manifest: dict) -> list[Path]:
    """The shard folders of the sharded snapshot at ``path``; :class:`SnapshotError` naming a file
    missing or a damaged table."""
    for name in ("facts.parquet", "redirects.parquet", "index/meta.json"):
        if not (path / name).is_file():
            raise SnapshotError(f"snapshot {path} is incomplete: missing {name}")
    folders = [path / shard["path"] for shard in manifest["shards"]]
    for folder in folders:
        read_manifest(folder)
        for name in _NEEDED:
            if not (folder / name).is_file():
                raise SnapshotError(f"snapshot {path} is incomplete: missing {folder.name}/{name}")
        check_table_footers(folder)
    return folders


def open_docs(paths: list[Path]) -> pa.Table:
    """The ``docs.arrow`` tables of ``paths``, memory-mapped, end to end (no copy)."""
    tables = []
    for path in paths:
        try:
            tables.append(pa.ipc.open_file(pa.memory_map(str(path / "docs.arrow"), "r")).read_all())
        except (OSError, pa.ArrowException) as error:
            raise damaged(path / "docs.arrow", error) from None
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def open_search_index(folder: Path, parameters: dict, snapshot: Path) -> SearchIndex:
    """The index of the snapshot at ``folder`` (``index/``), searched as ``parameters`` say; a
    :class:`SnapshotError` that says how to find what is damaged in ``snapshot``."""
    try:
        return SearchIndex(folder / "index", parameters)
    except (OSError, ValueError) as error:
        raise SnapshotError(f"cannot open the search index {folder / 'index'}: {error} (damaged or truncated; "
                            f"`stillweb verify {snapshot}` lists every damaged file; rebuild the snapshot)") from None


def open_sharded_index(path: Path, manifest: dict) -> SearchIndex | ShardedIndex:
    """The sharded snapshot's search: through its shard actors when this process is connected to a Ray
    cluster where they run (:func:`~stillweb.corpora.search.shard_actors.serve_shards`), else here: every
    shard's impact postings, merged (``index.impacts``), or tantivy over every shard's segments."""
    whole = open_search_index(path, whole_parameters(manifest), path)
    ray = sys.modules.get("ray")  # never imported here: a process without Ray searches its shards itself
    if ray is not None and ray.is_initialized():
        from stillweb.corpora.search.shard_actors import running_shard_groups

        groups = running_shard_groups(manifest["fingerprint"])
        if groups:
            return ShardedIndex(groups, whole)
    if not manifest["index"].get("impacts"):
        return whole
    return ShardedIndex([LocalGroup(shard_index(path, manifest, shard)) for shard in manifest["shards"]], whole)


class CollectionStatistics:
    """A sharded snapshot's BM25 statistics as tantivy scores ``index/`` (every shard's segments), for the
    impact postings of a shard (:func:`~stillweb.corpora.search.impacts_build.build_impacts`): a term's
    document frequency, the documents, a field's average length (tantivy's own float32, read from its
    explanation of a match) and, for the title fields, the titles of the shards before it."""

    def __init__(self, path: Path, titles_before: TitleHashes) -> None:
        self._index = tantivy.Index.open(str(path / "index"))
        self._searcher = self._index.searcher()
        self.documents = self._searcher.num_docs
        self._titles_before = titles_before

    def doc_freqs(self, keys: list[bytes]) -> np.ndarray:
        found = np.empty(len(keys), dtype=np.int64)
        for number, key in enumerate(keys):
            found[number] = self._searcher.doc_freq(*key.decode("utf-8").split("\x00", 1))
        return found

    def average_length(self, key: bytes) -> np.float32:
        field, term = key.decode("utf-8").split("\x00", 1)
        query = tantivy.Query.term_query(self._index.schema, field, term)
        explained = [json.loads(query.explain(self._searcher, self._searcher.search(query, 1).hits[0][1]).to_json())]
        while explained:
            node = explained.pop()
            if node.get("description", "").startswith("avgdl,"):
                return np.float32(node["value"])  # serde's shortest float32 text: the same float32
            explained.extend(node.get("details", []))
        raise SnapshotError(f"tantivy's explanation of {field}:{term} has no average length")

    def seen_titles(self) -> SeenTitles:
        return SeenTitles(self._titles_before)
