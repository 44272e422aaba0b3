"""Questions in Chinese: the same queries, proofs and keys as :mod:`~stillweb.corpora.tasks.phrase.verbalize`,
said with the Chinese relation table (``corpora/tasks/phrase/phrasing_zh.toml``).

:func:`render_question_in_language` is what the generator calls: a snapshot whose index analyzes
Chinese (``stillweb build ... --language zh``) gets Chinese questions, any other the English ones.
Chinese puts each description before its noun with 的, so a variable reads "出生于北京、职业为物理学家的人物";
a variable two edges or more below the root whose noun no other variable shares is told in a sentence
of its own first ("有一个位于中国的城市。") and then named "该城市", as the English questions do.
Values read as Chinese writes them: 1809年2月12日, 1809年, 1880年代, 19世纪下半叶, 2,392,976.

>>> year_period_text(1880, 1889), year_period_text(1990, 1993), year_period_text(1850, 1899)
('1880年代', '1990年代初', '19世纪下半叶')
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.phrase.phrasing import entity_label, relation_words
from stillweb.corpora.tasks.prove.real_world import work_kind_and_year
from stillweb.corpora.tasks.query import Constant, Node, Query
from stillweb.corpora.tasks.phrase.value_forms import grouped_number
from stillweb.corpora.tasks.types import entity_classes, is_person, relation_signature, variable_noun
from stillweb.corpora.tasks.phrase.verbalize import render_question, told_apart

__all__ = ["PHRASING_ZH_PATH", "question_language", "render_question_in_language", "render_question_zh",
           "said_name_zh", "zh_date", "year_period_text", "zh_relations"]

PHRASING_ZH_PATH = Path(__file__).resolve().parent / "phrasing_zh.toml"
_ZH_INTRO_FRAMES = ("有一个{d}的{n}。", "考虑一个{d}的{n}。")  # a variable told in a sentence of its own first


def question_language(graph: FactGraph) -> str:
    """``zh`` when the graph's snapshot is indexed as Chinese, else ``en``."""
    analyzer = getattr(getattr(graph.world, "snapshot", None), "analyzer", None)
    return "zh" if getattr(analyzer, "language", None) == "zh" else "en"


def render_question_in_language(query: Query, graph: FactGraph, rng: KeyedRng) -> str:
    """The question of ``query`` in the snapshot's language (:func:`question_language`)."""
    if question_language(graph) == "zh":
        return render_question_zh(query, graph, rng)
    return render_question(query, graph, rng)


def render_question_zh(query: Query, graph: FactGraph, rng: KeyedRng) -> str:
    """The Chinese question of ``query`` (see the module docstring)."""
    text = _ZhText(query, graph, rng)
    root = query.root
    noun, (described, forward) = text.nouns[root.name], text.description(root)
    if query.literal_answer:
        question = _ask_value(query, graph, noun, described, rng)
    elif text.people[root.name]:
        question = rng.choice(("{d}的{n}是谁？", "请问{d}的{n}是谁？")).format(d=described, n=noun)
    elif forward and rng.chance(0.4):  # 哪一个城市位于中国？ (a backward phrase reads wrong after the noun)
        question = f"哪一个{noun}{described}？"
    else:
        question = rng.choice(("{d}的{n}是哪一个？", "请说出{d}的{n}的名称。", "请指出{d}的{n}。")).format(d=described, n=noun)
    return "".join([*text.intros, question])


def _ask_value(query: Query, graph: FactGraph, noun: str, described: str, rng: KeyedRng) -> str:
    spec = zh_relations().get(query.answer_relation, {})
    attribute = spec.get("attr") or f"「{relation_words(query.answer_relation).attribute}」"
    if (year := graph.year_of(query.answer_fact)) is not None:  # a time-varying value: with its year
        attribute = f"{year}年的{attribute}"
    if relation_signature(query.answer_relation).range == frozenset({"person"}):
        wh = "谁"
    else:
        wh = "多少" if graph.facts[query.answer_fact].value_type == "number" else "什么"
    if rng.chance(0.4):
        return f"{described}的{noun}的{attribute}是{wh}？"
    told = rng.choice(_ZH_INTRO_FRAMES).format(d=described, n=noun)
    ask = spec.get("ask")
    if ask and rng.chance(0.7):  # a time-varying value: its year first, 2016年，这个国家有多少人口？
        return told + (f"{year}年，" if year is not None else "") + ask.format(np=f"这个{noun}")
    return f"{told}这个{noun}的{attribute}是{wh}？"


