"""Writing impact postings (issue 48): tantivy's analyzer reproduced exactly, the compact format's scores, the
hash-collision retry, and format 1 (stored scores) still read as before."""

from __future__ import annotations

import json
import string
from pathlib import Path

import numpy as np
import pytest

import stillweb.corpora.search.impacts_tokens as impacts_tokens
from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.search.impacts import IMPACTS_FORMAT_SCORES, IMPACTS_DIR, ImpactIndex, _list_scores, exhaustive_top
from stillweb.corpora.search.impacts_merge import check_keys as _check_keys
from stillweb.corpora.search.impacts_keys import key_hashes
from stillweb.corpora.search.impacts_segments import SegmentTerms, expand, segments
from stillweb.corpora.search.index import _shared_analyzer
from stillweb.corpora.search.row_ranking import ROW_TOKENIZER
from stillweb.corpora.snapshot.reading import Snapshot

# ASCII separators and word characters, and non-ASCII characters that are letters (é, ß, the Kelvin sign, a
# dotted capital I, CJK), combining marks (alphabetic in Rust, not in Python), digits of other scripts, and
# characters that are not alphanumeric (dashes, no-break space, guillemets, an emoji).
ALPHABET = (list(string.ascii_letters + string.digits) * 3 + list(" \n\t.,;:'\"-_()[]/\\&%$#@!?*+=<>|~^`{}")
            + ["é", "ß", "\u212a", "İ", "北", "京", "\u0301", "\u093f", "\u0663", "–", "—", "\u00a0", "«", "»", "😀", "ﬁ"])


