"""Answer normalization, task loading, reward parts and the context manager (no snapshot needed)."""

from __future__ import annotations

import base64
import hashlib
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stillweb.envs.core.context import ContextConfig, ContextManager, ToolEvent, Turn, approx_token_count, tiktoken_counter
from stillweb.corpora.tasks.answer_match import answers_match, best_f1, normalize_answer
from stillweb.envs.scoring.rewards import RewardConfig, gamma_credits
from stillweb.envs.wikiqa.citations import EpisodeTrace, score_episode
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.core.task_loader import load_tasks
from stillweb.sandboxes import ToolResult


@pytest.mark.parametrize(
    "left, right",
    [
        ("1,000", "1000"),
        ("12 February 1809", "February 12, 1809"),
        ("February 12, 1809", "1809-02-12"),
        ("12th of Feb. 1809", "1809-02-12"),
        ("The Eiffel Tower", "eiffel tower!"),
        ("U.S.A.", "USA"),
        ("Zoë", "zoe"),
        ("3.50", "3.5"),
    ],
)
def test_equivalent_answers_match(left, right):
    assert answers_match(left, [right])


@pytest.mark.parametrize("left, right", [("1809", "1810"), ("3.5", "35"), ("", ""), ("May 2020", "2020-05-01")])
def test_different_answers_do_not_match(left, right):
    assert not answers_match(left, [right])


def test_f1_is_partial_credit():
    assert best_f1("Charles Darwin", ["Darwin", "C. Darwin"]) == pytest.approx(2 / 3)
    assert normalize_answer("  A  tale ") == "tale"


CHAIN = [
    {"subject": "Book", "relation": "author", "value": "Ann", "doc_id": 1, "doc_title": "Book"},
    {"subject": "Ann", "relation": "birth_place", "value": "Town", "doc_id": 2, "doc_title": "Ann"},
]
TASK = TaskRecord.from_dict({"question": "q", "answer": "Town", "aliases": ["Town City"], "evidence": CHAIN})


def test_default_reward_is_binary_outcome_only():
    parts = score_episode(TASK, EpisodeTrace(answer="town city", steps=4), RewardConfig())
    assert (parts.outcome, parts.total) == (1.0, 1.0)
    assert parts.counts.unsupported_answer == 1  # never seen in an observation: counted, not penalised
    wrong = score_episode(TASK, EpisodeTrace(answer="Village", steps=4), RewardConfig())
    assert (wrong.outcome, wrong.total) == (0.0, 0.0)


def test_gamma_decay_credits_and_scalar():
    assert gamma_credits(1.0, 3, 0.5) == (0.25, 0.5, 1.0)
    config = RewardConfig(outcome=0.0, gamma_decay=1.0, gamma=0.5, gamma_scalar="first")
    parts = score_episode(TASK, EpisodeTrace(answer="Town", steps=3), config)
    assert parts.total == 0.25 and parts.gamma_credits == (0.25, 0.5, 1.0)


def test_citations_gate_rubric_and_penalties():
    trace = EpisodeTrace(
        answer="Town",
        steps=5,
        cited=(1, 2, None, 7),
        seen_docs=frozenset({1, 2}),
        opened_docs=frozenset({1, 2}),
        observation_text="ann was born in town",
    )
    config = RewardConfig(citation_gate=True, rubric=1.0, penalty_bad_citation=0.1)
    parts = score_episode(TASK, trace, config)
    assert (trace.counts.bad_citation, trace.counts.unsupported_answer) == (0, 0)  # the input is not changed
    assert parts.citation_precision == pytest.approx(2 / 3)
    assert parts.citation_recall == 1.0 and parts.provenance_ok and parts.rubric == 1.0
    assert parts.counts.bad_citation == 2 and parts.counts.unsupported_answer == 0
    assert parts.total == pytest.approx(1.0 + 1.0 - 0.2)
    # Only the last hop cited: the gate drops the outcome, the rubric keeps the connected fact.
    partial = score_episode(TASK, EpisodeTrace(answer="Town", steps=5, cited=(2,), seen_docs=frozenset({2}), opened_docs=frozenset({2})), config)
    assert (partial.outcome, partial.rubric) == (0.0, 0.5)
    # A wrong answer (even an intermediate entity) earns no rubric.
    assert score_episode(TASK, EpisodeTrace(answer="Ann", cited=(1, 2), opened_docs=frozenset({1, 2})), config).rubric == 0.0


