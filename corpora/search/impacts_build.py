"""Writing a snapshot's impact postings (``index/impacts``, read by :mod:`stillweb.corpora.search.impacts`).

After the tantivy index is written, the snapshot's documents are read back from ``docs.parquet``
and indexed again, as the same units with the same field texts (:func:`~stillweb.corpora.search.index.document_fields`,
:func:`~stillweb.corpora.search.page_ranking.page_units`) and the same analyzers, in worker processes
a chunk at a time (single-pass in-memory indexing, spilling each chunk's sorted postings to disk:
Heinz and Zobel's SPIMI, "Efficient single-pass index construction for text databases", 2003).
The chunks are merged list by list in slices of at most :data:`_MERGE_POSTINGS` postings, each
posting scored with tantivy's BM25 (its field norms and averages, ``bm25.rs``), so memory stays
bounded by a slice, the vocabulary and one byte per unit and field.

Every output is a function of the documents and the parameters: units in doc_id order, lists
numbered by first appearance, the vocabulary sorted by bytes; a two-process test checks the bytes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow.parquet as pq

from stillweb.corpora.build.bounded import DigestSet, digest
from stillweb.corpora.processes import ignore_interrupts, process_context
from stillweb.corpora.search.analyzers import analyzer_from_parameters
from stillweb.corpora.search.impacts import BLOCK, IMPACTS_FORMAT, IMPACTS_DIR, bm25_idf, term_key
from stillweb.corpora.search.page_ranking import page_units

__all__ = ["build_impacts", "FIELD_NORMS_TABLE"]

_CHUNK_DOCS = 8192
_MERGE_POSTINGS = 4_000_000
_BASIC_FIELDS = ("body_terms", "title_exact")  # tantivy's "basic" option: no frequencies, every match counts once
_RAW_FIELDS = ("title_exact",)  # tantivy's raw tokenizer: the whole value is one term
K1, B = np.float32(1.2), np.float32(0.75)
# tantivy's field norm codes (fieldnorm/code.rs): lengths up to 40 exactly, then a geometric-like scale.
FIELD_NORMS_TABLE = np.array(
    list(range(41)) + [42, 44, 46, 48, 50, 52, 54, 56, 60, 64, 68, 72, 76, 80, 84, 88, 96, 104, 112, 120, 128, 136,
                       144, 152, 168, 184, 200, 216, 232, 248, 264, 280, 312, 344, 376, 408, 440, 472, 504, 536, 600,
                       664, 728, 792, 856, 920, 984, 1_048, 1_176, 1_304, 1_432, 1_560, 1_688, 1_816, 1_944, 2_072,
                       2_328, 2_584, 2_840, 3_096, 3_352, 3_608, 3_864, 4_120, 4_632, 5_144, 5_656, 6_168, 6_680,
                       7_192, 7_704, 8_216, 9_240, 10_264, 11_288, 12_312, 13_336, 14_360, 15_384, 16_408, 18_456,
                       20_504, 22_552, 24_600, 26_648, 28_696, 30_744, 32_792, 36_888, 40_984, 45_080, 49_176, 53_272,
                       57_368, 61_464, 65_560, 73_752, 81_944, 90_136, 98_328, 106_520, 114_712, 122_904, 131_096,
                       147_480, 163_864, 180_248, 196_632, 213_016, 229_400, 245_784, 262_168, 294_936, 327_704,
                       360_472, 393_240, 426_008, 458_776, 491_544, 524_312, 589_848, 655_384, 720_920, 786_456,
                       851_992, 917_528, 983_064, 1_048_600, 1_179_672, 1_310_744, 1_441_816, 1_572_888, 1_703_960,
                       1_835_032, 1_966_104, 2_097_176, 2_359_320, 2_621_464, 2_883_608, 3_145_752, 3_407_896,
                       3_670_040, 3_932_184, 4_194_328, 4_718_616, 5_242_904, 5_767_192, 6_291_480, 6_815_768,
                       7_340_056, 7_864_344, 8_388_632, 9_437_208, 10_485_784, 11_534_360, 12_582_936, 13_631_512,
                       14_680_088, 15_728_664, 16_777_240, 18_874_392, 20_971_544, 23_068_696, 25_165_848,
                       27_263_000, 29_360_152, 31_457_304, 33_554_456, 37_748_760, 41_943_064, 46_137_368,
                       50_331_672, 54_525_976, 58_720_280, 62_914_584, 67_108_888, 75_497_496, 83_886_104,
                       92_274_712, 100_663_320, 109_051_928, 117_440_536, 125_829_144, 134_217_752, 150_994_968,
                       167_772_184, 184_549_400, 201_326_616, 218_103_832, 234_881_048, 251_658_264, 268_435_480,
                       301_989_912, 335_544_344, 369_098_776, 402_653_208, 436_207_640, 469_762_072, 503_316_504,
                       536_870_936, 603_979_800, 671_088_664, 738_197_528, 805_306_392, 872_415_256, 939_524_120,
                       1_006_632_984, 1_073_741_848, 1_207_959_576, 1_342_177_304, 1_476_395_032, 1_610_612_760,
                       1_744_830_488, 1_879_048_216, 2_013_265_944], dtype=np.int64)


def build_impacts(snapshot: Path, parameters: dict, workers: int = 1, collection: Collection | None = None) -> dict:
    """Write ``snapshot/index/impacts`` for the documents in ``snapshot/docs.parquet`` indexed as
    ``parameters`` (the manifest's ``index``) say; returns what the manifest records of it.

    ``collection``: the snapshot is a shard of a larger collection (snapshot/sharded.py), whose statistics
    its scores use (document frequencies, documents, average field lengths) and whose earlier shards'
    titles have had their title field."""
    out = snapshot / "index" / IMPACTS_DIR
    shutil.rmtree(out, ignore_errors=True)
    spill = out / ".spill"
    spill.mkdir(parents=True)
    state = _Merge(spill)
    chunks = _chunks(snapshot / "docs.parquet", parameters, collection.seen_titles() if collection else DigestSet(16))
    pool = process_context().Pool(workers, initializer=ignore_interrupts) if workers > 1 else None
    try:
        for result in (pool.imap(_index_chunk, chunks) if pool is not None else map(_index_chunk, chunks)):
            state.add(result)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    meta = state.finish(out, collection)
    shutil.rmtree(spill)
    return meta


class Collection(Protocol):
    """The statistics of the collection a shard's impacts score with (:func:`build_impacts`)."""

    documents: int

    def doc_freqs(self, keys: list[bytes]) -> np.ndarray: ...

    def average_length(self, key: bytes) -> np.float32: ...

    def seen_titles(self) -> DigestSet: ...


def _chunks(docs: Path, parameters: dict, seen: DigestSet) -> Iterator[tuple]:
    """``(parameters, doc_ids, titles, texts, first_of_title)`` for each run of documents, in doc_id order
    (``seen``: the titles had before, as the index builder keeps them)."""
    table = pq.ParquetFile(docs)
    for batch in table.iter_batches(batch_size=_CHUNK_DOCS, columns=["doc_id", "title", "text"]):
        titles = batch.column(1).to_pylist()
        first = [seen.add(digest(title, 16)) for title in titles]
        yield parameters, batch.column(0).to_numpy(), titles, batch.column(2).to_pylist(), first


def _index_chunk(chunk: tuple) -> tuple:
    """One chunk's units and sorted postings (a worker's part): see :meth:`_Merge.add`."""
    from stillweb.corpora.search.index import INDEX_PARAMETERS, TITLE_FIRST_PASSAGE, _shared_analyzer, document_fields

    parameters, doc_ids, titles, texts, first = chunk
    analyzer = analyzer_from_parameters(parameters)
    english = _shared_analyzer(parameters.get("tokenizer", INDEX_PARAMETERS["tokenizer"]))
    words = parameters.get("passage_words")
    units: list[dict[str, str]] = []
    unit_docs, unit_starts = [], []
    for doc_id, title, text, first_one in zip(doc_ids.tolist(), titles, texts, first):
        if words:
            for start, fields in page_units(title, text, words):
                units.append(fields)
                unit_docs.append(doc_id)
                unit_starts.append(start)
        else:
            with_title = first_one or parameters.get("title") != TITLE_FIRST_PASSAGE
            units.append(document_fields(title, text, parameters.get("body") == "title, newline, text", with_title, analyzer))
    fields_out = {}
    for field in parameters["fields"] + (["title_exact"] if parameters.get("title_exact") else []):
        vocabulary: dict[str, int] = {}
        ids: list[int] = []
        lengths = np.zeros(len(units), dtype=np.int64)
        for number, fields in enumerate(units):
            value = fields.get(field)
            if value is None:
                continue
            if field in _RAW_FIELDS:
                terms = [value]
            elif analyzer is not None:
                terms = value.split()
            else:
                terms = english.analyze(value)
            lengths[number] = len(terms)
            ids.extend([vocabulary.setdefault(term, len(vocabulary)) for term in terms])
        unit_of = np.repeat(np.arange(len(units), dtype=np.int64), lengths)
        keys, counts = np.unique(np.asarray(ids, dtype=np.int64) * len(units) + unit_of, return_counts=True)
        tf = np.ones_like(counts) if field in _BASIC_FIELDS else counts
        fields_out[field] = ([term_key(field, term) for term in vocabulary], (keys // len(units)).astype(np.int32), (keys % len(units)).astype(np.int32),
                             tf.astype(np.int32), lengths)
    pages = (np.asarray(unit_docs, dtype=np.int32), np.asarray(unit_starts, dtype=np.int64)) if words else None
    return len(units), fields_out, pages


class _Merge:
    """The running state of a build: the vocabulary, document frequencies, field lengths, spilled chunks."""

    def __init__(self, spill: Path) -> None:
        self.spill = spill
        self.vocabulary: dict[bytes, int] = {}
        self.list_field: list[int] = []
        self.fields: list[str] = []
        self.df = np.zeros(0, dtype=np.int64)
        self.norms: dict[str, list[np.ndarray]] = {}
        self.tokens: dict[str, int] = {}
        self.units = 0
        self.chunks: list[tuple[np.ndarray, np.ndarray, int]] = []  # lists, their counts, first row
        self.rows = 0
        self.page_docs: list[np.ndarray] = []
        self.page_starts: list[np.ndarray] = []
        self._files = {name: open(spill / name, "wb") for name in ("lists", "units", "tf")}

    def add(self, result: tuple) -> None:
        count, fields, pages = result
        parts = []
        for field, (terms, local, units, tf, lengths) in fields.items():  # terms: their vocabulary keys
            if field not in self.norms:
                self.fields.append(field)
                self.norms[field], self.tokens[field] = [np.zeros(self.units, dtype=np.uint8)], 0
            number = self.fields.index(field)
            get = self.vocabulary.get
            numbers = [get(key, -1) for key in terms]
            for position in [position for position, found in enumerate(numbers) if found < 0]:
                numbers[position] = self.vocabulary[terms[position]] = len(self.vocabulary)
                self.list_field.append(number)
            numbers = np.asarray(numbers, dtype=np.int64)
            parts.append((numbers[local], units.astype(np.int64) + self.units, tf))
            self.norms[field].append((np.searchsorted(FIELD_NORMS_TABLE, lengths, side="right") - 1).astype(np.uint8))
            self.tokens[field] += int(lengths.sum())
        for field in self.fields:
            if field not in fields:
                self.norms[field].append(np.zeros(count, dtype=np.uint8))
        lists = np.concatenate([part[0] for part in parts])
        order = np.argsort(lists, kind="stable")  # units stay ascending within a list
        lists = lists[order]
        present, counts = np.unique(lists, return_counts=True)
        if len(self.df) < len(self.vocabulary):
            self.df = np.concatenate([self.df, np.zeros(len(self.vocabulary) - len(self.df), dtype=np.int64)])
        self.df[present] += counts
        self.chunks.append((present, counts, self.rows))
        self.rows += len(lists)
        self._files["lists"].write(lists.astype(np.int32).tobytes())
        self._files["units"].write(np.concatenate([part[1] for part in parts])[order].astype(np.int32).tobytes())
        self._files["tf"].write(np.concatenate([part[2] for part in parts])[order].astype(np.float32).tobytes())
        if pages is not None:
            self.page_docs.append(pages[0])
            self.page_starts.append(pages[1])
        self.units += count

    def finish(self, out: Path, collection: Collection | None = None) -> dict:
        for handle in self._files.values():
            handle.close()
        n = self.units
        keys = sorted(self.vocabulary)
        fields_meta, caches, norms = {}, [], []
        for number, field in enumerate(self.fields):
            norms.append(np.concatenate(self.norms[field]))
            average = np.float32(self.tokens[field]) / np.float32(n)  # tantivy: total tokens / total docs, f32
            if collection is not None:  # a shard: the collection's, any term of the field tells it
                average = collection.average_length(next(key for key in keys if self.list_field[self.vocabulary[key]] == number))
            cache = K1 * ((np.float32(1.0) - B) + B * FIELD_NORMS_TABLE.astype(np.float32) / average)
            caches.append(cache.astype(np.float32))
            fields_meta[field] = {"tokens": self.tokens[field], "average_length": float(average)}
        norms_2d, caches_2d = np.stack(norms), np.stack(caches)
        list_field = np.asarray(self.list_field, dtype=np.int64)
        by_list = keys if collection is None else sorted(keys, key=self.vocabulary.__getitem__)
        weights = bm25_idf(self.df, n) if collection is None else bm25_idf(collection.doc_freqs(by_list), collection.documents)
        list_offsets = np.concatenate([[0], np.cumsum(self.df)]).astype(np.int64)
        blocks = (self.df + BLOCK - 1) // BLOCK
        block_offsets = np.concatenate([[0], np.cumsum(blocks)]).astype(np.int64)
        writers = {name: _NpyWriter(out / f"{name}.npy", dtype, total) for name, dtype, total in (
            ("docs", np.int32, int(list_offsets[-1])), ("scores", np.float32, int(list_offsets[-1])),
            ("block_max", np.float32, int(block_offsets[-1])), ("block_last", np.int32, int(block_offsets[-1])))}
        first = 0
        while first < len(self.df):  # lists [first, last) at a time, at most _MERGE_POSTINGS postings (or one list)
            last = max(first + 1, int(np.searchsorted(list_offsets, list_offsets[first] + _MERGE_POSTINGS, side="right")) - 1)
            lists, units, tf = self._slice(first, last)
            order = np.argsort(lists, kind="stable")
            lists, units, tf = lists[order], units[order], tf[order]
            field = list_field[lists]
            norm = caches_2d[field, norms_2d[field, units]]
            scores = weights[lists] * (tf / (tf + norm))  # tantivy: weight * tf / (tf + norm), float32
            starts = list_offsets[first:last] - list_offsets[first]
            block_list = np.repeat(np.arange(first, last), blocks[first:last])
            within = np.arange(len(block_list)) - np.repeat(block_offsets[first:last] - block_offsets[first], blocks[first:last])
            block_starts = starts[block_list - first] + within * BLOCK
            block_ends = np.minimum(block_starts + BLOCK, starts[block_list - first] + self.df[block_list])
            writers["docs"].write(units.astype(np.int32))
            writers["scores"].write(scores.astype(np.float32))
            if len(block_starts):
                writers["block_max"].write(np.maximum.reduceat(scores, block_starts).astype(np.float32))
                writers["block_last"].write(units[block_ends - 1].astype(np.int32))
            first = last
        for writer in writers.values():
            writer.close()
        np.save(out / "keys.npy", np.frombuffer(b"".join(keys), dtype=np.uint8))
        np.save(out / "key_offsets.npy", np.concatenate([[0], np.cumsum([len(key) for key in keys])]).astype(np.int64))
        np.save(out / "key_lists.npy", np.asarray([self.vocabulary[key] for key in keys], dtype=np.int32))
        np.save(out / "list_offsets.npy", list_offsets)
        np.save(out / "block_offsets.npy", block_offsets)
        if self.page_docs:
            np.save(out / "unit_doc_ids.npy", np.concatenate(self.page_docs))
            np.save(out / "unit_starts.npy", np.concatenate(self.page_starts))
        meta = {"format": IMPACTS_FORMAT, "units": n, "lists": len(self.df), "postings": int(list_offsets[-1]),
                **({"collection_documents": collection.documents} if collection is not None else {}),
                "block": BLOCK, "fields": fields_meta}
        (out / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return {"format": IMPACTS_FORMAT, "units": n, "postings": int(list_offsets[-1])}

    def _slice(self, first: int, last: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The spilled postings of lists [first, last), chunk after chunk (so units ascend within a list)."""
        parts = []
        for present, counts, row in self.chunks:
            low, high = np.searchsorted(present, [first, last])
            if low == high:
                continue
            begin = row + int(counts[:low].sum())
            size = int(counts[low:high].sum())
            parts.append(tuple(np.fromfile(self.spill / name, dtype=dtype, count=size, offset=begin * 4)
                               for name, dtype in (("lists", np.int32), ("units", np.int32), ("tf", np.float32))))
        return tuple(np.concatenate([part[i] for part in parts]) for i in range(3))


class _NpyWriter:
    """An ``.npy`` file of ``total`` values written in order, a slice at a time (no whole array in memory)."""

    def __init__(self, path: Path, dtype, total: int) -> None:
        self._file = open(path, "wb")
        np.lib.format.write_array_header_1_0(self._file, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                                          "shape": (total,)})
        self._dtype = np.dtype(dtype)

    def write(self, values: np.ndarray) -> None:
        self._file.write(np.ascontiguousarray(values, dtype=self._dtype).tobytes())

    def close(self) -> None:
        self._file.close()
