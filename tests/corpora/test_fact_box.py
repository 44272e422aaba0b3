"""The fact box above a page's prose: English labels on English pages (unchanged), Chinese labels from
the reviewed table ``corpora/graph/fact_labels_zh.toml`` on a Chinese snapshot, written in the page's script
(``--script hant`` converts them, unmapped Chinese field names included, through OpenCC)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pyarrow.parquet as pq
import pytest

from stillweb.corpora.build.from_source import build_synthetic, build_wikipedia
from stillweb.corpora.graph.fact_box import FACT_LABELS_ZH_PATH, fact_label, render_fact_box
from stillweb.corpora.snapshot.records import ExtractedFact, ParsedPage
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.synthetic.chinese_pages import ZH_SENTENCES
from stillweb.corpora.tasks.phrase.verbalize_zh import zh_relations
from stillweb.corpora.wikitext.mapping import MAPPING_PATH
from support.zhwiki import write_zhwiki_dump

_HAN = re.compile(r"[\u4e00-\u9fff]")


def _labels() -> dict[str, str]:
    with open(FACT_LABELS_ZH_PATH, "rb") as handle:
        return tomllib.load(handle)["labels"]


def test_every_relation_has_a_chinese_label():
    with open(MAPPING_PATH, "rb") as handle:
        mapped = set(tomllib.load(handle)["relations"])
    labels = _labels()
    relations = mapped | set(ZH_SENTENCES) | set(zh_relations())
    assert relations - set(labels) == set()
    assert all(_HAN.search(label) and label == label.strip() for label in labels.values())
    assert fact_label("birth_date", "zh") == "出生日期" and fact_label("birth_date") == "Birth date"
    assert fact_label("no_such_relation", "zh") == "No such relation"  # unlisted: its English label


def test_labels_follow_the_language_and_the_script():
    page = ParsedPage("X", "", facts=[ExtractedFact("birth_place", "台湾", "entity"),
                                      ExtractedFact("area_km2", "12.5", "number")],
                      unmapped=[("infobox person|籍贯", "福建"), ("infobox person|nickname", "Li")])
    assert render_fact_box(page) == "Birth place: 台湾\nArea km2: 12.5\n籍贯: 福建\nNickname: Li"
    assert render_fact_box(page, "zh") == "出生地点：台湾\n面积（平方公里）：12.5\n籍贯：福建\nNickname：Li"
    page.script = "hant"  # labels in traditional characters; values stay as written (a title names its page)
    assert render_fact_box(page, "zh") == "出生地點：台湾\n面積（平方公里）：12.5\n籍貫：福建\nNickname：Li"
    assert render_fact_box(page, "en") == "Birth place: 台湾\nArea km2: 12.5\n籍贯: 福建\nNickname: Li"


def test_synthetic_chinese_world_has_chinese_fact_lines_and_the_same_facts(tmp_path):
    english = build_synthetic(60, 4, tmp_path / "en", progress=False).path
    chinese = build_synthetic(60, 4, tmp_path / "zh", progress=False, language="zh").path
    assert (english / "facts.parquet").read_bytes() == (chinese / "facts.parquet").read_bytes()
    texts = [pq.read_table(path / "docs.parquet", columns=["text"]).column("text").to_pylist()
             for path in (english, chinese)]
    assert sum("\nBirth date: " in "\n" + text for text in texts[0]) > 10
    assert not any(re.search(r"^[A-Z][a-z ]+\d*: ", text, re.MULTILINE) for text in texts[1])
    assert sum("\n出生日期：" in "\n" + text for text in texts[1]) == sum("\nBirth date: " in "\n" + t for t in texts[0])


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    return write_zhwiki_dump(tmp_path_factory.mktemp("zhwiki") / "zhwiki-pages-articles.xml")


def test_zhwiki_fact_box_in_each_script(dump, tmp_path):
    texts = {}
    for script in ("hans", "hant"):
        snapshot = Snapshot.open(build_wikipedia(dump, tmp_path / script, progress=False, script=script).path)
        texts[script] = snapshot.text_of(snapshot.resolve("李明德"))
    assert texts["hans"].startswith("出生日期：1901-03-04\n出生地点：臺北市\n国籍：中華民國\n职业：物理学家\n")
    assert "\n籍贯：福建\n" in texts["hans"]
    assert texts["hant"].startswith("出生日期：1901-03-04\n出生地點：臺北市\n國籍：中華民國\n職業：物理學家\n")
    assert "\n籍貫：福建\n" in texts["hant"] and "籍贯" not in texts["hant"]


_BUILD = ("import sys; from stillweb.corpora.build.from_source import build_wikipedia; "
          "build_wikipedia(sys.argv[1], sys.argv[2], progress=False, workers=2, script='hant')")


def test_traditional_fact_boxes_are_byte_identical_in_two_processes(dump, tmp_path):
    outputs = []
    for name in ("a", "b"):
        subprocess.run([sys.executable, "-c", _BUILD, str(dump), str(tmp_path / name)], check=True)
        outputs.append((tmp_path / name / "docs.parquet").read_bytes() + Snapshot.open(tmp_path / name).fingerprint.encode())
    assert outputs[0] == outputs[1]
    texts = pq.read_table(tmp_path / "a" / "docs.parquet", columns=["text"]).column("text").to_pylist()
    assert any("\n籍貫：福建\n" in text for text in texts)
