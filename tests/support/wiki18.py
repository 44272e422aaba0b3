"""A small corpus in FlashRAG's wiki-18 layout (``{"id", "contents": "\\"Title\\"\\ntext"}``, the rows
Search-R1's retrieval server reads) and questions in FlashRAG's NQ layout over it, written here from the
published schemas (not copied): quoted titles, a title that holds quotes, one without quotes, a row without
a title line, titles that repeat over several passages (as wiki-18 cuts an article into 100-word blocks),
non-ASCII text."""

from __future__ import annotations

import json
from pathlib import Path

from stillweb.corpora.build.from_source import build_rows

WIKI18_ROWS = [
    {"id": "1", "contents": '"Lunor Bay"\nLunor Bay is a harbour town on the Vell coast. It was founded in 1712 by '
                            "fishermen from Osk."},
    {"id": "2", "contents": '"Lunor Bay"\nThe harbour of Lunor Bay was rebuilt in 1890 after a storm; its lighthouse, '
                            "designed by Ada Quill, still stands."},
    {"id": "3", "contents": '"Lunor Bay"\nLunor Bay hosts the Vell sailing regatta every August since 1958.'},
    {"id": "4", "contents": '"Osk"\nOsk is a fishing village. Its fishermen founded Lunor Bay.'},
    {"id": "5", "contents": '"Ada Quill"\nAda Quill (1841\u20131913) was an engineer who designed lighthouses on '
                            "the Vell coast, among them the one at Lunor Bay."},
    {"id": "6", "contents": '"Ada Quill"\nQuill was born in M\u00fcnster and studied at the Vell Polytechnic.'},
    {"id": "7", "contents": '"The "Sea" Song"\nThe "Sea" Song is a folk tune sung at the Lunor Bay regatta.'},
    {"id": "8", "contents": 'Marra Tellin\nMarra Tellin (born 1931) is a painter from Lunor Bay. Her teacher was '
                            "Ivo Brandt."},
    {"id": "9", "contents": '"Ivo Brandt"\nIvo Brandt was a sculptor.\nHe taught Marra Tellin in the 1950s.'},
    {"id": "10", "contents": "A passage without a title line about the Vell coast and its storms."},
    {"id": "11", "contents": '"Vell Polytechnic"\nThe Vell Polytechnic\u00a0is a university founded in 1820.'},
    {"id": "12", "contents": '  "Ostra"  \nOstra is the capital of Velland.'},
]

# FlashRAG's NQ layout (id, question, golden_answers), as nq_search.py reads it
NQ_ROWS = [
    {"id": "test_0", "question": "when was lunor bay founded", "golden_answers": ["1712"]},
    {"id": "test_1", "question": "who designed the lighthouse at lunor bay", "golden_answers": ["Ada Quill"]},
    {"id": "test_2", "question": "who taught marra tellin", "golden_answers": ["Ivo Brandt", "Brandt"]},
    {"id": "test_3", "question": "what is the capital of velland", "golden_answers": ["Ostra"]},
]


def write_rows(path: Path, rows: list[dict]) -> Path:
    """``rows`` as JSON lines at ``path``."""
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def build_wiki18(folder: Path) -> tuple[Path, Path]:
    """(the snapshot, the corpus file) of :data:`WIKI18_ROWS` under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = write_rows(folder / "wiki-18.jsonl", WIKI18_ROWS)
    out = folder / "wiki18"
    build_rows([corpus], out, workers=1, progress=False)
    return out, corpus


def search_r1_passages(result: list[dict]) -> str:
    """Search-R1's ``_passages2string`` (search_r1/llm_agent/generation.py), step for step, over one query's
    ``/retrieve`` result: its title is the contents' first line, its text the rest."""
    reference = ""
    for number, item in enumerate(result):
        contents = item["document"]["contents"]
        title = contents.split("\n")[0]
        text = "\n".join(contents.split("\n")[1:])
        reference += f"Doc {number + 1}(Title: {title}) {text}\n"
    return reference
