"""Questions in Chinese: the same queries, proofs and keys as :mod:`~stillweb.corpora.tasks.phrase.verbalize`,
said with the Chinese relation table (``corpora/tasks/phrase/phrasing_zh.toml``), in the same shape.

:func:`render_question_in_language` is what the generator calls: a snapshot whose index analyzes
Chinese (``stillweb build ... --language zh``) gets Chinese questions, any other the English ones.
As in English (and in SailorFog-QA's Chinese questions: "一座著名的官邸位于中非某国首都，是该国最高领导人的
办公与居住场所。这座建筑由一位……的建筑师设计……这座官邸的名字是什么？"), each variable is told in a
sentence of its own, in :func:`~stillweb.corpora.tasks.phrase.plan.plan_question`'s order, and then the
question asks (issue 49 item 1): "一位画家于1860年2月26日出生于Port Ruano，获得过Harley Medal。该画家的配偶
毕业于Kemp University。该配偶出生的城市是哪一座？". A variable is named through its anchor with one 的 ("该画家
出生的城市", "该画家的配偶"), then by a short handle ("这座城市", "该配偶", "第二位人物"), so no sentence stacks
descriptions. Values read as Chinese writes them: 1809年2月12日, 1809年, 1880年代, 19世纪下半叶, 2,392,976;
class values (an occupation, a genre, an instrument) in Chinese words (``corpora/synthetic_values_zh.toml``).

>>> year_period_text(1880, 1889), year_period_text(1990, 1993), year_period_text(1850, 1899)
('1880年代', '1990年代初', '19世纪下半叶')
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

from stillweb.corpora.keyed import KeyedRng
from stillweb.corpora.synthetic.chinese_pages import zh_value_word
from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.phrase.phrasing import entity_label, relation_words
from stillweb.corpora.tasks.phrase.plan import OCCUPATION, Part, TellingStep, Telling
from stillweb.corpora.tasks.phrase.value_forms import grouped_number
from stillweb.corpora.tasks.phrase.verbalize import render_question
from stillweb.corpora.tasks.prove.keys import functional
from stillweb.corpora.tasks.prove.real_world import work_kind_and_year
from stillweb.corpora.tasks.query import Constant, Query
from stillweb.corpora.tasks.types import relation_signature

__all__ = ["PHRASING_ZH_PATH", "question_language", "render_question_in_language", "render_question_zh",
           "said_name_zh", "zh_date", "year_period_text", "zh_relations", "zh_noun"]

PHRASING_ZH_PATH = Path(__file__).resolve().parent / "phrasing_zh.toml"
_ZH_ORDINALS = ("第一", "第二", "第三", "第四", "第五", "第六", "第七", "第八")
_MAX_SENTENCE_CHARS = 36  # a sentence takes another description while it stays this short
_DATED_PLACES = {"birth_date": "birth_place", "death_date": "death_place"}  # a date said with its place


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
    return _Zh(query, graph, rng).question()


class _Zh(Telling):
    """The sentences of one Chinese question, told step by step."""

    def nouns_of(self) -> dict[str, str]:
        """Chinese nouns: an occupation said as the noun in Chinese words (一位画家); one without them said as a
        description (职业为...) of a 人物."""
        nouns, self.extra = {}, {}
        for name, noun in self.plan.nouns.items():
            said = self.plan.occupations.get(name)
            word = zh_value_word(OCCUPATION, said) if said else ""
            if said and word != said:
                nouns[name] = word
            else:
                nouns[name] = zh_noun(noun if not said else "person", self.plan.people[name])
                if said:
                    self.extra[name] = [_phrase(OCCUPATION, True, said, "")]
        return nouns

    def classifier(self, name: str) -> str:
        return "位" if self.plan.people[name] else _classifiers().get(self.nouns[name], "个")

    def only(self, name: str) -> str:
        return f"该{self.nouns[name]}"

    def numbered(self, name: str, place: int) -> str:
        return f"{_ZH_ORDINALS[min(place, len(_ZH_ORDINALS)) - 1]}{self.classifier(name)}{self.nouns[name]}"

    def question(self) -> str:
        return "".join(self.parts_of_question())

    def tell(self, step: TellingStep) -> None:
        """One variable's sentences (一位画家出生于...。), or none when it is named inside the next one."""
        name = step.node.name
        verbs, others = self.predicates(step)
        if self.folds(step, bool(verbs or others)):
            return
        if not verbs and not others:  # told from its anchor's side: 该画家出生于一座城市。
            anchor = step.anchor
            if anchor.node_is_subject:  # 一个国家的首都是该城市。
                said = _said(self.indefinite(name), _phrase(anchor.relation, True, self.name_of(anchor.child), ""))
            else:
                said = _said(self.name_of(anchor.child), _phrase(anchor.relation, True, self.indefinite(name), ""))
            self.sentences.append(said + "。")
            self.handles[name] = self.handle(step)
            return
        subject = self.introduce(step)
        first = True
        for chunk in _chunks(verbs, subject):
            again = self.name_of(name)
            said = _said(subject, chunk[0]) if first else _said(again, chunk[0]) if _attribute_first(chunk[0]) \
                else f"{again}还{chunk[0]}"
            self.sentences.append("，".join([said, *chunk[1:]]) + "。")
            first = False
        for text in others:
            self.sentences.append(text.format(obj=subject if first else self.name_of(name)) + "。")
            first = False

    def predicates(self, step: TellingStep) -> tuple[list[str], list[str]]:
        """The variable's facts: descriptions said after it (出生于北京), and sentences of their own whose
        subject is the value ("Ann Lee出生于{obj}"); a date with its place once (于1905年2月3日出生于北京)."""
        name, kind = step.node.name, self.plan.kinds[step.node.name]
        parts = [(p, self.value(p)) for p in step.parts]
        dates = {p.relation: v for p, v in parts if p.node_is_subject and p.relation in _DATED_PLACES}
        places = {_DATED_PLACES[r] for r in dates} & {p.relation for p, _v in [*parts, (step.anchor, "")]
                                                      if p is not None and p.node_is_subject}
        verbs, others = list(self.extra.get(name, [])), []
        for part, value in parts:
            if part.node_is_subject and part.relation in dates and _DATED_PLACES[part.relation] in places:
                continue  # said with its place
            if part.node_is_subject:
                phrase = _phrase(part.relation, True, value, kind)
                if part.constant is not None and (year := self.graph.year_of(part.constant.fact)) is not None:
                    phrase = f"{year}年{phrase}"  # 2016年人口为40,400,000
                date = next((d for d, place in _DATED_PLACES.items() if place == part.relation and d in dates), None)
                verbs.append(f"于{dates[date]}{phrase}" if date is not None and part.relation in places else phrase)
            else:  # the value is the fact's subject: its own sentence about it
                others.append(_said(value, _phrase(part.relation, True, "{obj}", "")))
        return self.rng.shuffled(verbs) if len(verbs) > 1 else verbs, others

    def value(self, part: Part) -> str:
        return zh_constant_text(part.constant, self.graph) if part.constant is not None else self.name_of(part.child)

    def foldable(self, step: TellingStep, ref: str) -> bool:
        """Named inside the next sentence, once: a description with one 的 whose anchor was not folded."""
        node = step.node
        if step.anchor.child in self.folded or node.parent is None or ref.count("的") > 1:
            return False
        parent = self.query.node(node.parent)
        return not (self.query.literal_answer and parent is self.query.root and not parent.constants
                    and len(parent.children) == 1)

    def ref(self, step: TellingStep) -> tuple[str, bool]:
        """The variable named through its anchor, and whether it then goes by its role: "该画家的配偶"
        (a role: "该配偶"), "该画家出生的城市", "首都是该城市的国家"."""
        name, anchor = step.node.name, step.anchor
        noun, spec = self.nouns[name], zh_relations().get(anchor.relation, {})
        attribute = spec.get("attr", "")
        possessive = (not anchor.node_is_subject and functional(anchor.relation)) or anchor.relation in _SYMMETRIC
        if (possessive and anchor.child not in self.folded and name not in self.plan.occupations and attribute
                and not attribute.startswith("所") and "（" not in attribute and attribute != noun
                and (self.nouns[anchor.child] == noun or self.rng.chance(0.6))):
            role = f"该{attribute}" not in self.handles.values() and attribute not in self.nouns.values()
            told, self.told = self.told, [n for n in self.told if n != name]
            x = self.name_of(anchor.child)
            self.told = told
            return f"{x}的{attribute}", role
        x = self.name_of(anchor.child)
        description = _phrase(anchor.relation, anchor.node_is_subject, x, self.plan.kinds[name])
        date = next((self.value(p) for p in step.parts if p.node_is_subject and anchor.node_is_subject
                     and _DATED_PLACES.get(p.relation) == anchor.relation), None)
        description = f"于{date}{description}" if date else description  # 于1905年逝世于该城市的人物: one death
        another = f"另一{self.classifier(name)}" if name in self.ordinal and self.place(name) > 1 else ""
        return f"{description}的{another}{noun}", False

    def handle(self, step: TellingStep) -> str:
        """How a told variable goes afterwards: "这座城市", "该配偶" (namesakes: :meth:`name_of`)."""
        name = step.node.name
        noun = self.nouns[name]
        alone = not self.plan.shared(name, self.nouns) and not self.plan.shared_with_root(name, self.nouns)
        if name in self.roles and alone and not self.plan.people[name]:
            self.roles.discard(name)
        if name in self.roles:
            return f"该{zh_relations()[step.anchor.relation]['attr']}"
        if alone:
            return self.rng.choice((f"该{noun}", f"这{self.classifier(name)}{noun}"))
        return f"该{noun}"

    def indefinite(self, name: str) -> str:
        """一位画家, 一座城市; among namesakes 另一位人物."""
        first = name not in self.ordinal or self.place(name) == 1
        return f"{'一' if first else '另一'}{self.classifier(name)}{self.nouns[name]}"

    def ask_entity(self, root: TellingStep) -> str:
        name = root.node.name
        noun, kind = self.nouns[name], self.plan.kinds[name]
        parts = ([root.anchor] if root.anchor is not None else []) + root.parts
        descriptions = [_phrase(p.relation, p.node_is_subject, self.value(p), kind) for p in parts]
        attribute = zh_relations().get(parts[0].relation, {}).get("attr", "") if len(parts) == 1 else ""
        if (attribute and not parts[0].node_is_subject and functional(parts[0].relation) and "（" not in attribute
                and not attribute.startswith("所") and self.value(parts[0]).count("的") <= 1):  # 该国家的首都是哪一座城市？
            wh = "谁" if self.plan.people[name] else f"哪一{self.classifier(name)}{noun}"
            return f"{self.value(parts[0])}的{attribute}是{wh}？"
        if len(descriptions) == 1 and parts[0].node_is_subject and self.rng.chance(0.4):
            return f"哪一{self.classifier(name)}{noun}{descriptions[0]}？"  # 哪一座城市位于中国？
        described = "、".join(descriptions[:-1]) + ("并且" if len(descriptions) > 1 else "") + descriptions[-1]
        if self.plan.people[name]:
            return self.rng.choice(("{d}的{n}是谁？", "请问{d}的{n}是谁？")).format(d=described, n=noun)
        frames = ("{d}的{n}是哪一{c}？", "请指出{d}的{n}。", "请问{d}的{n}是哪一{c}？")
        return self.rng.choice(frames).format(d=described, n=noun, c=self.classifier(name))

    def ask_value(self, root: TellingStep) -> str:
        spec = zh_relations().get(self.query.answer_relation, {})
        attribute = spec.get("attr") or f"「{relation_words(self.query.answer_relation).attribute}」"
        if relation_signature(self.query.answer_relation).range == frozenset({"person"}):
            wh = "谁"
        else:
            wh = "多少" if self.graph.facts[self.query.answer_fact].value_type == "number" else "什么"
        ask = spec.get("ask") if spec.get("ask") and self.rng.chance(0.7) else f"{{np}}的{attribute}是{wh}？"
        if (year := self.graph.year_of(self.query.answer_fact)) is not None:  # a time-varying value: its year first
            ask = f"{year}年，{ask}" if ask == spec.get("ask") else f"{{np}}{year}年的{attribute}是{wh}？"
        if not root.parts and root.anchor is not None and root.anchor.child not in self.folded \
                and not self.extra.get(root.node.name):
            ref, role = self.ref(root)
            if (role or root.node.name not in self.ordinal) and ref.count("的") + ask.count("的") <= 2:
                return ask.format(np=ref)
        self.tell(root)
        return ask.format(np=self.name_of(root.node.name))


