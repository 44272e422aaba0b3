"""``POST /retrieve`` as Search-R1's rollout uses it: whole rollout batches in one request (up to
``--max-batch``, 413 past it, naming the limit and the flag), and a wiki-18 corpus served back byte for
byte (``contents`` with its quoted title, the corpus's own ids), so Search-R1's ``_passages2string``
renders exactly what it renders over its own retrieval server."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.server.app import make_app
from stillweb.server.plumbing import ServerSettings
from stillweb.server.retrieve import RETRIEVE_CHUNK
from support.wiki18 import WIKI18_ROWS, build_wiki18, search_r1_passages


@pytest.fixture(scope="module")
def wiki18(tmp_path_factory):
    return build_wiki18(tmp_path_factory.mktemp("wiki18"))


@pytest.fixture(scope="module")
def client(wiki18):
    return TestClient(make_app([wiki18[0]]))


def test_contents_and_ids_are_the_corpus_rows_byte_for_byte(client, wiki18):
    """Every row comes back as written: quoted titles keep their quotes (and a title holding quotes, a
    title line with spaces around it, a row without a title line, an unquoted title stay as they are)."""
    rows = {json.loads(line)["id"]: json.loads(line)["contents"] for line in wiki18[1].read_text("utf-8").splitlines()}
    queries = [row["contents"].split("\n")[-1] for row in WIKI18_ROWS]  # each row's own last line finds it
    body = client.post("/retrieve", json={"queries": queries, "topk": 3, "return_scores": True}).json()
    served = {item["document"]["id"]: item["document"]["contents"] for result in body["result"] for item in result}
    assert set(served) == set(rows)  # every row was served at least once
    for source_id, contents in served.items():
        assert contents.encode("utf-8") == rows[source_id].encode("utf-8"), source_id
    for query_result in body["result"]:  # Search-R1's rendering of what it got = its rendering of the source rows
        from_source = [{"document": {"contents": rows[item["document"]["id"]]}} for item in query_result]
        assert search_r1_passages(query_result) == search_r1_passages(from_source)
    assert 'Doc 1(Title: "Lunor Bay") Lunor Bay is a harbour town' in search_r1_passages(body["result"][0])


def test_a_snapshot_of_other_rows_serves_title_newline_text(tmp_path):
    corpus = tmp_path / "rows.jsonl"
    corpus.write_text(json.dumps({"id": "a1", "title": "Ostra", "text": "Ostra is a city."}) + "\n", encoding="utf-8")
    from stillweb.corpora.build.from_source import build_rows

    build_rows([corpus], tmp_path / "snap", workers=1, progress=False)
    body = TestClient(make_app([tmp_path / "snap"])).post("/retrieve", json={"queries": ["Ostra"]}).json()
    assert body["result"][0] == [{"id": "a1", "contents": "Ostra\nOstra is a city.", "doc_id": 0}]


def test_search_r1_batches_are_answered_in_query_order(client, wiki18):
    """A batch as large as the default limit (4,096; several search chunks) answers each query as a batch of one."""
    snapshot = Snapshot.open(wiki18[0])
    words = ["Lunor", "lighthouse", "Ada Quill", "painter", "capital", "regatta", "fishing", "storm", "   "]
    queries = [f"{words[number % len(words)]} {number % 7}" if number % len(words) != 8 else "  "
               for number in range(4096)]
    assert len(queries) > 2 * RETRIEVE_CHUNK
    body = client.post("/retrieve", json={"queries": queries, "topk": 3, "return_scores": True})
    assert body.status_code == 200
    result = body.json()["result"]
    assert len(result) == 4096
    for number in (0, 1, 511, 512, 1030, 4095):
        expected = [hit.doc_id for hit in snapshot.search(queries[number], 3)] if queries[number].strip() else []
        assert [item["document"]["doc_id"] for item in result[number]] == expected, number


def test_a_batch_over_the_limit_is_413_naming_the_limit_and_the_flag(wiki18):
    client = TestClient(make_app([wiki18[0]], ServerSettings(max_batch=64)))
    assert client.post("/retrieve", json={"queries": ["Lunor"] * 64}).status_code == 200
    response = client.post("/retrieve", json={"queries": ["Lunor"] * 65})
    assert response.status_code == 413
    body = response.json()
    assert body["error"] == "batch_too_large"
    assert "65 queries" in body["detail"] and "at most 64" in body["detail"] and "--max-batch" in body["detail"]


def test_the_default_limit_takes_search_r1s_example_batch(client):
    """Search-R1's retrieval_request.py example sends 400 queries (was 422 at a limit of 256)."""
    response = client.post("/retrieve", json={"queries": ["Lunor Bay founded"] * 400, "topk": 3, "return_scores": True})
    assert response.status_code == 200 and len(response.json()["result"]) == 400
    assert ServerSettings().max_batch >= 4096


