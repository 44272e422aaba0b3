"""Evidence maps to the passage that holds it when a title repeats over many passages (wiki-18 rows,
MuSiQue's paragraphs as a corpus): never to the title's first passage, nor to the passage before the one
that holds it (a passage and the next one together hold the next one's text too)."""

from __future__ import annotations

import json

from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.importers import ImportOptions, import_tasks
from stillweb.corpora.tasks.store.files import read_tasks
from support.wiki18 import write_rows

PARAGRAPHS = {
    "Richard Feynman": [
        "Richard Phillips Feynman (May 11, 1918 - February 15, 1988) was an American theoretical physicist.",
        "At Los Alamos Feynman led the theoretical computations group under Hans Bethe.",
        "Feynman's other work at Los Alamos included calculating neutron equations for the Water Boiler reactor.",
        "After the war Feynman declined an offer from the Institute for Advanced Study in Princeton.",
    ],
    "Los Alamos": [
        "Los Alamos is a town in New Mexico, built for the Manhattan Project.",
        "The Water Boiler at Los Alamos was the first aqueous homogeneous reactor.",
    ],
    "Hans Bethe": ["Hans Bethe was a German-American physicist who headed the theoretical division at Los Alamos."],
}


def musique_row(number: int, supporting: list[tuple[str, int]]) -> dict:
    paragraphs = [{"idx": index, "title": title, "paragraph_text": PARAGRAPHS[title][position],
                   "is_supporting": (title, position) in supporting}
                  for index, (title, position) in enumerate((t, p) for t in PARAGRAPHS for p in range(len(PARAGRAPHS[t])))]
    return {"id": f"2hop__{number}_{number + 100}", "paragraphs": paragraphs, "question": f"Question {number}?",
            "question_decomposition": [], "answer": "Water Boiler", "answer_aliases": [], "answerable": True}


def test_every_mapped_passage_holds_its_text(tmp_path):
    rows = [{"id": f"{title[:2]}{position}", "contents": f'"{title}"\n{text}'}
            for title, texts in PARAGRAPHS.items() for position, text in enumerate(texts)]
    build_rows([write_rows(tmp_path / "corpus.jsonl", rows)], tmp_path / "snap", workers=1, progress=False)
    questions = [musique_row(0, [("Richard Feynman", 2), ("Los Alamos", 1)]),
                 musique_row(1, [("Richard Feynman", 1), ("Hans Bethe", 0)]),
                 musique_row(2, [("Richard Feynman", 3), ("Los Alamos", 0)]),
                 musique_row(3, [("Richard Feynman", 0)])]
    (tmp_path / "musique_dev.jsonl").write_text("".join(json.dumps(row) + "\n" for row in questions), encoding="utf-8")
    import_tasks(tmp_path / "snap", [tmp_path / "musique_dev.jsonl"], "msq",
                 ImportOptions(progress=False, retrieval=False, format="musique"))
    snapshot = Snapshot.open(tmp_path / "snap")
    tasks = {task.task_id: task for split in ("train", "dev", "test") for task in read_tasks(tmp_path / "snap", "msq", split)}
    checked = 0
    for question in questions:
        task = tasks[question["id"]]
        supporting = [p for p in question["paragraphs"] if p["is_supporting"]]
        assert len(task.evidence) == len(supporting)
        for item, paragraph in zip(task.evidence, supporting):
            assert item.doc_id >= 0
            assert paragraph["paragraph_text"] in snapshot.text_of(item.doc_id), (question["id"], paragraph["title"])
            checked += 1
    assert checked == 7
