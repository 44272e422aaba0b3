"""Formal core: canonical hash invariance, malformed triples, WebShaper reference figures."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.corpora.tasks.store.card import WEBSHAPER_REFERENCE, question_word_median
from stillweb.corpora.tasks.formalization import (
    canonical_hash,
    constant,
    formalization_stats,
    malformed_reason,
    validate_formalization,
)

BASE = [
    ["?", "director", "V@A"],
    ["V@A", "birth_place", "V@B"],
    ["V@B", "founded", "C@the 1870s"],
    ["V@A", "birth_date", "C@the early 1950s"],
    ["?", "starring", "V@C"],
    ["V@C", "alma_mater", "C@University of X | University of Y"],
]


@settings(max_examples=50, deadline=None)
@given(st.permutations(["A", "B", "C"]), st.randoms(use_true_random=False))
def test_canonical_hash_ignores_variable_names_and_order(names, random):
    renaming = {f"V@{old}": f"V@{new}x" for old, new in zip("ABC", names)}
    renamed = [[renaming.get(s, s), r, renaming.get(o, o)] for s, r, o in BASE]
    random.shuffle(renamed)
    assert canonical_hash(renamed) == canonical_hash(BASE)


def test_canonical_hash_sees_structure_and_constants():
    moved = [list(t) for t in BASE]
    moved[3] = ["V@C", "birth_date", "C@the early 1950s"]
    assert canonical_hash(moved) != canonical_hash(BASE)
    changed = [list(t) for t in BASE]
    changed[2][2] = "C@the 1880s"
    assert canonical_hash(changed) != canonical_hash(BASE)


def test_malformed_triples_are_named():
    assert malformed_reason(["V@A", "r", "C@x"]) is None
    assert malformed_reason(["V@A", "r"]) == "not_three_parts"
    assert malformed_reason(["V@A", "r", "plain"]) == "bad_term"
    assert malformed_reason(["C@a", "r", "C@b"]) == "constants_attached"
    with pytest.raises(ValueError, match="no target"):
        validate_formalization([["V@A", "r", "C@x"]])
    with pytest.raises(ValueError, match="malformed triple 1"):
        validate_formalization([["?", "r", "V@A"], ["V@A", "r", "x"]])
    with pytest.raises(ValueError):
        constant("")


@pytest.mark.shared_data
def test_webshaper_reference_figures(shared_data):
    rows = [json.loads(line) for line in (shared_data / "webshaper.500.jsonl").open(encoding="utf-8")]
    stats = formalization_stats(r["formalization"] for r in rows)
    assert stats.tasks == WEBSHAPER_REFERENCE["tasks"]
    assert stats.malformed_tasks == WEBSHAPER_REFERENCE["malformed_tasks"] == 47
    assert stats.mean_triples == WEBSHAPER_REFERENCE["mean_triples"]
    assert stats.median_triples == WEBSHAPER_REFERENCE["median_triples"]
    assert stats.mean_variables == WEBSHAPER_REFERENCE["mean_variables"]
    assert stats.mean_constants == WEBSHAPER_REFERENCE["mean_constants"]
    assert question_word_median([r["question"] for r in rows]) == WEBSHAPER_REFERENCE["median_question_words"]
