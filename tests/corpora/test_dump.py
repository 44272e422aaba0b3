"""Tests of the streaming MediaWiki XML dump reader: counts, redirects, damage handling."""

from __future__ import annotations

import bz2
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stillweb.corpora.sources.wikipedia_xml import DumpError, DumpStats, read_dump

SAMPLE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
TABLES = "enwiki-table-markup.xml.bz2"

HEADER = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n'


def page_xml(title: str, text: str | None, ns: int = 0, redirect: str | None = None) -> str:
    redirect_xml = f'<redirect title="{redirect}" />' if redirect else ""
    text_xml = f'<text xml:space="preserve">{text}</text>' if text is not None else ""
    return (
        f"<page><title>{title}</title><ns>{ns}</ns><id>1</id>{redirect_xml}"
        f"<revision><id>2</id>{text_xml}</revision></page>\n"
    )


def write_dump(path: Path, pages: list[str], close: bool = True) -> Path:
    path.write_text(HEADER + "".join(pages) + ("</mediawiki>\n" if close else ""), encoding="utf-8")
    return path


def test_plain_xml_yields_namespace_zero_pages_and_redirects(tmp_path: Path) -> None:
    dump = write_dump(
        tmp_path / "d.xml",
        [
            page_xml("Alpha", "'''Alpha''' &amp; beta"),
            page_xml("Talk:Alpha", "chat", ns=1),
            page_xml("Alfa", "#REDIRECT [[Alpha]]", redirect="Alpha"),
        ],
    )
    stats = DumpStats()
    pages = list(read_dump(dump, stats=stats))
    assert [(p.title, p.text, p.redirect, p.position) for p in pages] == [
        ("Alpha", "'''Alpha''' & beta", None, "page 0"),
        ("Alfa", "#REDIRECT [[Alpha]]", "Alpha", "page 2"),
    ]
    assert (stats.pages, stats.articles, stats.redirects, stats.other_namespaces) == (3, 1, 1, 1)


def test_bz2_is_detected_by_content(tmp_path: Path) -> None:
    plain = write_dump(tmp_path / "d.xml", [page_xml("Alpha", "text")])
    packed = tmp_path / "dump.data"
    packed.write_bytes(bz2.compress(plain.read_bytes()))
    assert [p.title for p in read_dump(packed)] == ["Alpha"]


