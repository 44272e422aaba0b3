"""The synthetic world written in Chinese (``stillweb build synthetic --language zh``).

The same world, titles, infoboxes and links as :mod:`.wikitext_pages`, so the build extracts the
same facts byte for byte; the prose is Chinese: a lead naming what the entity is, one sentence per
infobox relation (出生于1950年3月4日。, 总部设在[[Lunor]]。), a works list, and Chinese categories,
disambiguation and list pages. Names stay as the world spells them (they are made-up names); class
words among the values (an occupation, a genre, an industry...) are said in Chinese from the reviewed
table ``corpora/synthetic_values_zh.toml`` in the prose (职业是作家), the infobox keeping the world's value.
Each page is a pure function of (world, page unit), as the English pages are.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from stillweb.corpora.snapshot.records import RawPage
from stillweb.corpora.synthetic.dates import decode_date
from stillweb.corpora.synthetic.facts import InfoboxField, format_number
from stillweb.corpora.synthetic.wikitext_pages import ITALIC_KINDS, MAX_LISTED_WORKS, ArticleWriter, entity_pages, page
from stillweb.corpora.synthetic.world import World

__all__ = ["chinese_world_pages", "render_unit_zh", "zh_value_word", "ZH_SENTENCES", "ZH_KIND_NOUNS", "ZH_VALUES_PATH"]

# the world's categorical values (occupations, genres, ...) as Chinese words; names are never listed
ZH_VALUES_PATH = Path(__file__).resolve().parent.parent / "synthetic_values_zh.toml"

ZH_KIND_NOUNS = {"person": "人物", "city": "城市", "country": "国家", "company": "公司", "university": "大学",
                 "award": "奖项", "book": "书籍", "film": "电影", "album": "专辑", "event": "事件"}
# One sentence per relation of the world, {s} the subject, {v} the value(s).
ZH_SENTENCES = {
    "alma_mater": "{s}毕业于{v}。", "area_km2": "{s}的面积为{v}平方公里。", "attendance": "{s}共有{v}人参加。",
    "author": "{s}由{v}撰写。", "awarded_for": "{s}为表彰{v}而设立。", "awards": "{s}曾获得{v}。",
    "birth_date": "{s}出生于{v}。", "birth_place": "{s}出生于{v}。", "capital": "{s}的首都是{v}。",
    "ceo": "{s}的首席执行官是{v}。", "country": "{s}位于{v}。", "currency": "{s}的货币是{v}。",
    "date": "{s}举行于{v}。", "death_date": "{s}逝世于{v}。", "death_place": "{s}逝世于{v}。",
    "director": "{s}由{v}执导。", "elevation_m": "{s}海拔{v}米。", "employees": "{s}有{v}名员工。",
    "employer": "{s}曾任职于{v}。", "first_awarded": "{s}首次颁发于{v}。", "founded": "{s}成立于{v}。",
    "founded_by": "{s}由{v}创立。", "genre": "{s}的类型是{v}。", "head_of_state": "{s}的国家元首是{v}。",
    "headquarters": "{s}的总部设在{v}。", "independence_date": "{s}独立于{v}。", "industry": "{s}属于{v}行业。",
    "instrument": "{s}演奏{v}。", "language": "{s}使用{v}。", "located_in": "{s}位于{v}。", "mayor": "{s}的市长是{v}。",
    "nationality": "{s}来自{v}。", "occupation": "{s}的职业是{v}。", "official_language": "{s}的官方语言是{v}。",
    "organizer": "{s}由{v}组织。", "pages": "{s}共有{v}页。", "performer": "{s}由{v}录制。",
    "population": "{s}的人口为{v}。", "presenter": "{s}由{v}颁发。", "production_company": "{s}由{v}出品。",
    "publication_date": "{s}出版于{v}。", "publisher": "{s}由{v}出版。", "record_label": "{s}由{v}发行。",
    "release_date": "{s}发行于{v}。", "runtime": "{s}片长{v}分钟。", "spouse": "{s}的配偶是{v}。",
    "starring": "{s}由{v}主演。", "students": "{s}有{v}名学生。", "tracks": "{s}收录{v}首曲目。",
}


def zh_value_word(relation: str, value: str) -> str:
    """A text value of the world as Chinese prose says it: a class word in the reviewed table
    (``corpora/synthetic_values_zh.toml``: ``occupation`` ``Writer`` -> 作家), anything else (a name) as written.

    >>> zh_value_word("occupation", "Film director"), zh_value_word("currency", "Pouavian dram")
    ('电影导演', 'Pouavian dram')
    """
    return _zh_values().get(relation, {}).get(value, value)


@cache
def _zh_values() -> dict[str, dict[str, str]]:
    with open(ZH_VALUES_PATH, "rb") as handle:
        return tomllib.load(handle)


def chinese_world_pages(world: World) -> Iterator[RawPage]:
    """Every page of the world in Chinese, unit by unit, in the English pages' order."""
    for unit in range(len(world)):
        yield from render_unit_zh(world, unit)


