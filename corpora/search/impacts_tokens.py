"""The worker side of writing impact postings (``impacts_build.py``): one run of postings per chunk of documents.

A worker reads its documents straight from ``docs.parquet`` (row groups, Arrow's UTF-8 buffers), cuts
them into the same units and fields as the tantivy index (:func:`~stillweb.corpora.search.index.document_fields`,
:func:`~stillweb.corpora.search.page_ranking.page_units`), and counts each unit's terms in numba. English
text is analyzed exactly as tantivy's analyzer does it, without calling it on every token: tantivy's
simple tokenizer cuts text at every character that is not alphanumeric, and every ASCII byte that is
not a letter or a digit is such a character, so text splits at those bytes into segments whose terms
are independent of their neighbours; each distinct segment is analyzed once by tantivy itself
(``TextAnalyzer.analyze``, a segment with other characters may give several terms or none) and
remembered. Other languages' analyzers give terms in Python, as their index does.

A chunk's postings are written sorted by key hash (:func:`~stillweb.corpora.search.impacts_keys.key_hash`),
units ascending within a key (a "run", as in Heinz and Zobel's single-pass in-memory indexing, 2003),
with its keys' bytes; the worker returns its units' field-norm codes and token counts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from stillweb.corpora.errors import StillwebError
from stillweb.corpora.search.impacts_keys import joined, key_hashes, term_key
from stillweb.corpora.search.impacts_segments import SegmentTerms, expand, segments

__all__ = ["Chunk", "index_chunk", "HashCollision", "norm_codes", "FIELD_NORMS_TABLE", "BASIC_FIELDS", "RAW_FIELDS"]

BASIC_FIELDS = ("body_terms", "title_exact")  # tantivy's "basic" option: no frequencies, every match counts once
RAW_FIELDS = ("title_exact",)  # tantivy's raw tokenizer: the whole value is one term
SPILL_TYPES = {"keys": np.dtype(np.uint64), "starts": np.dtype(np.int64), "units": np.dtype(np.uint32),
               "tf": np.dtype(np.uint32), "fields": np.dtype(np.uint8), "blob": np.dtype(np.uint8), "ends": np.dtype(np.int64)}
_SEGMENTS_REMEMBERED = 1_000_000  # distinct segments a worker remembers before it starts afresh (bounded memory)
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


class HashCollision(StillwebError):
    """Two different keys have the same 64-bit hash under the build's seed (the build starts over with the next)."""


@dataclass(frozen=True)
class Chunk:
    """What a worker indexes: row groups ``groups`` of ``docs`` (their first document is ``first_doc``), written
    as run ``run`` under ``spill``; ``titled`` says which rows carry the title field (None: all or by page)."""

    docs: Path
    groups: tuple[int, ...]
    first_doc: int
    run: int
    spill: Path
    parameters: dict
    seed: int
    titled: bytes | None


def norm_codes(lengths: np.ndarray) -> np.ndarray:
    """tantivy's one-byte field norm code of each field length."""
    return (np.searchsorted(FIELD_NORMS_TABLE, lengths, side="right") - 1).astype(np.uint8)


@numba.njit(cache=True, nogil=True)
def _count(keys, units, n_keys, basic):
    """Postings ``(key, unit, tf)`` of tokens given unit by unit (``basic``: tf 1), and the distinct keys."""
    mark = np.full(n_keys, -1, np.int64)
    slot = np.empty(n_keys, np.int64)
    out_keys = np.empty(len(keys), np.int64)
    out_units = np.empty(len(keys), np.int64)
    tf = np.empty(len(keys), np.uint32)
    present = np.empty(len(keys), np.int64)
    n = n_present = 0
    for t in range(len(keys)):
        k = keys[t]
        if mark[k] != units[t]:
            if mark[k] < 0:
                present[n_present] = k
                n_present += 1
            mark[k], slot[k] = units[t], n
            out_keys[n], out_units[n], tf[n] = k, units[t], 1
            n += 1
        elif not basic[k]:
            tf[slot[k]] += 1
    return out_keys[:n], out_units[:n], tf[:n], present[:n_present]


@numba.njit(cache=True, nogil=True)
def _group(keys, units, tf, rank, n_ranked):
    """Postings grouped by their key's ``rank`` (a counting sort, stable: units stay ascending within a key)."""
    starts = np.zeros(n_ranked + 1, np.int64)
    for k in keys:
        starts[rank[k] + 1] += 1
    for r in range(n_ranked):
        starts[r + 1] += starts[r]
    at = starts[:-1].copy()
    out_units = np.empty(len(units), np.uint32)
    out_tf = np.empty(len(tf), np.uint32)
    for p in range(len(keys)):
        r = rank[keys[p]]
        out_units[at[r]], out_tf[at[r]] = units[p], tf[p]
        at[r] += 1
    return starts, out_units, out_tf


