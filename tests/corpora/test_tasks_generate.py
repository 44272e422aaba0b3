"""Task generation on a synthetic snapshot: proofs, evidence, splits, files, determinism, bad input."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stillweb.corpora.tasks.compose.params import ComposeParams
from stillweb.corpora.tasks.formalization import malformed_reason
from stillweb.corpora.tasks.compose.generate import TaskGenerationError, answer_group, generate_task_list, generate_tasks
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.graph import normalize_text
from stillweb.corpora.tasks.phrase.patterns import sentences
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.corpora.tasks.task_world import MemoryWorld, open_world
from support.snapshots import files_digest


@pytest.fixture(scope="module")
def generated(small_snapshot):
    return generate_task_list(small_snapshot, GenerationParams(count=120, seed=0, compose=ComposeParams(min_hops=2, max_hops=5)))


def test_every_task_is_well_formed_and_evidenced(generated, small_snapshot):
    world = open_world(small_snapshot)
    assert len(generated.tasks) == 120
    for task in generated.tasks:
        assert task.formalization and all(malformed_reason(t) is None for t in task.formalization)
        assert any("?" in (t[0], t[2]) for t in task.formalization)
        assert 2 <= task.hops <= 5 and task.level in (1, 2, 3)
        assert task.candidates_per_hop[-1] >= 1 and task.constraints >= 1
        for item in task.evidence:
            assert normalize_text(item.value) in normalize_text(world.text_of(item.doc_id))
            assert item.doc_title == world.title_of(item.doc_id)
        assert not re.search(rf"(?<!\w){re.escape(normalize_text(task.answer))}(?!\w)", normalize_text(task.question))


def test_no_constant_on_target_and_no_duplicates(generated):
    for task in generated.tasks:
        for s, _, o in task.formalization:
            assert not ("?" in (s, o) and (s.startswith("C@") or o.startswith("C@")))
    hashes = [t.canonical_hash for t in generated.tasks]
    assert len(set(hashes)) == len(hashes)
    assert len({t.task_id for t in generated.tasks}) == len(hashes)


def test_splits_share_no_answer(generated):
    split_of_answer = {}
    for task in generated.tasks:
        key = task.answer if task.shape.startswith("value") else task.answer_doc  # two places may share a name
        assert split_of_answer.setdefault((task.answer, key), task.split) == task.split
    assert set(Counter(t.split for t in generated.tasks)) >= {"train", "test"}


def test_diversity_and_rejections_are_reported(generated):
    # Keyed questions (issue 40) walk only pinning relations: fewer shapes than the 20+ of unkeyed ones.
    assert len({t.shape for t in generated.tasks}) >= 10
    assert set(Counter(t.level for t in generated.tasks)) == {1, 2, 3}
    assert generated.rejections["no_key"] + generated.rejections["no_chain"] > 0
    assert sum(v for k, v in generated.rejections.items() if k.startswith("shortcut:")) > 0
    assert generated.attempts == len(generated.tasks) + sum(generated.rejections.values())


def test_level_filter(small_snapshot):
    result = generate_task_list(small_snapshot, GenerationParams(count=10, seed=1, compose=ComposeParams(min_hops=2, max_hops=4, level=3)))
    assert {t.level for t in result.tasks} == {3}


_SCRIPT = (
    "import sys; from stillweb.corpora.tasks.compose.generate import GenerationParams, generate_tasks; "
    "from stillweb.corpora.tasks.compose.operations import ComposeParams; "
    "generate_tasks(sys.argv[1], sys.argv[2], GenerationParams(count=40, seed=7, compose=ComposeParams(max_hops=5)), "
    "workers=int(sys.argv[3]))"
)


@pytest.mark.slow
def test_files_are_byte_identical_across_processes_and_workers(small_snapshot, tmp_path):
    digests = []
    for name, workers in (("det-a", 1), ("det-b", 1), ("det-c", 2)):
        subprocess.run([sys.executable, "-c", _SCRIPT, str(small_snapshot), name, str(workers)], check=True)
        directory = small_snapshot / "tasks" / name
        digests.append(files_digest(directory))
    assert digests[0] == digests[1] == digests[2]
    card = (small_snapshot / "tasks" / "det-a" / "card.md").read_text()
    assert "snapshot fingerprint" in card and "no_chain" in card and "shortcut (all)" in card
    tasks = read_tasks(small_snapshot, "det-a", "train")
    assert tasks and tasks[0].evidence and len(tasks[0].formalization[0]) == 3
    schema = pq.read_schema(directory.parent / "det-a" / "train.parquet")
    assert pa.types.is_list(schema.field("aliases").type) and pa.types.is_list(schema.field("evidence").type)


def _pairs_world(pairs: int = 5) -> MemoryWorld:
    """Films each directed by their own person: no chain is longer than 2 hops."""
    titles, texts, facts = {}, {}, []
    for i in range(pairs):
        film, person = 2 * i, 2 * i + 1
        titles[film], titles[person] = f"Film{i}", f"Person{i}"
        texts[film], texts[person] = f"Directed by Person{i}.", f"Born {1950 + i}."
        facts.append(dict(subject=film, relation="director", value=f"Person{i}", value_type="entity", object=person, evidence=film))
        facts.append(dict(subject=person, relation="birth_year", value=str(1950 + i), value_type="year", number=1950.0 + i, evidence=person))
    return MemoryWorld(titles, texts, facts)


def test_impossible_hops_explain_themselves():
    with pytest.raises(TaskGenerationError, match=r"made 0 of 5 tasks in \d+ attempts \(min_hops=9.*no_chain="):
        generate_task_list(_pairs_world(), GenerationParams(count=5, compose=ComposeParams(min_hops=9, max_hops=9)))
    made = generate_task_list(_pairs_world(), GenerationParams(count=3, compose=ComposeParams(min_hops=2, max_hops=2)))
    assert len(made.tasks) == 3


def test_shortfall_writes_nothing_unless_partial_allowed(small_snapshot):
    with pytest.raises(TaskGenerationError, match=r"made \d+ of 1200 tasks in 1200 attempts.*--allow-partial"):
        generate_tasks(small_snapshot, "never", GenerationParams(count=1200, seed=0, attempts_per_task=1))
    assert not (small_snapshot / "tasks" / "never").exists()


def test_world_without_facts_is_refused():
    """No facts at all, or only value facts (a year, a number: nothing links one entity to another): refused, the
    message counting the facts it did have; one entity fact more and the same world composes tasks."""
    empty = MemoryWorld({0: "A"}, {0: "text"}, [])
    with pytest.raises(TaskGenerationError, match="made 0 of 3 tasks: the snapshot has 0 facts and no entity-to-entity facts"):
        generate_task_list(empty, GenerationParams(count=3))
    world = _pairs_world()
    values_only = MemoryWorld(world.titles, world.texts, [fact for fact in world.facts if fact["value_type"] != "entity"])
    with pytest.raises(TaskGenerationError, match="the snapshot has 5 facts and no entity-to-entity facts"):
        generate_task_list(values_only, GenerationParams(count=3))
    assert len(generate_task_list(world, GenerationParams(count=3)).tasks) == 3


def test_bad_parameters_name_the_value(small_snapshot):
    with pytest.raises(ValueError, match="count must be a positive integer, got 0"):
        GenerationParams(count=0)
    with pytest.raises(ValueError, match="bad task set name"):
        generate_tasks(small_snapshot, "../escape", GenerationParams(count=3))


def test_hard_end_matches_webshaper_complexity(small_snapshot):
    """Level 3, 4-6 hops: WebShaper-sized formalizations (>= 12 triples, >= 6 constants,
    >= 4 variables on average), layer-wise, unique, and solvable by the reference agent."""
    from stillweb.corpora.tasks.formalization import formalization_stats
    from stillweb.envs.wikiqa.solvability import solve_with_reference

    params = GenerationParams(count=30, seed=4, compose=ComposeParams(min_hops=4, max_hops=6, level=3))
    result = generate_task_list(small_snapshot, params)
    stats = formalization_stats(t.formalization for t in result.tasks)
    # Keyed (issue 40) and minimal: 11 triples on this 300-article world (12.2 before keys, unkeyed).
    assert stats.mean_triples >= 10.5 and stats.mean_constants >= 5.5 and stats.mean_variables >= 4
    assert stats.malformed_tasks == 0
    for task in result.tasks:
        for s, _, o in task.formalization:
            assert not ("?" in (s, o) and "C@" in (s[:2], o[:2]))  # no constant on the target
            assert not (s.startswith("C@") and o.startswith("C@"))  # constants never attached to each other
    for task in result.tasks[:5]:
        assert solve_with_reference(small_snapshot, task).solved, task.question


def test_deep_variables_get_sentences_of_their_own(small_snapshot):
    made = generate_task_list(small_snapshot, GenerationParams(count=40, seed=4, compose=ComposeParams(min_hops=4, max_hops=5)))
    deep = [t for t in made.tasks if t.hops >= 4 and t.shape.startswith("entity")]  # values tell their subject first
    # Every variable is told in a sentence of its own first (issue 40; issue 49: each entity, then the ask) ...
    assert deep and all(len(sentences(t.question)) >= 3 for t in deep), [t.question for t in deep]
    # ... and named after by a handle ("that city", "the spouse", "that painter's spouse"), not described again
    assert all(re.search(r"\b(?:that|this|the) [a-z]|'s ", t.question.split(". ", 1)[1]) for t in deep)


def test_parallel_generation_opens_the_world_once_in_the_parent(small_snapshot, monkeypatch):
    import stillweb.corpora.tasks.compose.generate as generate

    opened = []
    real = generate.open_world
    monkeypatch.setattr(generate, "open_world", lambda source: opened.append(source) or real(source))
    summary = generate.generate_tasks(small_snapshot, "once", GenerationParams(count=5, seed=2), workers=2)
    assert summary.count == 5 and len(opened) == 1


def _assert_diverse(tasks) -> None:
    """Issue 35: no answer over 5% of a set of 100+, distinct answers >= 30%, dev and test non-empty from 20."""
    from stillweb.corpora.tasks.compose.generate import answer_group

    groups = Counter(answer_group(t) for t in tasks)
    if len(tasks) >= 100:
        assert max(groups.values()) <= 0.05 * len(tasks), groups.most_common(3)
        assert len(groups) >= 0.3 * len(tasks)
    if len(tasks) >= 20:
        assert {"dev", "test"} <= {t.split for t in tasks}
    split_of_group = {}
    for task in tasks:
        assert split_of_group.setdefault(answer_group(task), task.split) == task.split  # no answer in two splits


def test_answers_are_diverse_by_quota(generated):
    _assert_diverse(generated.tasks)
    assert max(Counter(answer_group(t) for t in generated.tasks).values()) <= 3  # two places may share a name


def test_quota_is_enforced_in_generation_not_after(small_snapshot):
    # seed 0: on format 4's page ranking seed 2's 40 tasks hold two places sharing a name (one answer group each)
    one = generate_task_list(small_snapshot, GenerationParams(count=40, seed=0, max_per_answer=1))
    assert len(one.tasks) == 40 and len({answer_group(t) for t in one.tasks}) == 40  # two places may share a name
    assert one.rejections["answer_quota"] > 0
    assert one.attempts == len(one.tasks) + sum(one.rejections.values())
    with pytest.raises(ValueError, match="max_per_answer must be a positive integer, got 0"):
        GenerationParams(count=3, max_per_answer=0)


def test_empty_dev_or_test_takes_whole_answer_groups():
    from stillweb.corpora.tasks.store.splits import fill_empty_splits

    keys = [f"k{i % 7}" for i in range(28)]
    filled = fill_empty_splits(["train"] * 28, keys)
    assert {"dev", "test"} <= set(filled)
    assert all(len({s for s, k in zip(filled, keys) if k == key}) == 1 for key in set(keys))
    assert fill_empty_splits(["train"] * 9, keys[:9]) == ["train"] * 9  # small sets are left as hashed
    assert fill_empty_splits(["train", "dev", "test"] * 10, keys[:30]) == ["train", "dev", "test"] * 10


@pytest.mark.slow  # ~30 s: 20,000 attempts over the real sample
@pytest.mark.shared_data
def test_real_sample_gives_keyed_diverse_tasks(wiki_snapshot):
    """The shared dump sample: 168 tasks with 19 distinct answers (76% one organisation) before issue 35.
    Keyed (issue 40), its 45 infobox pages give 21 tasks in 20,000 attempts, not 100: the pages
    hardly link each other (4 page-to-page facts), so few chains of pinning relations exist."""
    result = generate_task_list(wiki_snapshot, GenerationParams(count=400, seed=3))  # one page each: no chain (issue 49)
    assert len(result.tasks) >= 15, result.rejections
    assert result.rejections["no_chain"] + result.rejections["no_key"] > len(result.tasks)
    _assert_diverse(result.tasks)
