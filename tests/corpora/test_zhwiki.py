"""Chinese Wikipedia dumps: language-conversion markup written in one script, Chinese templates,
field names, namespaces and dates, typed facts through the English mapping, titles as written
(fixtures: ``tests/support/zhwiki.py``, zhwiki-style markup written for the purpose)."""

from __future__ import annotations

import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from stillweb.corpora.build.from_source import build_wikipedia
from stillweb.corpora.errors import StillwebError
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.wikitext import parse_page
from stillweb.corpora.wikitext.variants import convert_page
from support.zhwiki import ZH_PAGES, write_zhwiki_dump

PAGES = dict(ZH_PAGES)


def test_conversion_markup_picks_the_variant_and_keeps_protected_text():
    text = "-{zh-hans:计算机;zh-hant:電腦;}-、-{zh-cn:激光;zh-tw:雷射}-、-{臺北}-、-{R|臺灣}-、-{H|zh-cn:打印机;zh-tw:印表機}-"
    assert convert_page(text, "hans") == "计算机、激光、臺北、臺灣、"
    assert convert_page(text, "hant") == "電腦、雷射、臺北、臺灣、"
    assert convert_page("-{A|zh-hans:软件;zh-hant:軟體}-開發", "hans") == "软件开发"
    assert convert_page("-{zh-tw:雷射}-", "hans") == "雷射"  # only another variant given: converted character by character
    # {{NoteTA}} rules apply to the whole page, whichever variant the text was written in
    assert convert_page("{{NoteTA|1=zh-cn:鼠标;zh-tw:滑鼠}}按下滑鼠", "hans").endswith("按下鼠标")
    assert convert_page("{{NoteTA|1=zh-cn:鼠标;zh-tw:滑鼠}}按下鼠标", "hant").endswith("按下滑鼠")
    # link targets stay as written (they name pages); what a link shows is converted
    assert convert_page("[[臺灣]]與[[國立臺灣大學|臺大]]、[[分類:臺灣]]", "hans") == "[[臺灣|台湾]]与[[國立臺灣大學|台大]]、[[分类:台湾]]"
    with pytest.raises(StillwebError, match="unknown Chinese script 'latn'"):
        convert_page("x", "latn")


def test_page_in_simplified_with_typed_facts_from_chinese_field_names():
    page = parse_page("李明德", PAGES["李明德"], "hans")
    assert page.text.startswith("李明德（1901年3月4日－1980年5月6日），台湾物理学家，发明了一种新型激光。")
    assert "\n\n生平\n他毕业于台大，后任教于此。" in page.text and "cite" not in page.text and "File" not in page.text
    assert [(f.relation, f.value, f.value_type) for f in page.facts] == [
        ("birth_date", "1901-03-04", "date"), ("birth_place", "臺北市", "entity"), ("nationality", "中華民國", "entity"),
        ("occupation", "物理学家", "text"), ("death_date", "1980-05-06", "date")]
    assert page.unmapped == [("infobox person|籍贯", "福建")] and page.entity_class == "Person"
    assert page.links == ["臺灣", "國立臺灣大學", "臺北市", "中華民國"] and page.categories == ["台湾物理学家"]


def test_page_in_traditional():
    page = parse_page("李明德", PAGES["李明德"], "hant")
    assert page.text.startswith("李明德（1901年3月4日－1980年5月6日），臺灣物理學家") and "雷射" in page.text
    assert ("occupation", "物理學家") in [(f.relation, f.value) for f in page.facts]
    assert page.categories == ["臺灣物理學家"]


def test_chinese_named_infobox_disambiguation_and_list_pages():
    page = parse_page("王小红", PAGES["王小红"], "hans")
    assert [(f.relation, f.value) for f in page.facts] == [("birth_date", "1950-01-02"), ("birth_place", "北京市"),
                                                           ("spouse", "李明德")]
    assert page.entity_class == "Person" and "中国化学家" in page.categories and "曾在臺北工作" in page.text
    assert parse_page("明德", PAGES["明德"], "hans").kind == "disambiguation"
    assert parse_page("中国物理学家列表", PAGES["中国物理学家列表"], "hans").kind == "list"


def test_english_pages_parse_as_before_without_a_script():
    wikitext = "'''X''' was born on {{birth date|1809|2|12}}. -{not conversion}- [[Category:Y]]"
    page = parse_page("X", wikitext)
    assert page.text == "X was born on February 12, 1809. -{not conversion}-" and page.categories == ["Y"]


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    return write_zhwiki_dump(tmp_path_factory.mktemp("zhwiki") / "zhwiki-pages-articles.xml")


def test_build_wikipedia_on_a_chinese_dump(dump, tmp_path):
    result = build_wikipedia(dump, tmp_path / "hans", progress=False)
    assert result.manifest["parameters"]["script"] == "hans"
    snapshot = Snapshot.open(result.path)
    titles = [snapshot.title_of(doc) for doc in range(len(snapshot))]
    assert titles == [title for title, _ in ZH_PAGES]  # as written: 臺北市 in traditional, 北京市 in simplified
    taipei = titles.index("臺北市")
    assert "台北的计算机产业很发达" in snapshot.text_of(taipei) and "台北盆地" in snapshot.text_of(taipei)
    assert snapshot.resolve("台北市") == taipei  # the redirect
    facts = pq.read_table(result.path / "facts.parquet").to_pylist()
    spouse = [f for f in facts if f["relation"] == "spouse"]
    assert [(titles[f["subject"]], titles[f["object"]]) for f in spouse] == [("王小红", "李明德")]
    assert (taipei, "population", "2602418") in [(f["subject"], f["relation"], f["value"]) for f in facts]
    assert snapshot.search("计算机", k=3)[0].title == "臺北市"  # the analyzer reads the simplified text
    traditional = build_wikipedia(dump, tmp_path / "hant", progress=False, script="hant")
    assert traditional.manifest["parameters"]["script"] == "hant"
    assert "臺北的電腦產業很發達" in Snapshot.open(traditional.path).text_of(taipei)
    assert traditional.manifest["fingerprint"] != result.manifest["fingerprint"]


def test_script_flag_errors(dump, tmp_path):
    with pytest.raises(StillwebError, match="unknown --script 'latn'"):
        build_wikipedia(dump, tmp_path / "x", progress=False, script="latn")


def test_chinese_build_is_byte_identical_in_two_processes(dump, tmp_path):
    script = ("import sys; from stillweb.corpora.build.from_source import build_wikipedia; "
              "build_wikipedia(sys.argv[1], sys.argv[2], progress=False, workers=2)")
    outputs = []
    for name in ("a", "b"):
        subprocess.run([sys.executable, "-c", script, str(dump), str(tmp_path / name)], check=True)
        outputs.append({path: (tmp_path / name / path).read_bytes()
                        for path in ("docs.parquet", "facts.parquet", "links.parquet", "redirects.parquet")})
        outputs[-1]["fingerprint"] = Snapshot.open(tmp_path / name).fingerprint.encode()
    assert outputs[0] == outputs[1]