def test_serve_max_batch_flag():
    import argparse

    from stillweb.cli import serve

    parser = argparse.ArgumentParser()
    serve.register(parser.add_subparsers(dest="command"))
    assert parser.parse_args(["serve", "snap"]).max_batch == 4096
    assert parser.parse_args(["serve", "snap", "--max-batch", "10000"]).max_batch == 10000
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "snap", "--max-batch", "0"])


RETRIEVE_SCRIPT = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from fastapi.testclient import TestClient
from stillweb.server.app import make_app
from support.wiki18 import build_wiki18
snapshot, _ = build_wiki18(Path(sys.argv[1]))
body = TestClient(make_app([snapshot])).post("/retrieve", json={"queries": ["Lunor Bay", "Ada Quill", "Ostra"] * 300,
                                                                "topk": 5, "return_scores": True})
sys.stdout.buffer.write(body.content)
"""


def test_retrieve_is_identical_across_processes(tmp_path):
    """Two processes (different hash seeds) build the wiki-18 rows and answer one batch: the same bytes."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    tests = str(Path(__file__).resolve().parents[1])
    outputs = [subprocess.run([sys.executable, "-c", RETRIEVE_SCRIPT, str(tmp_path / seed), tests], capture_output=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}, check=True).stdout for seed in ("1", "2")]
    assert outputs[0] == outputs[1] and b'"\\"Lunor Bay\\"\\nLunor Bay' in outputs[0]


@pytest.mark.extra
def test_skyrl_and_verl_search_tools_render_the_corpus_rows(client, wiki18):
    """SkyRL-gym's search tool sends one ``query`` and renders ``Doc i: <contents>``; verl's search tool
    (verl/tools/utils/search_r1_like_utils.py, not in the installed verl) sends Search-R1's
    ``{"queries", "topk", "return_scores": true}`` and renders ``Doc i (Title: <first line>)\\n<rest>``. Both
    render from ``contents``, so they show over stillweb what they show over their own server: the rows."""
    skyrl = pytest.importorskip("skyrl_gym.tools.search")
    rows = {json.loads(line)["id"]: json.loads(line)["contents"] for line in wiki18[1].read_text("utf-8").splitlines()}
    body = client.post("/retrieve", json={"query": "Lunor Bay lighthouse", "topk": 3, "return_scores": True}).json()
    result = body["result"][0]
    from_source = [{"document": {"contents": rows[item["document"]["id"]]}} for item in result]
    assert len(result) == 3 and skyrl._passages2string(result) == skyrl._passages2string(from_source)
    assert skyrl._passages2string(result).startswith('Doc 1: "Lunor Bay"\n')

    def verl_passages(retrieval_result):  # verl's _passages2string, step for step
        reference = ""
        for number, item in enumerate(retrieval_result):
            lines = item["document"]["contents"].split("\n")
            reference += f"Doc {number + 1} (Title: {lines[0]})\n" + "\n".join(lines[1:]) + "\n\n"
        return reference.strip()

    verl_body = client.post("/retrieve", json={"queries": ["Lunor Bay lighthouse"], "topk": 3, "return_scores": True})
    assert verl_passages(verl_body.json()["result"][0]) == verl_passages(from_source)
