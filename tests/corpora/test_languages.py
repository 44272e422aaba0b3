"""Analyzers per language: a Chinese build is searchable by any word of its text (issue 42's
table: 首都, 长江, 中国 found nothing with the English analyzer), the analyzer is recorded in the
manifest and the fingerprint, English builds are as before, and a poor fit between the analyzer
and the text is said on the console."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stillweb.cli.main import main as cli_main
from stillweb.corpora.search.analyzers import BigramAnalyzer, analyzer_for, analyzer_from_parameters, script_shares
from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.errors import DataError, UsageError
from stillweb.corpora.search.index import matching_spans
from stillweb.corpora.search.row_ranking import ROW_INDEX_PARAMETERS
from stillweb.corpora.snapshot.reading import Snapshot
from stillweb.corpora.sources.wikipedia_xml import dump_language
from support.chinese import CHINESE_ROWS, build_chinese_snapshot, write_chinese_rows

ENGLISH_ROWS = [{"id": "e1", "title": "Lunor", "text": "Lunor is a river city founded in 1204."},
                {"id": "e2", "title": "Ostra", "text": "Ostra is the capital of Velland."}]


@pytest.fixture(scope="module")
def zh(tmp_path_factory) -> tuple[Snapshot, tuple[str, ...]]:
    result = build_chinese_snapshot(tmp_path_factory.mktemp("zh"))
    return Snapshot.open(result.path), result.notes


def titles(snapshot: Snapshot, query: str, k: int = 10) -> list[str]:
    return [hit.title for hit in snapshot.search(query, k)]


@pytest.mark.parametrize(("query", "expected"), [
    ("首都", "北京"), ("长江", "上海"), ("华北平原", "北京"), ("紫禁城", "故宫"), ("东京", "東京"),
    ("中國", "長城"), ("嘉峪关", "長城"), ("great wall", "長城"), ("한강", "서울"), ("6300公里", "长江")])
def test_every_word_of_a_chinese_text_finds_it(zh, query, expected):
    assert expected in titles(zh[0], query, 3)


def test_a_word_in_several_texts_finds_each_of_them_traditional_or_simplified(zh):
    found = titles(zh[0], "中国")
    assert {"上海", "長城", "黄河"} <= set(found)  # 長城 writes 中國
    assert titles(zh[0], "中華文明") == titles(zh[0], "中华文明") and "黄河" in titles(zh[0], "中华文明")


def test_the_language_is_detected_said_and_recorded(zh):
    snapshot, notes = zh
    assert notes and notes[0].startswith("language: zh (detected:") and "--language" in notes[0]
    analyzer = snapshot.manifest["index"]["analyzer"]
    assert analyzer["name"] == "cjk_bigram" and analyzer["version"] == 1 and analyzer["language"] == "zh"
    assert "opencc-python-reimplemented 0.1.7" in analyzer["script_fold"]
    assert snapshot.manifest["index"]["query"] == "terms" and isinstance(snapshot.analyzer, BigramAnalyzer)


def test_the_analyzer_is_in_the_fingerprint(tmp_path, zh):
    chinese = write_chinese_rows(tmp_path / "rows.jsonl")
    given = build_rows([chinese], tmp_path / "given", progress=False, language="zh")
    assert given.notes == () and given.manifest["fingerprint"] == zh[0].fingerprint  # given or detected: same
    english = build_rows([chinese], tmp_path / "en", progress=False, language="en")
    assert english.manifest["fingerprint"] != zh[0].fingerprint and "analyzer" not in english.manifest["index"]
    japanese = build_rows([chinese], tmp_path / "ja", progress=False, language="ja")
    assert japanese.manifest["fingerprint"] not in (zh[0].fingerprint, english.manifest["fingerprint"])


def test_english_builds_keep_todays_analyzer_and_say_nothing(tmp_path):
    result = build_rows([write_chinese_rows(tmp_path / "en.jsonl", ENGLISH_ROWS)], tmp_path / "s", progress=False)
    index = dict(result.manifest["index"])
    index.pop("segments")
    assert index.pop("impacts")["units"] == len(ENGLISH_ROWS)  # format 6: impact postings for pruned search
    assert index == ROW_INDEX_PARAMETERS and result.notes == ()
    assert Snapshot.open(result.path).analyzer is None


def test_bigrams_as_lucenes_cjk_analyzer_makes_them():
    zh = analyzer_for("zh")
    assert zh.terms("北京") == ["北京"] and zh.terms("京") == ["京"]  # a lone character is its unigram
    assert zh.terms("ＡＢＣ１２３ the 東京タワー") == ["abc123", "东京", "京タ", "タワ", "ワー"]  # width folded, stop word gone
    assert analyzer_for("ko").terms("서울은 수도") == ["서울", "울은", "수도"]
    assert zh.spans("a 北京") == [(2, 4, "北京")]
    assert analyzer_for("en") is None
    with pytest.raises(UsageError, match="'xx'.*one of en, zh"):
        analyzer_for("xx")


_MIXED = st.text(alphabet=st.sampled_from(list("北京中國东京ｶﾞﾀｶﾅがガ서울ภาษาไทยＡＢＣabc Ｔhe the 12３½　。，、\n-_")))


@settings(max_examples=300, deadline=None)
@given(_MIXED)
def test_the_terms_are_the_terms_of_the_spans_and_fit_their_offsets(text):
    zh = analyzer_for("zh")
    spans = zh.spans(text)
    assert zh.terms(text) == [term for _start, _end, term in spans] and zh.stream(text).split() == zh.terms(text)
    assert all(0 <= start < end <= len(text) and " " not in term and term for start, end, term in spans)


@pytest.mark.parametrize(("text", "language"), [
    ("北京是中华人民共和国的首都。", "zh"), ("東京は日本の首都である。", "ja"), ("서울은 대한민국의 수도이다.", "ko"),
    ("ภาษาไทยเป็นภาษาราชการของประเทศไทย", "th"), ("Lunor is a river city 北京.", "en")])
def test_the_script_of_the_text_names_its_language(text, language):
    assert script_shares([text]).language == language


def test_a_snapshot_of_an_unknown_analyzer_is_refused():
    assert analyzer_from_parameters({}) is None
    with pytest.raises(DataError, match="upgrade stillweb"):
        analyzer_from_parameters({"analyzer": {"name": "cjk_bigram", "version": 99, "language": "zh"}})


def test_snippets_and_marks_use_the_snapshots_terms(zh):
    snapshot = zh[0]
    hit = snapshot.search("长江入海口在哪里", 1)[0]
    assert hit.title == "上海" and "长江入海口" in hit.snippet
    text = "北京是中华人民共和国的首都"
    assert [text[a:b] for a, b in matching_spans(text, "首都北京", snapshot.analyzer)] == ["北京", "首都"]
    assert matching_spans(text, "首都北京") == []  # the English analyzer sees one word


def test_dumps_declare_their_language(tmp_path):
    head = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" xml:lang="zh">\n<siteinfo><dbname>zhwiki</dbname>'
    (tmp_path / "a.xml").write_text(head, encoding="utf-8")
    (tmp_path / "b.xml").write_text("<mediawiki><siteinfo><dbname>zh_yuewiki</dbname>", encoding="utf-8")
    (tmp_path / "c.xml").write_text("<mediawiki><siteinfo>", encoding="utf-8")
    assert [dump_language(tmp_path / name) for name in ("a.xml", "b.xml", "c.xml")] == ["zh", "zh", None]


def test_a_poorly_fitting_analyzer_warns_with_the_share_and_the_flag(tmp_path, capsys):
    chinese = write_chinese_rows(tmp_path / "zh.jsonl")
    english = build_rows([chinese], tmp_path / "en", progress=False, language="en")
    assert any(note.startswith("warning: ") and "% of the letters" in note and "--language zh" in note
               for note in english.notes)
    rows = write_chinese_rows(tmp_path / "en.jsonl", ENGLISH_ROWS)
    assert cli_main(["build", "corpus", str(rows), "--out", str(tmp_path / "z"), "--language", "zh", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "warning: 100% of the letters are outside the Han" in err and "--language en" in err
    long_words = script_shares(["Supercalifragilisticexpialidociousness " * 3 + "and"])
    assert long_words.long_share == 0.75


def test_the_cli_names_a_language_it_does_not_have(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli_main(["build", "corpus", str(write_chinese_rows(tmp_path / "r.jsonl")), "--out", str(tmp_path / "s"),
                  "--language", "xx"])
    assert "invalid choice: 'xx'" in capsys.readouterr().err


BUILD = """
import sys
from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.snapshot.reading import Snapshot
result = build_rows([sys.argv[1]], sys.argv[2], progress=False, workers=int(sys.argv[3]))
snapshot = Snapshot.open(result.path)
print(result.manifest["fingerprint"], result.notes)
print([(hit.doc_id, round(hit.score, 6), hit.snippet) for hit in snapshot.search("中国的首都", 5)])
"""


def test_chinese_builds_are_identical_across_processes(tmp_path):
    rows = write_chinese_rows(tmp_path / "zh.jsonl")
    runs = [subprocess.run([sys.executable, "-c", BUILD, str(rows), str(tmp_path / f"s{n}"), str(n)],
                           capture_output=True, text=True, check=True) for n in (1, 2)]
    assert runs[0].stdout == runs[1].stdout and "北京" in runs[0].stdout
    manifests = [json.loads((tmp_path / f"s{n}" / "manifest.json").read_text()) for n in (1, 2)]
    for manifest in manifests:  # tantivy names its segment files by a random id: the files' hashes differ
        manifest.pop("name"), manifest.pop("files")
    assert manifests[0] == manifests[1]
    assert (tmp_path / "s1" / "docs.parquet").read_bytes() == (tmp_path / "s2" / "docs.parquet").read_bytes()
    assert len(CHINESE_ROWS) == manifests[0]["counts"]["docs"]


def test_a_dump_builds_in_the_language_it_declares(tmp_path):
    from stillweb.corpora.build.from_source import build_wikipedia

    pages = "".join(
        f"<page><title>{title}</title><ns>0</ns><id>{number}</id><revision><id>{number + 10}</id>"
        f'<text xml:space="preserve">{text}</text></revision></page>\n'
        for number, (title, text) in enumerate([("北京", "'''北京'''是[[中华人民共和国]]的首都。"),
                                                ("上海", "'''上海'''位于[[长江]]入海口。")], 1))
    dump = tmp_path / "zhwiki.xml"
    dump.write_text('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" xml:lang="zh">\n'
                    f"<siteinfo><dbname>zhwiki</dbname></siteinfo>\n{pages}</mediawiki>\n", encoding="utf-8")
    result = build_wikipedia(dump, tmp_path / "s", progress=False)
    assert result.notes == ("language: zh (declared by the source; --language sets it)",)
    snapshot = Snapshot.open(result.path)
    assert snapshot.manifest["index"]["analyzer"]["language"] == "zh" and snapshot.manifest["index"]["fields"] == ["title", "body"]
    assert [hit.title for hit in snapshot.search("首都")] == ["北京"] and snapshot.search("长江")[0].title == "上海"
    overridden = build_wikipedia(dump, tmp_path / "ja", progress=False, language="ja")
    assert overridden.notes == () and overridden.manifest["index"]["analyzer"]["language"] == "ja"


def test_chinese_pages_split_into_passages_of_characters(tmp_path):
    result = build_rows([write_chinese_rows(tmp_path / "zh.jsonl")], tmp_path / "p", progress=False, passages=10)
    snapshot = Snapshot.open(result.path)
    documents = [snapshot.get(doc) for doc in range(len(snapshot))]
    assert len(snapshot) > 2 * len(CHINESE_ROWS) and all(len(document.text) <= 40 for document in documents)
    assert "".join(d.text for d in documents if d.title == "北京") == CHINESE_ROWS[0]["text"]  # cut, and whole again
    assert snapshot.get(snapshot.search("紫禁城", 1)[0].doc_id).title == "故宫"


def test_a_snippet_of_traditional_text_shows_the_simplified_querys_terms(tmp_path):
    filler = "這是一段很長的說明文字，與問題無關。" * 20  # 360 characters before the answer
    rows = [{"id": "t", "title": "長城", "text": filler + "長城位於中國北方，東起山海關。"},
            {"id": "s", "title": "其他", "text": "别的内容。"}]
    snapshot = Snapshot.open(build_rows([write_chinese_rows(tmp_path / "t.jsonl", rows)], tmp_path / "s", progress=False,
                                        language="zh").path)
    (hit,) = snapshot.search("中国北方", 1)
    assert hit.title == "長城" and "中國北方" in hit.snippet and not hit.snippet.startswith("這是")