def render_unit_zh(world: World, unit: int) -> list[RawPage]:
    """The Chinese pages of page unit ``unit`` (see :func:`~.wikitext_pages.render_unit`)."""
    if not 0 <= unit < len(world):
        raise IndexError(f"page unit {unit} out of range [0, {len(world)})")
    if unit < world.entity_count:
        return entity_pages(world, unit, _ChineseArticle, "#重定向")
    unit -= world.entity_count
    if unit < len(world.disambiguations):
        name, members = world.disambiguations[unit]
        lines = [f"'''{name}'''可以指：", ""]
        lines += [f"* [[{world.titles[gid]}]]，{ZH_KIND_NOUNS[world.locate(gid)[0]]}" for gid in members]
        return [page(name, "\n".join([*lines, "", "{{disambiguation}}"]), unit)]
    listing = world.list_pages[unit - len(world.disambiguations)]
    noun = ZH_KIND_NOUNS[world.locate(listing.items[0])[0]]
    lines = [f"本列表列出{noun}。", "", "== 列表 ==", ""] + [f"* {world.link(gid)}" for gid in listing.items]
    return [page(listing.title, "\n".join([*lines, "", f"[[Category:{noun}列表]]"]), unit)]


class _ChineseArticle(ArticleWriter):
    """The article of one entity, its prose in Chinese (the infobox as the English article's)."""

    def text(self) -> str:
        """The whole article."""
        noun = ZH_KIND_NOUNS[self.kind]
        bold = f"'''{self.world.full_names.get(self.gid, self.name)}'''"
        parts = [self.infobox(), f"{bold}是一个{noun}。"]
        if self.world.titles[self.gid] != self.name:
            parts.insert(0, f":''其他同名条目见[[{self.name}]]。''")
        subject = f"''{self.name}''" if self.kind in ITALIC_KINDS else self.name
        parts.append("== 概况 ==\n" + "".join(ZH_SENTENCES[relation].format(s=subject, v=self.joined(relation))
                                             for relation in self.values))
        works = self.world.works_by_creator.get(self.index) if self.kind == "person" else None
        if works:
            dated = sorted((self.world.work_date(*self.world.locate(gid)) // 10000, gid) for gid in works)
            parts.append("== 作品 ==\n" + "\n".join(f"* ''{self.world.link(gid)}''（{year}年）"
                                                  for year, gid in dated[:MAX_LISTED_WORKS]))
        parts.append(f"[[Category:{noun}]]")
        return "\n\n".join(parts)

    def prose_value(self, fact: InfoboxField) -> str:
        """A value as Chinese prose writes it (dates 1950年3月4日)."""
        if fact.value_type == "date":
            year, month, day = decode_date(fact.value)
            return f"{year}年{month}月{day}日"
        if fact.value_type == "number":
            return format_number(fact.value)
        if fact.value_type == "text":
            return zh_value_word(fact.relation, str(fact.value))
        return self.infobox_value(fact)

    def joined(self, relation: str) -> str:
        """The values of ``relation``, joined with 、."""
        return "、".join(self.prose_value(fact) for fact in self.values[relation])