class _ZhText:
    """The descriptions of one question's variables, deep ones told in sentences of their own."""

    def __init__(self, query: Query, graph: FactGraph, rng: KeyedRng) -> None:
        self.query, self.graph, self.rng = query, graph, rng
        self.people = {n.name: is_person(graph, query, n) for n in query.nodes}
        self.nouns = {n.name: zh_noun(variable_noun(graph, query, n), self.people[n.name]) for n in query.nodes}
        self.told_apart = told_apart(query, self.nouns)
        self.intros: list[str] = []

    def description(self, node: Node) -> tuple[str, bool]:
        """The node's descriptions joined ("出生于北京、职业为物理学家并且获得过某奖项"), and whether it is one
        forward phrase (which may follow its noun: 哪一个城市位于中国)."""
        own = entity_classes(self.graph, node.entity)
        kind = next(iter(own)) if own else ""
        years = {c.relation: self.graph.year_of(c.fact) for c in node.constants if c.node_is_subject}
        items = [(c.relation, c.node_is_subject, self._constant_text(c)) for c in node.constants]
        items += [(child.relation, child.parent_is_subject, self.noun_phrase(child))
                  for child in (self.query.node(name) for name in node.children)]
        dates = {relation: value for relation, forward, value in items if forward and relation in _DATED_PLACES}
        places = {_DATED_PLACES[relation] for relation in dates}
        merged = {date for date, place in _DATED_PLACES.items()
                  if date in dates and any(r == place and f for r, f, _v in items)}
        parts, forward, said = [], [], set()
        for relation, is_forward, value in items:
            if is_forward and relation in merged:
                continue
            phrase = _phrase(relation, is_forward, value, kind)
            if is_forward and years.get(relation) is not None:  # 2016年人口为40,400,000
                phrase = f"{years[relation]}年{phrase}"
            date = next((d for d, place in _DATED_PLACES.items() if place == relation and d in merged), None)
            if is_forward and relation in places and date is not None and date not in said:  # 于1905年2月3日出生于北京
                phrase = "于" + dates[date] + phrase
                said.add(date)
            parts.append(phrase)
            forward.append(is_forward)
        parts = self.rng.shuffled(parts)
        one_forward = len(parts) == 1 and forward[0]
        if len(parts) <= 1:
            return "".join(parts), one_forward
        return "、".join(parts[:-1]) + "并且" + parts[-1], False

    def noun_phrase(self, node: Node) -> str:
        """"位于中国的城市", or "该城市" after a sentence of its own."""
        noun = self.nouns[node.name]
        described, _forward = self.description(node)
        if node.name in self.told_apart:
            self.intros.append(self.rng.choice(_ZH_INTRO_FRAMES).format(d=described, n=noun))
            return f"该{noun}"
        return f"{described}的{noun}" if described else f"某个{noun}"

    def _constant_text(self, constant: Constant) -> str:
        condition = constant.condition
        if condition.kind == "year_range":
            return year_period_text(int(condition.low), int(condition.high))
        if condition.kind == "number_range":
            return f"{grouped_number(condition.low)}至{grouped_number(condition.high)}"
        fact = self.graph.facts[constant.fact]
        if condition.kind == "entity":
            return "或".join(said_name_zh(self.graph, label, entity) for label, entity in zip(condition.labels, condition.entities))
        if fact.value_type == "entity":
            return "或".join(entity_label(label) for label in condition.labels)
        if len(condition.labels) == 1:
            return zh_value(condition.labels[0], fact.value_type, fact.date, fact.number)
        return "或".join(condition.labels)


_DATED_PLACES = {"birth_date": "birth_place", "death_date": "death_place"}  # a date said with its place


def _phrase(relation: str, node_is_subject: bool, value: str, subject_class: str) -> str:
    """The description saying ``relation`` on a node (forward when it is the subject), ``{x}`` = ``value``."""
    spec = zh_relations().get(relation)
    if spec is None:
        words = relation_words(relation).attribute
        template = f"「{words}」为{{x}}" if node_is_subject else f"「{words}」为{{x}}的对象"
    elif node_is_subject:
        template = spec.get("fc", {}).get(subject_class, spec["f"])
    else:
        template = spec.get("b") or f"作为{{x}}的{spec['attr']}"
    return template.format(x=value)


def said_name_zh(graph: FactGraph, label: str, entity: int) -> str:
    """A constant's name; on real pages a work with its year and kind, as English says "the 1992 book Deep
    Trouble": 1992年的书籍《Deep Trouble》 (prove/real_world.py; a work without a year is never a constant)."""
    work = work_kind_and_year(graph, entity) if graph.real else None
    if work is None or work[1] is None:
        return entity_label(label)
    return f"{work[1]}年的{zh_noun(work[0], False)}《{entity_label(label)}》"


def zh_value(value: str, value_type: str, date: str | None, number: float | None) -> str:
    """A literal value as a Chinese question writes it."""
    if value_type == "date" and date and len(date) == 10:
        return zh_date(date)
    if value_type == "year" or (date and len(date) == 4):
        return f"{int((date or value)[:4])}年"
    if value_type == "number" and number is not None:
        return grouped_number(number)
    return value


def zh_date(iso: str) -> str:
    """``1992-03-04`` -> ``1992年3月4日`` (other values unchanged)."""
    parts = iso.split("-")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return iso
    return f"{int(parts[0])}年{int(parts[1])}月{int(parts[2])}日"


def year_period_text(low: int, high: int) -> str:
    """The period ``low``..``high`` (as :func:`~stillweb.corpora.tasks.phrase.obfuscate.year_period` makes them)."""
    decade = low - low % 10
    if high - low == 9 and low % 10 == 0:
        return f"{decade}年代"
    if high - low == 49 and low % 50 == 0:
        return f"{low // 100 + 1}世纪{'上' if low % 100 == 0 else '下'}半叶"
    if low // 10 == high // 10:
        part = "初" if low % 10 == 0 else "中期" if low % 10 == 4 else "末"
        return f"{decade}年代{part}"
    return f"{low}年至{high}年间"


def zh_noun(noun: str, person: bool) -> str:
    """The Chinese noun for an English one (``人物`` for an unlisted person noun, ``对象`` for anything else)."""
    return _nouns().get(noun) or ("人物" if person else "对象")


@cache
def zh_relations() -> dict[str, dict]:
    """The relations of the Chinese table."""
    return _data()["relations"]


@cache
def _nouns() -> dict[str, str]:
    return _data()["nouns"]


@cache
def _data() -> dict:
    with open(PHRASING_ZH_PATH, "rb") as handle:
        return tomllib.load(handle)