_SYMMETRIC = frozenset({"spouse", "sibling"})  # the same both ways: "X的配偶" from either end


def _said(subject: str, description: str) -> str:
    """A description said of a subject: 该城市 + 首都是X -> 该城市的首都是X (an attribute takes 的), else joined."""
    return f"{subject}的{description}" if _attribute_first(description) else subject + description


def _attribute_first(description: str) -> bool:
    """True for a description that opens with the attribute it gives (首都是X, 人口为X, 面积为X)."""
    for verb in ("是", "为"):
        if verb in description[1:7] and not description.startswith(_VERB_STARTS):
            return True
    return False


_VERB_STARTS = ("是", "于", "由", "与", "在", "从", "以", "受", "属于", "位于", "来自", "出生", "逝世", "毕业", "任职",
                "获得", "演奏", "创作", "担任", "接替", "接任", "信仰", "效忠", "服役", "参加", "居住", "执导", "主演",
                "录制", "撰写", "创立", "隶属", "使用", "实行", "首次", "发行", "出版", "举行", "发生", "收录", "共有",
                "有", "安葬", "拥有", "指导", "影响", "主要", "从事", "设在", "海拔", "片长", "搭载", "搭乘", "车辆")


def _chunks(verbs: list[str], subject: str) -> list[list[str]]:
    """Descriptions grouped into sentences of about :data:`_MAX_SENTENCE_CHARS` characters, a word in Latin
    script counted as one (one description at least)."""
    chunks: list[list[str]] = []
    size = 0
    for verb in verbs:
        if chunks and size + _units(verb) + 1 <= _MAX_SENTENCE_CHARS and len(chunks[-1]) < 3:
            chunks[-1].append(verb)
            size += _units(verb) + 1
        else:
            chunks.append([verb])
            size = (_units(subject) if len(chunks) == 1 else 4) + _units(verb)
    return chunks


