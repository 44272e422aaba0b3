"""MediaWiki export XML (schema 0.10) for a stream of pages.

``write_xml_dump(pages, path)`` writes pages one at a time (the dump is never
held in memory), bz2-compressed when ``path`` ends with ``.bz2``. Page and
revision ids count from 1 in stream order and every revision carries the same
fixed timestamp, so the same pages always give the same bytes. The output reads
back with ``mwxml`` and with stillweb's own dump reader.
"""

from __future__ import annotations

import bz2
import hashlib
import io
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from stillweb.corpora.snapshot.records import RawPage

__all__ = ["write_xml_dump", "FIXED_TIMESTAMP", "mediawiki_sha1"]

FIXED_TIMESTAMP = "2001-01-15T00:00:00Z"
_HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.10/ http://www.mediawiki.org/xml/export-0.10.xsd" \
version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>stillweb synthetic</sitename>
    <dbname>stillwebsynthetic</dbname>
    <base>https://synthetic.stillweb.invalid/wiki/Main_Page</base>
    <generator>stillweb.corpora.synthetic</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def mediawiki_sha1(text: str) -> str:
    """The revision checksum MediaWiki exports: SHA-1 in base 36, 31 digits."""
    value = int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest(), "big")
    digits = []
    while value:
        value, remainder = divmod(value, 36)
        digits.append(_BASE36[remainder])
    return "".join(reversed(digits)).rjust(31, "0")


def write_xml_dump(pages: Iterable[RawPage], path: str | Path) -> int:
    """Write ``pages`` as a MediaWiki XML export to ``path``; returns the page count.

    Raises ``TypeError`` naming the first item that is not a ``RawPage``.
    """
    path = Path(path)
    raw = bz2.open(path, "wb") if path.name.endswith(".bz2") else open(path, "wb")
    count = 0
    with raw, io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as out:
        out.write(_HEADER)
        for count, page in enumerate(pages, start=1):
            if not isinstance(page, RawPage):
                raise TypeError(f"page {count} is not a RawPage: {page!r:.80}")
            out.write(_page_xml(page, count))
        out.write("</mediawiki>\n")
    return count


def _page_xml(page: RawPage, page_id: int) -> str:
    redirect = f"    <redirect title={quoteattr(page.redirect)} />\n" if page.redirect else ""
    return (
        f"  <page>\n    <title>{escape(page.title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n{redirect}"
        f"    <revision>\n      <id>{page_id}</id>\n      <timestamp>{FIXED_TIMESTAMP}</timestamp>\n"
        f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text xml:space="preserve">{escape(page.text)}</text>\n'
        f"      <sha1>{mediawiki_sha1(page.text)}</sha1>\n    </revision>\n  </page>\n"
    )
