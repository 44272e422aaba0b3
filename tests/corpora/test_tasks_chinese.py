"""Chinese questions: ``tasks generate`` on a snapshot indexed as Chinese writes them from the Chinese
relation table, over the same queries, proofs, answer keys and shortcut filter as the English ones;
the synthetic world built with ``--language zh`` is written in Chinese with the same facts byte for byte."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest

from stillweb.corpora.build.from_source import build_synthetic
from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.compose.attempts import GenerationParams, attempt_task
from stillweb.corpora.tasks.compose.params import ComposeParams
from stillweb.corpora.tasks.compose.generate import generate_task_list, open_world
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.phrase.phrasing import PHRASING_PATH
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.tasks.store.files import read_tasks
from stillweb.corpora.tasks.phrase.verbalize_zh import _phrase, question_language, year_period_text, zh_date, zh_relations
from stillweb.corpora.tasks.phrase.patterns import reading_figures, reading_problems, sentences, stacked_de
from support.snapshots import files_digest

PARAMS = GenerationParams(count=12, seed=3, compose=ComposeParams(min_hops=1, max_hops=4), unanswerable=0.3)
_ENGLISH_WORDS = re.compile(r"\b(?:who|that|which|what|the|was|is|of|and|whose|where)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    """The 300-article synthetic world (seed 0) indexed as English and as Chinese."""
    folder = tmp_path_factory.mktemp("zhworld")
    return (build_synthetic(300, 0, folder / "en", workers=1, progress=False).path,
            build_synthetic(300, 0, folder / "zh", workers=1, progress=False, language="zh").path)


def test_every_relation_of_the_english_table_has_a_chinese_entry():
    with open(PHRASING_PATH, "rb") as handle:
        english = set(tomllib.load(handle)["relations"])
    assert english <= set(zh_relations())
    for relation in english:
        forward = _phrase(relation, True, "某物", "")
        backward = _phrase(relation, False, "某物", "")
        assert "某物" in forward and "某物" in backward and "{" not in forward + backward, relation
        assert not forward.startswith("的") and re.search(r"[\u4e00-\u9fff]", forward), relation


def test_chinese_values():
    assert zh_date("1992-03-04") == "1992年3月4日" and zh_date("1992") == "1992"
    assert [year_period_text(*p) for p in ((1880, 1889), (1990, 1993), (1994, 1996), (1997, 1999), (1900, 1949))] == [
        "1880年代", "1990年代初", "1990年代中期", "1990年代末", "20世纪上半叶"]


def test_same_facts_and_chinese_questions_over_the_same_queries(snapshots):
    english, chinese = snapshots
    assert (english / "facts.parquet").read_bytes() == (chinese / "facts.parquet").read_bytes()
    texts = [Snapshot.open(path).text_of(120) for path in (english, chinese)]
    assert "概况" not in texts[0] and "概况\n" in texts[1] and "出生于" in texts[1]
    graphs = [FactGraph(open_world(path)) for path in (english, chinese)]
    assert [question_language(graph) for graph in graphs] == ["en", "zh"]
    compared = 0
    for index in range(200):
        en, zh = (attempt_task(graph, PARAMS, index, "fp")[0] for graph in graphs)
        if en is None or zh is None:  # the shortcut filter searches each index with its own analyzer
            continue
        compared += 1
        assert (zh.formalization, zh.canonical_hash, zh.split, zh.evidence, zh.answerable) == (
            en.formalization, en.canonical_hash, en.split, en.evidence, en.answerable)
        assert re.search(r"[\u4e00-\u9fff]", zh.question) and zh.question.endswith(("？", "。"))
        assert not re.search(r"(出生|逝世)于[^、并的]*(、|并且)\1于", zh.question), zh.question  # date and place said once
        assert not _ENGLISH_WORDS.search(re.sub(r"[A-Z][\w'’.-]*(?: [\w'’.-]+)*", "", zh.question)), zh.question
        if zh.answer != en.answer:  # a date: 1992年3月4日, the English words and the ISO form aliases
            assert re.fullmatch(r"\d+年\d+月\d+日", zh.answer) and en.answer in zh.aliases
        else:
            assert zh.aliases == en.aliases
    assert compared >= 10, compared


def test_generated_chinese_set(snapshots):
    result = generate_task_list(snapshots[1], PARAMS)
    assert len(result.tasks) == PARAMS.count
    assert all(re.search(r"[\u4e00-\u9fff]", task.question) for task in result.tasks)
    assert any(not task.answerable for task in result.tasks)  # unanswerable ones are said in Chinese too


def test_chinese_questions_tell_each_entity_then_ask_with_class_values_in_chinese(snapshots):
    """Issue 49: one sentence stacked attributive chains ("请说出作为面积为...的城市所在的国家首都的城市的名称。") and
    class values stayed in English ("职业为Politician"); now each variable is told in a sentence of its own, no
    clause stacks three 的, and an occupation, genre or instrument is said in Chinese."""
    result = generate_task_list(snapshots[1], GenerationParams(count=40, seed=5, compose=ComposeParams(max_hops=5)))
    classes = {"occupation", "genre", "instrument", "industry", "awarded_for"}
    said_in_english = []
    for task in result.tasks:
        assert not stacked_de(task.question), task.question
        variables = {term for triple in task.formalization for term in (triple[0], triple[2]) if term.startswith("V@")}
        assert len(sentences(task.question)) >= 2 or len(variables) <= 1, task.question  # told, then asked
        said_in_english += [o[2:] for s, r, o in task.formalization if r in classes and o[2:] in task.question]
    assert said_in_english == []
    assert any(any(r in classes for _s, r, _o in t.formalization) for t in result.tasks)  # the check ran
    figures = reading_figures(t.question for t in result.tasks)
    assert reading_problems(figures) == [] and figures["stacked_de_share"] == 0.0, figures


_SCRIPT = (
    "import sys; from stillweb.corpora.tasks.compose.generate import GenerationParams, generate_tasks; "
    "from stillweb.corpora.tasks.compose.operations import ComposeParams; "
    "generate_tasks(sys.argv[1], sys.argv[2], GenerationParams(count=12, seed=3, compose=ComposeParams(min_hops=1, "
    "max_hops=4), unanswerable=0.3), workers=int(sys.argv[3]))"
)


def test_chinese_task_set_is_byte_identical_across_processes(snapshots):
    chinese = snapshots[1]
    digests = []
    for name, workers in (("zh-a", "1"), ("zh-b", "2")):
        subprocess.run([sys.executable, "-c", _SCRIPT, str(chinese), name, workers], check=True)
        digests.append(files_digest(chinese / "tasks" / name))
    assert digests[0] == digests[1]
    tasks = [task for split in ("train", "dev", "test") for task in read_tasks(chinese, "zh-a", split)]
    assert len(tasks) == 12 and all(re.search(r"[\u4e00-\u9fff]", task.question) for task in tasks)


_PAGES = ("import hashlib, sys; from stillweb.corpora.synthetic import generate_world; "
          "from stillweb.corpora.synthetic.chinese_pages import chinese_world_pages; "
          "h = hashlib.sha256(); [h.update((p.title + '\\x1f' + p.text + '\\x1e').encode()) "
          "for p in chinese_world_pages(generate_world(120, 5))]; print(h.hexdigest())")


def test_chinese_world_pages_are_identical_in_two_processes():
    runs = [subprocess.run([sys.executable, "-c", _PAGES], check=True, capture_output=True, text=True).stdout
            for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0].strip()) == 64
