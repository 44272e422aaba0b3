"""The tiny world itself: every chain fact is stated in its evidence document."""

from __future__ import annotations

from stillweb.corpora.snapshot.reading import Snapshot
from support.tiny_world import CHAIN


def test_tiny_world_states_every_chain_fact(tiny_world):
    snapshot = Snapshot.open(tiny_world)
    for subject, _, value in CHAIN:
        assert value in snapshot.get(subject).text
