"""scripts/multihop_passages.py: HotpotQA/2Wiki sentences and MuSiQue paragraphs as BEIR passages with qrels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "multihop_passages.py"

MUSIQUE = [  # MuSiQue's record shape (github.com/StonyBrookNLP/musique), made-up text
    {"id": "2hop__1_2", "question": "Who founded the city on the Vell?", "answer": "Aldo",
     "paragraphs": [{"idx": 0, "title": "Lunor", "paragraph_text": "Lunor lies on the Vell.", "is_supporting": True},
                    {"idx": 1, "title": "Aldo", "paragraph_text": "Aldo founded Lunor.", "is_supporting": True},
                    {"idx": 2, "title": "Kest", "paragraph_text": "Kest is a village.", "is_supporting": False}]},
    {"id": "2hop__3_4", "question": "Where is Kest?", "answer": "Velland",
     "paragraphs": [{"idx": 0, "title": "Kest", "paragraph_text": "Kest is a village.", "is_supporting": True},
                    {"idx": 1, "title": "Ostra", "paragraph_text": " ", "is_supporting": False}]},
]
HOTPOT = [{"_id": "h1", "question": "What river runs through Lunor?", "answer": "Vell",
           "supporting_facts": [["Lunor", 1]],
           "context": [["Lunor", ["Lunor is a city.", "The Vell runs through it.", "It is old."]], ["Kest", ["Kest."]]]}]


def _beir(tmp_path: Path, records: list[dict], *extra: str) -> tuple[list[dict], list[str], list[str]]:
    source = tmp_path / "data.json"
    source.write_text(json.dumps(records))
    out = tmp_path / "beir"
    subprocess.run([sys.executable, str(SCRIPT), str(source), "--out", str(out), *extra], check=True, capture_output=True)
    corpus = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    return corpus, (out / "queries.jsonl").read_text().splitlines(), (out / "qrels" / "test.tsv").read_text().splitlines()


def test_musique_paragraphs_are_passages_and_supporting_ones_are_relevant(tmp_path):
    corpus, queries, qrels = _beir(tmp_path, MUSIQUE)
    assert [(row["_id"], row["title"], row["text"]) for row in corpus] == [
        ("d0p0", "Lunor", "Lunor lies on the Vell."), ("d0p1", "Aldo", "Aldo founded Lunor."),
        ("d0p2", "Kest", "Kest is a village."), ("d0p3", "Ostra", "Ostra")]  # the same paragraph once; blank -> title
    assert json.loads(queries[1]) == {"_id": "d0q1", "text": "Where is Kest?"}
    assert qrels == ["query-id\tcorpus-id\tscore", "d0q0\td0p0\t1", "d0q0\td0p1\t1", "d0q1\td0p2\t1"]


def test_hotpot_sentences_are_cut_into_passages(tmp_path):
    corpus, _queries, qrels = _beir(tmp_path, HOTPOT, "--sentences", "2")
    assert [(row["_id"], row["text"]) for row in corpus] == [
        ("d0p0", "Lunor is a city. The Vell runs through it."), ("d0p1", "It is old."), ("d0p2", "Kest.")]
    assert qrels[1:] == ["d0q0\td0p0\t1"]