def _units(text: str) -> int:
    return len(_LATIN_RUN_RE.sub("x", text))


_LATIN_RUN_RE = re.compile(r"[A-Za-z0-9\u00c0-\u024f'.,\u2013-]+")


def zh_constant_text(constant: Constant, graph: FactGraph) -> str:
    """A constant as a Chinese question says it: a period, a range, a name, a date, or a class word in Chinese."""
    condition = constant.condition
    if condition.kind == "year_range":
        return year_period_text(int(condition.low), int(condition.high))
    if condition.kind == "number_range":
        return f"{grouped_number(condition.low)}至{grouped_number(condition.high)}"
    fact = graph.facts[constant.fact]
    if condition.kind == "entity":
        return "或".join(said_name_zh(graph, label, entity) for label, entity in zip(condition.labels, condition.entities))
    if fact.value_type == "entity":
        return "或".join(entity_label(label) for label in condition.labels)
    if len(condition.labels) == 1:
        return zh_value(fact.relation, condition.labels[0], fact.value_type, fact.date, fact.number)
    return "或".join(zh_value_word(fact.relation, label) for label in condition.labels)


def said_name_zh(graph: FactGraph, label: str, entity: int) -> str:
    """A constant's name; on real pages a work with its year and kind, as English says "the 1992 book Deep
    Trouble": 1992年的书籍《Deep Trouble》 (prove/real_world.py; a work without a year is never a constant)."""
    work = work_kind_and_year(graph, entity) if graph.real else None
    if work is None or work[1] is None:
        return entity_label(label)
    return f"{work[1]}年的{zh_noun(work[0], False)}《{entity_label(label)}》"


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
    return template.replace("{x}", value)


def zh_value(relation: str, value: str, value_type: str, date: str | None, number: float | None) -> str:
    """A literal value as a Chinese question writes it (a class word of ``relation`` in Chinese)."""
    if value_type == "date" and date and len(date) == 10:
        return zh_date(date)
    if value_type == "year" or (date and len(date) == 4):
        return f"{int((date or value)[:4])}年"
    if value_type == "number" and number is not None:
        return grouped_number(number)
    return zh_value_word(relation, value)


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
    return _data()["nouns"].get(noun) or ("人物" if person else "对象")


@cache
def zh_relations() -> dict[str, dict]:
    """The relations of the Chinese table."""
    return _data()["relations"]


@cache
def _classifiers() -> dict[str, str]:
    return _data()["classifiers"]


@cache
def _data() -> dict:
    with open(PHRASING_ZH_PATH, "rb") as handle:
        return tomllib.load(handle)