def hostile_texts(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    texts = ["", "the of and a", "x" * 45 + " " + "y" * 39 + " " + "z" * 40, "DDC's 18 editions by J. Comaromi",
             "naïve café—Zürich «quoted» 12,000 1812", "ﬁle ﬂow İstanbul \u212aelvin", "a_b c-d e'f"]
    for _ in range(count):
        texts.append("".join(rng.choice(ALPHABET, size=int(rng.integers(1, 120)))))
    return texts


@pytest.mark.parametrize("tokenizer", ["en_stem_stop", ROW_TOKENIZER])
def test_segments_give_tantivys_terms_exactly(tokenizer):
    analyzer = _shared_analyzer(tokenizer)
    texts = hostile_texts(400, 7)
    numbers: dict[str, int] = {}
    table = SegmentTerms(lambda text: [numbers.setdefault(term, len(numbers)) for term in analyzer.analyze(text)])
    names = {}
    for round_ in range(2):  # the second round answers from what the first remembered
        encoded = [text.encode("utf-8") for text in texts]
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        ends = np.cumsum([len(value) for value in encoded], dtype=np.int64)
        starts = ends - np.asarray([len(value) for value in encoded], dtype=np.int64)
        seg_start, seg_end, seg_unit = segments(data, starts, ends, np.arange(len(texts), dtype=np.int64))
        terms, units, lengths = expand(table.codes_of(data, seg_start, seg_end), seg_unit, *table.several(), len(texts))
        names = {number: term for term, number in numbers.items()}
        for unit, text in enumerate(texts):
            assert [names[term] for term in terms[units == unit]] == analyzer.analyze(text), (round_, text)
            assert lengths[unit] == len(analyzer.analyze(text))
    assert len(table.several_offsets) > 1  # some segments were cut by characters that are not alphanumeric


def write_rows(folder: Path, rows: int = 400) -> Path:
    texts = hostile_texts(rows, 3)
    path = folder / "rows.jsonl"
    with path.open("w") as out:
        for row, text in enumerate(texts):
            out.write(json.dumps({"id": str(row), "contents": f'"Title {row % 37} é"\n{text} river {row % 11} town'}) + "\n")
    return path


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    return build_rows([write_rows(folder)], folder / "snap", progress=False).path


def test_scores_computed_at_query_time_are_tantivys(snapshot):
    """A posting's score computed from its term frequency and field norm code is tantivy's, to the bit: a
    one-term query's top 50 from tantivy (exhaustive) are the same units with the same float32 scores."""
    snap = Snapshot.open(snapshot)
    index = snap._index
    impacts = index._impacts
    assert impacts.meta["format"] == "stillweb-impacts/2" and impacts.tf.dtype == np.uint8
    reference = {key: value for key, value in snap.manifest["index"].items() if key != "impacts"}
    from stillweb.corpora.search.index import SearchIndex

    tantivy = SearchIndex(snapshot / "index", dict(reference, proximity=None))
    for word in ("river", "town", "title", "3", "7"):
        term = _shared_analyzer(ROW_TOKENIZER).analyze(word)[0]
        ours = exhaustive_top(impacts, [("body", term, None)], 50)
        theirs = tantivy._top_tie_safe(tantivy._index.parse_query(f"body:{term}", ["body"]), 50)
        assert len(ours) == 50 and ours == theirs, term


def as_format_1(source: Path, target: Path) -> None:
    """The impact postings of ``source`` rewritten as format 1 wrote them: scores stored, keys sorted by bytes."""
    index = ImpactIndex(source)
    target.mkdir()
    scores = np.concatenate([_list_scores(number, int(index.list_offsets[number]), int(index.list_offsets[number + 1]), index._postings)
                             for number in range(len(index.list_offsets) - 1)])
    keys = [bytes(index._keys[index._key_offsets[i]:index._key_offsets[i + 1]]) for i in range(len(index._key_offsets) - 1)]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    np.save(target / "scores.npy", scores.astype(np.float32))
    np.save(target / "keys.npy", np.frombuffer(b"".join(keys[i] for i in order), dtype=np.uint8))
    np.save(target / "key_offsets.npy", np.concatenate([[0], np.cumsum([len(keys[i]) for i in order])]).astype(np.int64))
    np.save(target / "key_lists.npy", np.asarray(order, dtype=np.int32))
    for name in ("docs", "list_offsets", "block_offsets", "block_max", "block_last"):
        np.save(target / f"{name}.npy", np.load(source / f"{name}.npy"))
    meta = dict(index.meta, format=IMPACTS_FORMAT_SCORES)
    (target / "meta.json").write_text(json.dumps(meta))


def test_format_1_impacts_search_as_before(snapshot, tmp_path):
    current = ImpactIndex(snapshot / "index" / IMPACTS_DIR)
    as_format_1(snapshot / "index" / IMPACTS_DIR, tmp_path / "old")
    old = ImpactIndex(tmp_path / "old")
    assert old.format == IMPACTS_FORMAT_SCORES and len(old.tf) == 0
    for query in (["river", "town"], ["title", "3", "river"], ["7", "town", "nothing"], ["é"]):
        clauses = [("body", term, None) for term in query] + [("title", term, 0.5) for term in query]
        assert old.top(clauses, 10) == current.top(clauses, 10) == exhaustive_top(current, clauses, 10), query


def test_a_hash_collision_starts_over_with_the_next_seed(tmp_path, monkeypatch):
    """Seed 0 hashes every key into 16 values (so keys collide); the build notices and takes seed 1."""
    def weak(data, ends, seed):
        hashes = key_hashes(data, ends, seed)
        return hashes & np.uint64(15) if seed == 0 else hashes

    monkeypatch.setattr(impacts_tokens, "key_hashes", weak)
    monkeypatch.setattr(impacts_tokens, "_STATE", [])  # nothing remembered from another build in this process
    path = build_rows([write_rows(tmp_path, 60)], tmp_path / "snap", progress=False).path
    snap = Snapshot.open(path)
    assert snap._index._impacts.meta["seed"] == 1
    clauses = snap._index._clauses("river town title", list(snap._index.fields))
    assert snap._index._impacts.top(clauses, 10) == exhaustive_top(snap._index._impacts, clauses, 10)
    assert snap.search("river town", 3)


def test_the_merge_refuses_two_keys_with_one_hash():
    blob = np.frombuffer(b"body\x00aabody\x00ab", dtype=np.uint8)
    same = np.asarray([5, 5], dtype=np.uint64)
    assert _check_keys(same, blob, np.asarray([0, 7]), np.asarray([7, 14]))[0] == -1  # different keys, one hash
    assert list(_check_keys(same, blob, np.asarray([0, 0]), np.asarray([7, 7]))) == [0]  # one key in two runs
