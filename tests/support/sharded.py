"""A wiki-18-like row corpus for sharded snapshots (issue 48): ~100-word passages whose words follow a
Zipf law, five passages per title (so a shard boundary can cut a title's passages; the last quarter's titles
repeat the first quarter's, as a corpus may hold two pages of one name far apart), each title's own
rare words repeated in its passages (topical, as an article's names are), and the queries that rank it
(frequent, rare and topical words: many score ties, where per-shard statistics would reorder the top 10).
Seeded (blake2b-keyed generators), so every process writes the same bytes."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from pathlib import Path

from stillweb.corpora.snapshot.reading import Snapshot

VOCABULARY = 20_000
PASSAGES_PER_TITLE = 5


def _generator(*path: object) -> random.Random:
    return random.Random(int.from_bytes(hashlib.blake2b(repr(path).encode(), digest_size=8).digest(), "big"))


def zipf_rows(path: Path, rows: int, seed: int = 0) -> Path:
    """``rows`` wiki-18 rows (``{"id", "contents": "\\"Title\\"\\ntext"}``) written to ``path``."""
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(VOCABULARY)))
    words = [f"w{rank}" for rank in range(VOCABULARY)]
    with path.open("w", encoding="utf-8") as out:
        for row in range(rows):
            topic = row // PASSAGES_PER_TITLE
            draw = _generator(seed, "row", row)
            text = draw.choices(words, cum_weights=cumulative, k=100) + draw.choices([f"t{topic}x{n}" for n in range(3)], k=4)
            title = f"Topic {topic % (rows // PASSAGES_PER_TITLE * 3 // 4)}"  # the last quarter's titles repeat the first's
            out.write(json.dumps({"id": f"r{row}", "contents": f'"{title}"\n{" ".join(text)}'}) + "\n")
    return path


def zipf_queries(rows: int, count: int = 120, seed: int = 0) -> list[str]:
    """Three-word queries: frequent and rare Zipf words, and a title's own word with common ones."""
    draw = _generator(seed, "queries")
    queries = [" ".join(f"w{int(draw.paretovariate(0.7)) % VOCABULARY}" for _ in range(3)) for _ in range(count // 2)]
    topics = rows // PASSAGES_PER_TITLE
    return queries + [f"t{draw.randrange(topics)}x{draw.randrange(3)} w{draw.randrange(100)} w{draw.randrange(2000)}"
                      for _ in range(count - len(queries))]


def search_pages(snapshot: Snapshot, queries: list[str], k: int = 10) -> list[list[tuple]]:
    """Every field of each query's results: ``(doc_id, score, title, snippet, source_id)``."""
    return [[(hit.doc_id, hit.score, hit.title, hit.snippet, hit.source_id) for hit in snapshot.search(query, k)]
            for query in queries]
