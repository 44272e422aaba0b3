"""A tiny hand-written world for the environment tests (fixtures ``tiny_world`` and ``world_tasks`` in tests/conftest.py): a 4-hop question with its
evidence chain, plus filler pages, built into a snapshot once per session.

The question: "What is the capital of the country of the birthplace of the
author of The Glass Orchard?" -> The Glass Orchard (author) -> Ada Quill
(birth place) -> Marrow Bay (country) -> Velland (capital) -> Ostra.
"""

from __future__ import annotations

from pathlib import Path

from stillweb.corpora.build.snapshot_writer import build_snapshot
from stillweb.corpora.snapshot.records import RawPage
from stillweb.corpora.snapshot.reading import Snapshot

CHAIN = [
    ("The Glass Orchard", "author", "Ada Quill"),
    ("Ada Quill", "birth_place", "Marrow Bay"),
    ("Marrow Bay", "country", "Velland"),
    ("Velland", "capital", "Ostra"),
]

PAGES = {
    "The Glass Orchard": (
        "{{Infobox book\n| name = The Glass Orchard\n| author = [[Ada Quill]]\n| published = 1840\n}}\n"
        "'''The Glass Orchard''' is a novel written by [[Ada Quill]] and published in 1840.\n\n"
        "It tells of an orchard of glass trees."
    ),
    "Ada Quill": (
        "{{Infobox person\n| name = Ada Quill\n| birth_date = 12 February 1809\n| birth_place = [[Marrow Bay]]\n}}\n"
        "'''Ada Quill''' (born 12 February 1809) was a writer born in [[Marrow Bay]].\n\n"
        "She wrote [[The Glass Orchard]]."
    ),
    "Marrow Bay": (
        "{{Infobox settlement\n| name = Marrow Bay\n| country = [[Velland]]\n| population = 12,000\n}}\n"
        "'''Marrow Bay''' is a port town in [[Velland]] with 12,000 inhabitants."
    ),
    "Velland": (
        "{{Infobox country\n| name = Velland\n| capital = [[Ostra]]\n}}\n"
        "'''Velland''' is a small country. Its capital is [[Ostra]]."
    ),
    "Ostra": "'''Ostra''' is the capital city of [[Velland]]. It lies on a river.",
}
PAGES.update({f"Filler {n}": f"'''Filler {n}''' is a page about orchards, bays and writers number {n}." for n in range(20)})

QUESTION = "What is the capital of the country of the birthplace of the author of The Glass Orchard?"


def build_tiny_world(path: Path) -> Path:
    """Build the tiny world snapshot at ``path``."""
    pages = [RawPage(title=title, text=text) for title, text in PAGES.items()]
    build_snapshot(pages, path, source={"kind": "env-tests"}, parameters={}, progress=False)
    return path


def chain_task(snapshot: Snapshot) -> dict:
    """The 4-hop task record with its evidence (doc ids from the snapshot)."""
    evidence = [
        {"subject": subject, "relation": relation, "value": value, "doc_id": snapshot.resolve(subject), "doc_title": subject}
        for subject, relation, value in CHAIN
    ]
    return {"task_id": "chain", "question": QUESTION, "answer": "Ostra", "aliases": ["Ostra City"], "evidence": evidence}


def simple_tasks() -> list[dict]:
    """Tasks without evidence."""
    return [
        {"task_id": "born", "question": "When was Ada Quill born?", "answer": "1809-02-12"},
        {"task_id": "pop", "question": "How many people live in Marrow Bay?", "answer": "12000"},
    ]