class _Terms:
    """A worker's memory of analyzed segments, terms and keys (pure functions of their text: remembering them
    changes no output). Started afresh past :data:`_SEGMENTS_REMEMBERED` segments, so a worker's memory is bounded."""

    def __init__(self, parameters: dict, seed: int) -> None:
        from stillweb.corpora.search.analyzers import analyzer_from_parameters
        from stillweb.corpora.search.index import INDEX_PARAMETERS, _shared_analyzer

        self.identity = (repr(sorted(parameters.items())), seed)
        self.seed = seed
        self.analyzer = analyzer_from_parameters(parameters)
        self.english = _shared_analyzer(parameters.get("tokenizer", INDEX_PARAMETERS["tokenizer"]))
        self.fields = parameters["fields"] + (["title_exact"] if parameters.get("title_exact") else [])
        self.clear()

    def clear(self) -> None:
        self.segments = SegmentTerms(lambda text: [self.term(term) for term in self.english.analyze(text)])
        self.terms: dict[str, int] = {}
        self.names: list[str] = []
        self.keys: list[np.ndarray] = [np.zeros(0, np.int64) for _ in self.fields]  # per field: term -> key, -1
        self.key_hash = np.zeros(0, np.uint64)
        self.key_field = np.zeros(0, np.uint8)
        self.key_bytes: list[bytes] = []

    def term(self, text: str) -> int:
        number = self.terms.get(text)
        if number is None:
            number = self.terms[text] = len(self.names)
            self.names.append(text)
        return number

    def field_keys(self, field: int, terms: np.ndarray) -> np.ndarray:
        """The key number of each of ``terms`` in field ``field`` (new keys numbered and hashed here)."""
        table = self.keys[field]
        if len(table) < len(self.names):
            table = self.keys[field] = np.concatenate([table, np.full(len(self.names) - len(table), -1, np.int64)])
        wanted = np.zeros(len(table), dtype=bool)
        wanted[terms] = True
        missing = np.flatnonzero(wanted & (table < 0))
        if len(missing):
            new = [term_key(self.fields[field], self.names[number]) for number in missing.tolist()]
            table[missing] = np.arange(len(self.key_bytes), len(self.key_bytes) + len(new))
            self.key_bytes.extend(new)
            self.key_field = np.concatenate([self.key_field, np.full(len(new), field, np.uint8)])
            self.key_hash = np.concatenate([self.key_hash, key_hashes(*joined(new), self.seed)])
        return table[terms]


_STATE: list[_Terms] = []


def _terms_for(parameters: dict, seed: int) -> _Terms:
    state = _STATE[0] if _STATE else None
    if state is None or state.identity != (repr(sorted(parameters.items())), seed):
        _STATE[:] = [state := _Terms(parameters, seed)]
    elif state.segments.count > _SEGMENTS_REMEMBERED:
        state.clear()
    return state


def _strings(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A string column's UTF-8 bytes and each value's start and end in them (zero-copy where Arrow allows)."""
    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_large_string(array.type):
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset:array.offset + len(array) + 1]
    else:
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset:array.offset + len(array) + 1]
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8) if array.buffers()[2] is not None else np.zeros(0, np.uint8)
    return data, offsets[:-1].astype(np.int64), offsets[1:].astype(np.int64)


def _field_values(chunk: Chunk, table: pa.Table, state: _Terms) -> tuple[int, dict[str, tuple], tuple | None]:
    """The chunk's units and, per field, either ``("bytes", data, starts, ends, units)`` for English text or
    ``("terms", terms per unit)``; for pages also each unit's doc_id and byte offset."""
    from stillweb.corpora.search.index import TITLE_FIRST_PASSAGE, document_fields
    from stillweb.corpora.search.page_ranking import page_units

    parameters, n = chunk.parameters, table.num_rows
    words = parameters.get("passage_words")
    if not words and state.analyzer is None:  # English rows: straight from Arrow's buffers
        title, title_start, title_end = _strings(table.column("title"))
        text, text_start, text_end = _strings(table.column("text"))
        data = np.concatenate([title, text])
        text_start, text_end = text_start + len(title), text_end + len(title)
        rows = np.arange(n, dtype=np.int64)
        titled = (np.frombuffer(chunk.titled, dtype=np.uint8).astype(bool) if chunk.titled is not None
                  else np.ones(n, dtype=bool))
        if parameters.get("title") != TITLE_FIRST_PASSAGE:
            titled[:] = True
        if parameters.get("body") == "title, newline, text":  # the newline splits: the title's terms, then the text's
            body = (np.stack([title_start, text_start], 1).ravel(), np.stack([title_end, text_end], 1).ravel(), np.repeat(rows, 2))
        else:
            body = (text_start, text_end, rows)
        fields = {"body": ("bytes", data, *body), "title": ("bytes", data, title_start[titled], title_end[titled], rows[titled])}
        return n, fields, None
    titles, texts = table.column("title").to_pylist(), table.column("text").to_pylist()
    titled = chunk.titled or bytes([1]) * n
    units: list[dict[str, str]] = []
    unit_docs, unit_starts = [], []
    for row, (title, text) in enumerate(zip(titles, texts)):
        if words:
            for start, fields in page_units(title, text, words):
                units.append(fields)
                unit_docs.append(chunk.first_doc + row)
                unit_starts.append(start)
        else:
            with_title = bool(titled[row]) or parameters.get("title") != TITLE_FIRST_PASSAGE
            units.append(document_fields(title, text, parameters.get("body") == "title, newline, text", with_title, state.analyzer))
    fields = {}
    for field in state.fields:
        present = [(number, unit[field]) for number, unit in enumerate(units) if field in unit]
        if field in RAW_FIELDS or state.analyzer is not None:
            terms = [[] for _ in units]
            for number, value in present:
                terms[number] = [value] if field in RAW_FIELDS else value.split()
            fields[field] = ("terms", terms)
        else:
            encoded = [value.encode("utf-8") for _number, value in present]
            ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), dtype=np.int64)
            fields[field] = ("bytes", np.frombuffer(b"".join(encoded), dtype=np.uint8), ends - np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)),
                             ends, np.asarray([number for number, _value in present], dtype=np.int64))
    pages = (np.asarray(unit_docs, dtype=np.int32), np.asarray(unit_starts, dtype=np.int64)) if words else None
    return len(units), fields, pages


