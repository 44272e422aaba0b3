"""Writing a snapshot's impact postings (``index/impacts``, read by :mod:`stillweb.corpora.search.impacts`).

After the tantivy index is written, worker processes read the snapshot's documents back from
``docs.parquet`` a chunk of row groups at a time, index them as the same units with the same field texts
and analyzers, and each writes its chunk's postings sorted by key hash as a run
(:func:`~stillweb.corpora.search.impacts_tokens.index_chunk`; single-pass in-memory indexing,
Heinz and Zobel, "Efficient single-pass index construction for text databases", 2003). Chunks are
numbered in doc_id order, so a key's postings in run order are in unit order, and the runs are merged
by ranges of the hash space (:class:`_Merge`): a range's postings are gathered from every run,
placed by key then run, each list's postings scored with tantivy's BM25 (its field norms and
averages, ``bm25.rs``) for its block maxima, and appended to the output. A list too large for one
range is copied run by run in pieces of whole blocks. Memory is bounded by a chunk in a worker and by
:data:`_SLICE_POSTINGS` in the merge, plus one byte per unit and field; the vocabulary is never held.

A posting is stored as its unit (int32) and term frequency (the smallest unsigned type that holds the
largest), a unit's field length as tantivy's one-byte norm code: the float32 score is computed
from them at query time by the same function that scored the block maxima (:func:`~stillweb.corpora.search.impacts.posting_score`),
so scores are those of format ``stillweb-impacts/1``, which stored them (8 bytes a posting, now 5).

Every output is a function of the documents and the parameters: lists in key-hash order, units
ascending within a list; a two-process test checks the bytes.
"""

from __future__ import annotations

import json
import mmap
import shutil
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow.parquet as pq

from stillweb.corpora.build.bounded import DigestSet, digest
from stillweb.corpora.processes import ignore_interrupts, process_context
from stillweb.corpora.search.impacts import BLOCK, IMPACTS_DIR, IMPACTS_FORMAT, bm25_idf
from stillweb.corpora.search.impacts_merge import NpyWriter, blocks, check_keys, mapped, scatter
from stillweb.corpora.search.impacts_tokens import FIELD_NORMS_TABLE, SPILL_TYPES, Chunk, HashCollision, index_chunk

__all__ = ["build_impacts"]

_CHUNK_ROWS = 16_384  # rows a worker indexes at once (pages: a quarter of that)
_SLICE_POSTINGS = 4_000_000  # postings merged at once
_SEEDS = 8  # hash seeds tried before giving up (two keys sharing a 64-bit hash: about 1e-5 at wiki-18's vocabulary)
K1, B = np.float32(1.2), np.float32(0.75)


def norm_caches(averages: np.ndarray) -> np.ndarray:
    """tantivy's BM25 length term ``k1 * (1 - b + b * length / average)`` in float32 for each field (row; its
    float32 average length) and each of the 256 field norm codes (column)."""
    table = FIELD_NORMS_TABLE.astype(np.float32)
    return np.stack([K1 * ((np.float32(1.0) - B) + B * table / average) for average in averages.astype(np.float32)]
                    ).astype(np.float32).reshape(len(averages), len(table))


class Collection(Protocol):
    """The statistics of the collection a shard's impacts score with (:func:`build_impacts`)."""

    documents: int

    def doc_freqs(self, keys: list[bytes]) -> np.ndarray: ...

    def average_length(self, key: bytes) -> np.float32: ...

    def seen_titles(self) -> DigestSet: ...


def build_impacts(snapshot: Path, parameters: dict, workers: int = 1, collection: Collection | None = None,
                  titled: bytes | None = None) -> dict:
    """Write ``snapshot/index/impacts`` for the documents in ``snapshot/docs.parquet`` indexed as ``parameters``
    (the manifest's ``index``) say; returns what the manifest records of it.

    ``collection``: the snapshot is a shard of a larger collection (snapshot/sharded.py), whose statistics
    its scores use (document frequencies, documents, average field lengths) and whose earlier shards'
    titles have had their title field. ``titled``: one byte a document, nonzero where it has the title field
    (:class:`~stillweb.corpora.search.index.IndexBuilder`'s ``title_flags``); by default told again as the
    index builder tells it (a title's first document, by its 128-bit digest)."""
    from stillweb.corpora.search.index import TITLE_FIRST_PASSAGE

    out = snapshot / "index" / IMPACTS_DIR
    docs = snapshot / "docs.parquet"
    if not titled and parameters.get("title") == TITLE_FIRST_PASSAGE and not parameters.get("passage_words"):
        seen = collection.seen_titles() if collection is not None else DigestSet(16)
        titled = bytes(seen.add(digest(title, 16)) for batch in pq.ParquetFile(docs).iter_batches(columns=["title"])
                       for title in batch.column(0).to_pylist())
    for seed in range(_SEEDS):
        shutil.rmtree(out, ignore_errors=True)
        (out / ".spill").mkdir(parents=True)
        try:
            meta = _build(docs, out, parameters, workers, titled or None, seed, collection)
        except HashCollision:
            continue
        finally:
            shutil.rmtree(out / ".spill", ignore_errors=True)
        return {"format": IMPACTS_FORMAT, "units": meta["units"], "postings": meta["postings"]}
    raise HashCollision(f"{_SEEDS} hash seeds all gave two keys the same hash")