def test_page_without_text_raises_naming_the_page(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.xml", [page_xml("Good", "x"), page_xml("Empty", None), page_xml("After", "y")])
    with pytest.raises(DumpError, match=r"page 1 \('Empty'\) has no revision text"):
        list(read_dump(dump))
    stats = DumpStats()
    assert [p.title for p in read_dump(dump, skip_bad=True, stats=stats)] == ["Good", "After"]
    assert stats.bad_pages == 1 and "Empty" in stats.bad_page_notes[0]


def test_broken_xml_raises_with_position_or_stops_when_skipping(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.xml", [page_xml("Good", "x"), "<page><title>Bad</title><ns>0</oops>"])
    with pytest.raises(DumpError, match=r"after page 0 \('Good'\).*byte \d+.*line 3"):
        list(read_dump(dump))
    stats = DumpStats()
    assert [p.title for p in read_dump(dump, skip_bad=True, stats=stats)] == ["Good"]
    assert stats.stopped_at is not None and "after page 0 ('Good'), inside page 1 ('Bad')" in stats.stopped_at
    # the page the break falls inside is lost: counted and named as a bad page
    assert (stats.pages, stats.bad_pages) == (2, 1)
    assert stats.cut_page == stats.bad_page_notes[0] and stats.cut_page.startswith("page 1 ('Bad') is cut off near")


def test_a_dump_cut_off_mid_page_counts_and_names_the_cut_page(tmp_path: Path) -> None:
    whole = HEADER + page_xml("Good", "x") + page_xml("Cut", "lost text") + "</mediawiki>\n"
    for end, named in ((whole.index("lost"), "page 1 ('Cut')"), (whole.index("<title>Cut") + 3, "page 1 (its title unread)")):
        dump = tmp_path / "cut.xml"
        dump.write_text(whole[:end], encoding="utf-8")
        with pytest.raises(DumpError, match=re.escape(f"after page 0 ('Good'), inside {named}, near decompressed byte {end}")):
            list(read_dump(dump))
        stats = DumpStats()
        assert [p.title for p in read_dump(dump, skip_bad=True, stats=stats)] == ["Good"]
        assert (stats.pages, stats.articles, stats.bad_pages) == (2, 1, 1)
        assert re.fullmatch(rf"{re.escape(named)} is cut off near decompressed byte {end}: .+: line 3, column \d+",
                            stats.cut_page), stats.cut_page  # the parser's own words follow
    stats = DumpStats()  # cut between two pages: nothing is cut off, the early end is still said
    end = whole.index("<page><title>Cut")
    (tmp_path / "between.xml").write_text(whole[:end], encoding="utf-8")
    assert [p.title for p in read_dump(tmp_path / "between.xml", skip_bad=True, stats=stats)] == ["Good"]
    assert (stats.bad_pages, stats.cut_page) == (0, None) and "after page 0 ('Good'), near" in stats.stopped_at


def test_unclosed_document_is_an_error(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.xml", [page_xml("Good", "x")], close=False)
    with pytest.raises(DumpError, match="no element found"):
        list(read_dump(dump))


def test_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        list(read_dump(tmp_path / "absent.xml.bz2"))


@pytest.mark.shared_data
def test_real_sample_counts_and_redirects(shared_data: Path) -> None:
    stats = DumpStats()
    pages = list(read_dump(shared_data / SAMPLE, stats=stats))
    articles = [p for p in pages if p.redirect is None]
    redirects = {p.title: p.redirect for p in pages if p.redirect is not None}
    # 206 pages: 106 articles, 100 redirects of which one is outside namespace 0
    assert (stats.pages, len(articles), len(redirects), stats.other_namespaces) == (206, 106, 99, 1)
    assert redirects["AccessibleComputing"] == "Computer accessibility"
    lincoln = next(p for p in articles if p.title == "Abraham Lincoln")
    assert lincoln.text.startswith("{{About|the American president}}") and lincoln.is_wikitext
    assert [p.title for p in read_dump(shared_data / TABLES)][0] == "Constructive vote of no confidence"


@pytest.mark.shared_data
def test_truncated_bz2_raises_with_offset_or_stops_when_skipping(shared_data: Path, tmp_path: Path) -> None:
    data = (shared_data / SAMPLE).read_bytes()
    truncated = tmp_path / "truncated.xml.bz2"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpError, match=r"damaged dump after page \d+ .*byte \d+.*(Compressed file ended|end-of-stream)"):
        list(read_dump(truncated))
    stats = DumpStats()
    pages = list(read_dump(truncated, skip_bad=True, stats=stats))
    assert 0 < len(pages) < 205 and stats.stopped_at is not None
    # the bzip2 stream ends inside a page: that page is counted and named
    assert stats.bad_pages == 1 and stats.pages == len(pages) + stats.other_namespaces + 1
    assert re.match(rf"page {stats.pages - 1} \('[^']+'\) is cut off near decompressed byte \d+: .*(Compressed file ended|end-of-stream)",
                    stats.cut_page), stats.cut_page


READ_SCRIPT = """
import hashlib, sys
from stillweb.corpora.sources.wikipedia_xml import read_dump
digest = hashlib.sha256()
for page in read_dump(sys.argv[1]):
    digest.update(repr(page).encode())
sys.stdout.write(digest.hexdigest())
"""


def test_reading_is_identical_across_processes(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.xml", [page_xml(f"Page {i}", f"text {i}") for i in range(50)])
    runs = [
        subprocess.run([sys.executable, "-c", READ_SCRIPT, str(dump)], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout and len(runs[0].stdout) == 64
