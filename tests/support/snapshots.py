"""Small snapshots and task lists the tests build, and a digest of a folder's files."""

from __future__ import annotations

import hashlib
from pathlib import Path

from stillweb.corpora.snapshot.records import RawPage
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.build.snapshot_writer import build_snapshot


def snapshot_with_tasks(snapshot_path: Path, out: Path, name: str, count: int = 12) -> Path:
    """A copy of the snapshot at ``out`` with a generated task set ``name`` (seed 0, partial allowed)."""
    import shutil

    from stillweb.corpora.tasks.compose.generate import generate_tasks
    from stillweb.corpora.tasks.compose.attempts import GenerationParams

    # without the task sets other tests wrote into the snapshot: the copy holds the set ``name`` alone whatever ran before
    shutil.copytree(snapshot_path, out, ignore=lambda folder, _names: ["tasks"] if Path(folder) == Path(snapshot_path) else [])
    generate_tasks(out, name, GenerationParams(count=count, seed=0), allow_partial=True)
    return out


def fact_tasks(snapshot_path, count: int = 12) -> list[dict]:
    """One-hop tasks with evidence from the snapshot's first facts about documents."""
    snapshot = Snapshot.open(snapshot_path)
    tasks = []
    for fact in snapshot.facts_table.to_pylist():
        if fact["evidence"] is None or fact["evidence"] < 0 or not fact["value"]:
            continue
        title = snapshot.title_of(fact["subject"])
        evidence = {"subject": title, "relation": fact["relation"], "value": str(fact["value"]),
                    "doc_id": fact["evidence"], "doc_title": snapshot.title_of(fact["evidence"])}
        tasks.append({"task_id": f"fact{len(tasks)}", "question": f"What is the {fact['relation']} of {title}?",
                      "answer": str(fact["value"]), "evidence": [evidence]})
        if len(tasks) == count:
            return tasks
    return tasks


LONG_TEXT = "\n\n".join(
    f"Paragraph {i}. " + "The river flows past the old mill. " * 8 + ("Gold was found here." if i == 7 else "")
    for i in range(30)
)


def tool_test_pages() -> list[RawPage]:
    """The documents of the tool tests: three articles (one long) and a redirect."""
    return [
        RawPage("Marie Curie", "Marie Curie was a physicist born in Warsaw in 1867.\nShe won the Nobel Prize twice.", is_wikitext=False),
        RawPage("Warsaw", "Warsaw is the capital of Poland.\nIt lies on the Vistula river.", is_wikitext=False),
        RawPage("Long River", LONG_TEXT, is_wikitext=False),
        RawPage("1984", "1984 is a novel by George Orwell.", is_wikitext=False),
        RawPage("Curie", "", redirect="Marie Curie", is_wikitext=False),
    ]


def build_tool_snapshot(out: Path) -> Path:
    """Build the tool-test snapshot at ``out`` and return its path."""
    build_snapshot(tool_test_pages(), out, source={"kind": "tool-tests"}, parameters={}, progress=False)
    return out


def files_digest(directory: Path) -> str:
    """sha256 over a folder's files (names and bytes), with the folder's own name blanked."""
    digest = hashlib.sha256()
    for path in sorted(directory.iterdir()):  # the card's title names the set: drop it
        data = path.read_bytes().replace(directory.name.encode(), b"NAME")
        digest.update(path.name.encode() + data)
    return digest.hexdigest()