def test_reward_config_rejects_unknown_fields_and_bad_gamma():
    with pytest.raises(ValueError, match="outcom"):
        RewardConfig.from_value({"outcom": 1.0})
    with pytest.raises(ValueError, match="gamma"):
        RewardConfig(gamma=0.0)


def test_tasks_load_from_lists_jsonl_parquet_and_names(tmp_path):
    records = [{"question": "q1", "answer": "a1", "aliases": json.dumps(["A1"]), "evidence": json.dumps(CHAIN)}, {"question": "q2", "answer": "a2"}]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    named = tmp_path / "snap" / "tasks" / "hard"
    named.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(records), named / "dev.parquet")
    for tasks in (load_tasks(records), load_tasks(jsonl), load_tasks("hard", tmp_path / "snap", split="dev")):
        assert [t.question for t in tasks] == ["q1", "q2"]
        assert tasks[0].golds == ("a1", "A1") and tasks[0].evidence_docs == (1, 2)
        assert tasks[0].task_id == load_tasks(records)[0].task_id
    with pytest.raises(ValueError, match="nope"):
        load_tasks(records).by_id("nope")
    with pytest.raises(ValueError, match="answer"):
        load_tasks([{"question": "q"}])
    with pytest.raises(FileNotFoundError, match="missing"):
        load_tasks("missing", tmp_path / "snap")


def RENDER(results):
    return "\n".join(result.text for result in results)


def _turn(name, arguments, text, listed=(), opened=None):
    result = ToolResult(name=name, text=text, data=None)
    return Turn(action=f"call {name}", events=(ToolEvent(name, arguments, result, listed, opened),), observation=text)


def test_context_manager_condenses_pages_drops_dead_searches_and_keeps_budget():
    head = [{"role": "system", "content": "tools"}, {"role": "user", "content": "Where was Ann born?"}]
    page = "Ann is a writer. " + "Filler sentence here. " * 200 + "Ann was born in Town."
    turns = [
        _turn("search", {"query": "unrelated"}, "1. [doc 9] Other\n" * 50, listed=(9,)),
        _turn("search", {"query": "Ann born"}, "1. [doc 1] Ann", listed=(1,)),
        _turn("open", {"doc": 1}, page, opened=1),
        _turn("find", {"doc": 1, "pattern": "born"}, "1 line(s): Ann was born in Town."),
    ]
    manager = ContextManager(ContextConfig(budget_tokens=10_000))
    context = manager.build(head, turns, render=RENDER)
    reasons = sorted((item.turn, item.reason) for item in context.dropped)
    assert reasons == [(0, "search_not_followed"), (2, "page_condensed")]
    contents = [message["content"] for message in context.messages]
    assert contents[:2] == ["tools", "Where was Ann born?"]
    assert "Ann was born in Town." in contents[7] and len(contents[7]) < 500
    assert context.tokens == sum(approx_token_count(text) for text in contents)
    tight = ContextManager(ContextConfig(budget_tokens=40)).build(head, turns, render=RENDER)
    assert any(item.reason == "over_budget" for item in tight.dropped)
    assert tight == ContextManager(ContextConfig(budget_tokens=40)).build(head, turns, render=RENDER)


def test_tiktoken_counter_is_none_without_tiktoken(monkeypatch):
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken now raises ImportError
    monkeypatch.setitem(sys.modules, "tiktoken.load", None)
    assert tiktoken_counter() is None