def _tokens(state: _Terms, n: int, value: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One field's term numbers and units, token by token, and each unit's length."""
    if value[0] == "terms":
        lengths = np.fromiter(map(len, value[1]), dtype=np.int64, count=n)
        terms = np.fromiter((state.term(term) for unit in value[1] for term in unit), dtype=np.int64, count=int(lengths.sum()))
        return terms, np.repeat(np.arange(n, dtype=np.int64), lengths), lengths
    _kind, data, starts, ends, units = value
    seg_start, seg_end, seg_unit = segments(data, starts, ends, units)
    codes = state.segments.codes_of(data, seg_start, seg_end)
    return expand(codes, seg_unit, *state.segments.several(), n)


def index_chunk(chunk: Chunk) -> dict:
    """Append the chunk's run to this process's spill files; return where, and its units, field norms, tokens and sizes."""
    state = _terms_for(chunk.parameters, chunk.seed)
    table = pq.ParquetFile(chunk.docs).read_row_groups(list(chunk.groups), columns=["title", "text"])
    n, fields, pages = _field_values(chunk, table, state)
    keys, units, norms, tokens = [], [], {}, {}
    for number, field in enumerate(state.fields):
        if field not in fields:
            continue
        terms, token_units, lengths = _tokens(state, n, fields[field])
        keys.append(state.field_keys(number, terms))
        units.append(token_units)
        norms[field], tokens[field] = norm_codes(lengths), int(lengths.sum())
    basic = np.asarray([field in BASIC_FIELDS for field in state.fields], dtype=np.bool_)[state.key_field]
    post_keys, post_units, tf, present = _count(np.concatenate(keys), np.concatenate(units), len(state.key_bytes), basic)
    order = present[np.argsort(state.key_hash[present], kind="stable")]
    hashes = state.key_hash[order]
    if len(hashes) > 1 and (hashes[1:] == hashes[:-1]).any():
        raise HashCollision(f"seed {chunk.seed}: two keys of run {chunk.run} share a hash")
    rank = np.full(len(state.key_bytes), -1, np.int64)
    rank[order] = np.arange(len(order))
    starts, out_units, out_tf = _group(post_keys, post_units, tf, rank, len(order))
    blob, ends = joined([state.key_bytes[key] for key in order.tolist()])
    spill = {}  # appended to this process's spill files (a few files however many runs): name -> (file, offset, length)
    for name, array in (("keys", hashes), ("starts", starts), ("units", out_units), ("tf", out_tf),
                        ("fields", state.key_field[order]), ("blob", blob), ("ends", ends)):
        path = chunk.spill / f"w{os.getpid()}.{name}"
        with open(path, "ab") as handle:
            spill[name] = (path.name, handle.tell() // SPILL_TYPES[name].itemsize, len(array))
            handle.write(np.ascontiguousarray(array, dtype=SPILL_TYPES[name]).tobytes())
    run_fields = state.key_field[order]
    field_keys = {state.fields[number]: state.key_bytes[int(order[np.argmax(run_fields == number)])] for number in np.unique(run_fields).tolist()}
    return {"run": chunk.run, "units": n, "norms": norms, "tokens": tokens, "postings": len(out_units), "keys": len(order),
            "max_tf": int(out_tf.max(initial=0)), "pages": pages, "field_keys": field_keys, "spill": spill}