def _chunks(docs: Path, parameters: dict, spill: Path, seed: int, titled: bytes | None) -> list[Chunk]:
    sizes = [group.num_rows for group in (pq.ParquetFile(docs).metadata.row_group(i)
                                          for i in range(pq.ParquetFile(docs).metadata.num_row_groups))]
    limit = _CHUNK_ROWS // 4 if parameters.get("passage_words") else _CHUNK_ROWS
    chunks, groups, first, rows = [], [], 0, 0
    for number, size in enumerate(sizes + [0]):
        if groups and (rows + size > limit or number == len(sizes)):
            flags = titled[first:first + rows] if titled is not None else None
            chunks.append(Chunk(docs, tuple(groups), first, len(chunks), spill, parameters, seed, flags))
            groups, first, rows = [], first + rows, 0
        if number < len(sizes):
            groups.append(number)
            rows += size
    return chunks


def _build(docs: Path, out: Path, parameters: dict, workers: int, titled: bytes | None, seed: int,
           collection: Collection | None) -> dict:
    chunks = _chunks(docs, parameters, out / ".spill", seed, titled)
    pool = process_context().Pool(workers, initializer=ignore_interrupts) if workers > 1 and len(chunks) > 1 else None
    runs, norms, tokens, pages, field_keys = [], {}, {}, ([], []), {}
    try:
        for result in (pool.imap(index_chunk, chunks) if pool is not None else map(index_chunk, chunks)):
            base = sum(run["units"] for run in runs)
            for field, codes in result["norms"].items():  # a field absent so far: code 0 for the units before
                norms.setdefault(field, [np.zeros(base, np.uint8)] if base else []).append(codes)
                tokens[field] = tokens.get(field, 0) + result["tokens"][field]
            for field in norms:
                if field not in result["norms"]:
                    norms[field].append(np.zeros(result["units"], np.uint8))
            for field, key in result["field_keys"].items():
                field_keys.setdefault(field, key)
            if result["pages"] is not None:
                pages[0].append(result["pages"][0])
                pages[1].append(result["pages"][1])
            runs.append(dict(result, base=base, norms=None, pages=None))
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    units = sum(run["units"] for run in runs)
    fields = list(norms)
    norms_2d = np.stack([np.concatenate(norms.pop(field)) for field in fields]) if fields else np.zeros((0, units), np.uint8)
    np.save(out / "norms.npy", norms_2d)
    averages = [np.float32(tokens[field]) / np.float32(units) if collection is None  # tantivy: tokens / docs, f32
                else collection.average_length(field_keys[field]) for field in fields]  # a shard: the collection's
    caches = norm_caches(np.asarray(averages, dtype=np.float32))
    np.save(out / "norm_cache.npy", caches)
    if pages[0]:
        np.save(out / "unit_doc_ids.npy", np.concatenate(pages[0]))
        np.save(out / "unit_starts.npy", np.concatenate(pages[1]))
    merge = _Merge(out, runs, units, norms_2d, caches, max((run["max_tf"] for run in runs), default=0), collection)
    lists, postings = merge.run()
    meta = {"format": IMPACTS_FORMAT, "seed": seed, "units": units, "lists": lists, "postings": postings, "block": BLOCK,
            **({"collection_documents": collection.documents} if collection is not None else {}),
            "tf": merge.tf_dtype.str, "fields": {field: {"tokens": tokens[field], "average_length": float(average),
                                                           "number": number}
                                                  for number, (field, average) in enumerate(zip(fields, averages))}}
    (out / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return meta


class _Merge:
    """Merges the runs (in chunk order) into the output lists, a range of the hash space at a time."""

    def __init__(self, out: Path, runs: list[dict], units: int, norms: np.ndarray, caches: np.ndarray, max_tf: int,
                 collection: Collection | None) -> None:
        self.out, self.runs, self.norms, self.caches, self.collection = out, runs, norms, caches, collection
        self.documents = units if collection is None else collection.documents
        self.files = {file: mapped(out / ".spill" / file, SPILL_TYPES[name]) for run in runs
                      for name, (file, _offset, _length) in run["spill"].items()}
        self.arrays = [{name: self.files[file][offset:offset + length] for name, (file, offset, length) in run["spill"].items()}
                       for run in runs]
        self.bases = np.asarray([run["base"] for run in runs], dtype=np.int64)
        self.tf_dtype = np.dtype(np.uint8 if max_tf <= 255 else np.uint16 if max_tf <= 65_535 else np.uint32)
        total = sum(run["postings"] for run in runs)
        self.writers = {"docs": NpyWriter(out / "docs.npy", np.int32, total),
                        "tf": NpyWriter(out / "tf.npy", self.tf_dtype, total)}
        for name, dtype in (("block_max", np.float32), ("block_last", np.int32), ("hashes", np.uint64),
                            ("weights", np.float32), ("list_field", np.uint8), ("df", np.int64), ("keys", np.uint8),
                            ("key_ends", np.int64)):
            self.writers[name] = NpyWriter(out / f"{name}.npy", dtype, None)
        self.lists = self.postings = self.key_bytes = 0

    def run(self) -> tuple[int, int]:
        """Merge everything; returns the number of lists and of postings."""
        total_keys = sum(run["keys"] for run in self.runs)
        pieces = max(1, -(-sum(run["postings"] for run in self.runs) // _SLICE_POSTINGS), -(-total_keys // _SLICE_POSTINGS))
        bounds = [(i << 64) // pieces for i in range(pieces)] + [1 << 64]
        positions = [self._positions(bound) for bound in bounds]
        for low, high, lo, hi in zip(bounds, bounds[1:], positions, positions[1:]):
            self._range(low, high, lo, hi)
        for writer in self.writers.values():
            writer.close()
        df = np.load(self.out / "df.npy")
        np.save(self.out / "list_offsets.npy", np.concatenate([[0], np.cumsum(df)]).astype(np.int64))
        np.save(self.out / "block_offsets.npy", np.concatenate([[0], np.cumsum((df + BLOCK - 1) // BLOCK)]).astype(np.int64))
        np.save(self.out / "key_offsets.npy", np.concatenate([[0], np.load(self.out / "key_ends.npy")]).astype(np.int64))
        for name in ("df", "key_ends"):
            (self.out / f"{name}.npy").unlink()
        return self.lists, self.postings

    def _positions(self, bound: int) -> np.ndarray:
        """Each run's first key at or past the hash ``bound`` (its length past the last)."""
        if bound >= 1 << 64:
            return np.asarray([len(arrays["keys"]) for arrays in self.arrays], dtype=np.int64)
        value = np.uint64(bound)
        return np.asarray([np.searchsorted(arrays["keys"], value) for arrays in self.arrays], dtype=np.int64)

    def _range(self, low: int, high: int, lo: np.ndarray, hi: np.ndarray) -> None:
        """Merge the keys with hashes in [low, high): split while it holds more than a slice of postings."""
        live = np.flatnonzero(hi > lo)
        if not len(live):
            return
        sizes = [int(self.arrays[r]["starts"][hi[r]] - self.arrays[r]["starts"][lo[r]]) for r in live]
        first = min(int(self.arrays[r]["keys"][lo[r]]) for r in live)
        last = max(int(self.arrays[r]["keys"][hi[r] - 1]) for r in live)
        if sum(sizes) <= _SLICE_POSTINGS or high - low <= 1:
            return self._release(self._slice(live, lo, hi))
        if first == last:  # one list, too large for a slice: copied run by run
            return self._release(self._one_list(live, lo, sizes))
        middle = (first + last + 1) // 2
        at = lo.copy()
        at[live] = [np.searchsorted(self.arrays[r]["keys"][lo[r]:hi[r]], np.uint64(middle)) + lo[r] for r in live]
        self._range(low, middle, lo, at)
        self._range(middle, high, at, hi)

    def _release(self, _done: None) -> None:
        """Unmap the spill pages read so far: the page cache keeps them, this process's RSS does not count them."""
        for mapped in self.files.values():
            if isinstance(mapped, np.memmap):
                mapped._mmap.madvise(mmap.MADV_DONTNEED)

    def _slice(self, live: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        keys, counts, sources, fields, blobs, blob_ends, units, tfs = [], [], [], [], [], [], [], []
        gathered = blob_size = 0
        for r in live.tolist():
            arrays, a, b = self.arrays[r], int(lo[r]), int(hi[r])
            starts = np.asarray(arrays["starts"][a:b + 1])
            keys.append(np.asarray(arrays["keys"][a:b]))
            counts.append(np.diff(starts))
            sources.append(starts[:-1] - starts[0] + gathered)
            fields.append(np.asarray(arrays["fields"][a:b]))
            ends = arrays["ends"]
            begin = int(ends[a - 1]) if a else 0
            blobs.append(np.asarray(arrays["blob"][begin:int(ends[b - 1])]))
            blob_ends.append(np.asarray(ends[a:b]) - begin + blob_size)
            blob_size += len(blobs[-1])
            units.append(np.asarray(arrays["units"][starts[0]:starts[-1]]).astype(np.int64) + self.bases[r])
            tfs.append(np.asarray(arrays["tf"][starts[0]:starts[-1]]))
            gathered += int(starts[-1] - starts[0])
        keys = np.concatenate(keys)
        order = np.argsort(keys, kind="stable")  # by key, then run: unit order within a key
        blob, blob_ends = np.concatenate(blobs), np.concatenate(blob_ends)
        first_of_list = check_keys(keys[order], blob, np.concatenate([[0], blob_ends[:-1]])[order], blob_ends[order])
        if len(first_of_list) and first_of_list[0] < 0:
            raise HashCollision("two keys share a hash")
        counts = np.concatenate(counts)[order]
        out_units, out_tf = scatter(np.concatenate(units), np.concatenate(tfs), np.concatenate(sources)[order], counts)
        list_starts = np.concatenate([[0], np.cumsum(counts)])[np.append(first_of_list, len(counts))]
        heads = order[first_of_list]
        self._write(keys[heads], np.concatenate(fields)[heads], np.diff(list_starts), out_units, out_tf, list_starts,
                    [blob[(blob_ends[head - 1] if head else 0):blob_ends[head]].tobytes() for head in heads.tolist()])

    def _one_list(self, live: np.ndarray, lo: np.ndarray, sizes: list[int]) -> None:
        """A list larger than a slice (one key in every live run): scored and written in pieces of whole blocks."""
        keys = {self._key(r, int(lo[r])) for r in live.tolist()}
        if len(keys) != 1:
            raise HashCollision("two keys share a hash")
        head = self.arrays[int(live[0])]
        field = np.asarray([head["fields"][int(lo[live[0]])]], np.uint8)
        df = np.asarray([sum(sizes)], np.int64)
        weights = self._weights(df, list(keys))
        self._list_meta(np.asarray([head["keys"][int(lo[live[0]])]]), field, df, weights, list(keys))
        held_units, held_tf = np.zeros(0, np.int64), np.zeros(0, np.uint32)
        for number, (r, size) in enumerate(zip(live.tolist(), sizes)):
            arrays = self.arrays[r]
            start = int(arrays["starts"][int(lo[r])])
            held_units = np.concatenate([held_units, np.asarray(arrays["units"][start:start + size]).astype(np.int64) + self.bases[r]])
            held_tf = np.concatenate([held_tf, np.asarray(arrays["tf"][start:start + size])])
            last = number == len(sizes) - 1
            if len(held_units) >= _SLICE_POSTINGS or last:
                cut = len(held_units) if last else len(held_units) // BLOCK * BLOCK  # blocks start at multiples of BLOCK
                self._postings(held_units[:cut], held_tf[:cut], np.asarray([0, cut]), weights, field)
                held_units, held_tf = held_units[cut:], held_tf[cut:]

    def _key(self, run: int, at: int) -> bytes:
        """The bytes of key number ``at`` of run ``run``."""
        ends = self.arrays[run]["ends"]
        return bytes(self.arrays[run]["blob"][(int(ends[at - 1]) if at else 0):int(ends[at])])

    def _weights(self, df: np.ndarray, keys: list[bytes]) -> np.ndarray:
        """The lists' BM25 weights: by their document frequencies here, or a shard's by the collection's."""
        if self.collection is None:
            return bm25_idf(df, self.documents)
        return bm25_idf(self.collection.doc_freqs(keys), self.documents)

    def _write(self, hashes, fields, df, units, tf, list_starts, keys: list[bytes]) -> None:
        weights = self._weights(df, keys)
        self._list_meta(hashes, fields, df, weights, keys)
        self._postings(units, tf, list_starts, weights, fields)

    def _list_meta(self, hashes, fields, df, weights, keys: list[bytes]) -> None:
        blob = b"".join(keys)
        self.writers["hashes"].write(hashes)
        self.writers["list_field"].write(fields)
        self.writers["df"].write(df)
        self.writers["weights"].write(weights)
        self.writers["keys"].write(np.frombuffer(blob, dtype=np.uint8))
        self.writers["key_ends"].write(self.key_bytes + np.cumsum([len(key) for key in keys], dtype=np.int64))
        self.key_bytes += len(blob)
        self.lists += len(hashes)

    def _postings(self, units, tf, list_starts, weights, fields) -> None:
        block_max, block_last = blocks(units, tf, list_starts, weights, fields.astype(np.int64), self.norms, self.caches)
        self.writers["docs"].write(units)
        self.writers["tf"].write(tf)
        self.writers["block_max"].write(block_max)
        self.writers["block_last"].write(block_last)
        self.postings += len(units)
