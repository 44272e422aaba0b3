"""A small Chinese Wikipedia dump: zhwiki-style markup written for these tests (not copied from
zhwiki), in the MediaWiki export 0.10 layout zhwiki's dumps use (``xml:lang="zh"``, ``<dbname>zhwiki``).

It holds what zhwiki pages hold: an English-named infobox filled with Chinese field names
(``{{Infobox person|姓名=...|出生地點=...}}``), a Chinese-named one (``{{人物信息框}}``, which zhwiki
redirects to ``Infobox person``), date templates, ``-{zh-hans:...;zh-hant:...}-`` and ``-{...}-``
conversion markup, ``{{NoteTA}}`` rules, Chinese namespaces (``[[分類:...]]``, ``[[File:...]]``),
a ``{{消歧義}}`` page, a redirect, titles written in traditional and in simplified characters.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

ZH_PAGES = [
    ("臺北市", """{{NoteTA|G1=地名|1=zh-cn:台北;zh-tw:臺北}}
{{Infobox settlement
| name = 臺北市
| 國家 = [[中華民國]]
| 人口 = 2,602,418
}}
'''臺北市'''是[[中華民國]]的首都，位於[[臺灣]]北部的臺北盆地。-{zh-hans:台北的计算机产业;zh-hant:臺北的電腦產業;}-很發達。
[[分類:臺灣城市]]
"""),
    ("李明德", """{{Infobox person
| 姓名 = 李明德
| 出生日期 = {{birth date|1901|3|4}}
| 出生地點 = [[臺北市]]
| 國籍 = [[中華民國]]
| 職業 = 物理學家
| 逝世日期 = 1980年5月6日
| 籍貫 = 福建
}}
'''李明德'''（{{birth date|1901|3|4}}－1980年5月6日），[[臺灣]]物理學家，發明了一種新型-{A|zh-cn:激光;zh-tw:雷射}-。
== 生平 ==
他畢業於[[國立臺灣大學|臺大]]，後任教於此。<ref>{{cite web|title=李明德傳}}</ref>
[[File:Li Mingde.jpg|thumb|李明德]]
[[Category:臺灣物理學家]]
"""),
    ("王小红", """{{人物信息框
| 姓名 = 王小红
| 出生日期 = 1950年1月2日
| 出生地 = [[北京市]]
| 配偶 = [[李明德]]
}}
'''王小红'''是一位-{中国}-化学家，曾在-{R|臺北}-工作。她的丈夫是[[李明德]]。
[[分类:中国化学家]]
"""),
    ("北京市", """'''北京市'''是[[中华人民共和国]]的首都。
"""),
    ("明德", """'''明德'''可以指：
* [[李明德]]，物理學家
{{消歧義}}
"""),
    ("中国物理学家列表", """* [[李明德]]
"""),
]
ZH_REDIRECTS = [("台北市", "臺北市")]


def write_zhwiki_dump(path: Path) -> Path:
    """The pages as a plain XML dump at ``path``."""
    pages = [_page(index, title, text) for index, (title, text) in enumerate(ZH_PAGES, 1)]
    pages += [_page(len(pages) + index, title, f"#重定向 [[{target}]]", redirect=target)
              for index, (title, target) in enumerate(ZH_REDIRECTS, 1)]
    path.write_text(
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="zh">\n'
        "  <siteinfo><sitename>Wikipedia</sitename><dbname>zhwiki</dbname></siteinfo>\n"
        + "".join(pages) + "</mediawiki>\n", encoding="utf-8")
    return path


def _page(page_id: int, title: str, text: str, redirect: str | None = None) -> str:
    redirect_tag = f'    <redirect title="{escape(redirect)}" />\n' if redirect else ""
    return (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n{redirect_tag}"
            f"    <revision><id>{page_id}0</id><text xml:space=\"preserve\">{escape(text)}</text></revision>\n  </page>\n")