@pytest.mark.extra("verifiers")  # tiktoken comes with verifiers (through renderers)
def test_tiktoken_counter_reads_a_cached_encoding_and_never_downloads(monkeypatch, tmp_path):
    """An encoding in tiktoken's local cache counts tokens; the same encoding not cached gives None, its blob never
    fetched nor the cache written (a local file stands for the blob URL: tiktoken's read_file fetches both)."""
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load
    import tiktoken.registry

    cached = b"".join(base64.b64encode(bytes([i])) + b" %d\n" % i for i in range(256))
    blob = tmp_path / "blob" / "bytes.tiktoken"  # where tiktoken would fetch it from (read_file reads URLs and paths alike)
    blob.parent.mkdir()
    blob.write_bytes(cached)
    url, cache = str(blob), tmp_path / "cache"
    cache.mkdir()

    def byte_level():  # tiktoken's plugin constructor shape: one token per byte, words split as cl100k_base does
        ranks = tiktoken.load.load_tiktoken_bpe(url)
        return {"name": "stillweb-bytes", "pat_str": r"\s+|\S+", "mergeable_ranks": ranks, "special_tokens": {}}

    tiktoken.registry.list_encoding_names()  # loads the plugin constructors
    monkeypatch.setitem(tiktoken.registry.ENCODING_CONSTRUCTORS, "stillweb-bytes", byte_level)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    read_file = tiktoken.load.read_file
    assert tiktoken_counter("stillweb-bytes") is None  # not cached: the blob is not fetched
    assert list(cache.iterdir()) == [] and tiktoken.load.read_file is read_file
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(cached)
    counter = tiktoken_counter("stillweb-bytes")
    assert counter is not None and counter("hello world") == len(b"hello world") and counter("é") == 2
    assert tiktoken.load.read_file is read_file


def test_rubric_connects_facts_to_an_entity_answer_through_its_subject():
    """Entity answers are the subject of the facts describing them (the synthetic generator's usual shape)."""
    evidence = [
        {"subject": "Mira", "relation": "birth_place", "value": "Town", "doc_id": 1, "doc_title": "Mira"},
        {"subject": "Mira", "relation": "alma_mater", "value": "College", "doc_id": 1, "doc_title": "Mira"},
        {"subject": "Other", "relation": "alma_mater", "value": "College", "doc_id": 3, "doc_title": "Other"},
    ]
    task = TaskRecord.from_dict({"question": "q", "answer": "Mira", "evidence": evidence})
    full = score_episode(task, EpisodeTrace(answer="Mira", cited=(1, 3), opened_docs=frozenset({1, 3})), RewardConfig())
    assert full.rubric == 1.0
    only_answer_doc = score_episode(task, EpisodeTrace(answer="Mira", cited=(1,), opened_docs=frozenset({1, 3})), RewardConfig())
    assert only_answer_doc.rubric == pytest.approx(2 / 3)


def test_task_picker_is_keyed_by_the_last_seed_and_the_reset_count():
    from stillweb.envs.core.task_loader import TaskPicker, TaskSet

    tasks = TaskSet([TaskRecord.from_dict({"question": f"q{i}", "answer": str(i)}) for i in range(50)], source="test")
    first, second = TaskPicker(tasks, "test"), TaskPicker(tasks, "test")
    run = [first.pick(7, None)] + [first.pick(None, None) for _ in range(5)]
    assert [second.pick(7, None)] + [second.pick(None, None) for _ in range(5)] == run
    assert len({task.task_id for task in run}) > 1  # unseeded resets move on to other tasks
    assert first.pick(7, None) == run[0]  # reseeding restarts the sequence
    assert first.pick(None, {"task_id": run[3].task_id}) == run[3]
    by_namespace = {name: [TaskPicker(tasks, name).pick(seed, None) for seed in range(10)] for name in ("test", "other")}
    assert by_namespace["test"] != by_namespace["other"]  # each env draws from its own stream
    with pytest.raises(ValueError, match="unknown task_id"):
        first.pick(None, {"task_id": "nope"})
