"""The synthetic world's class-word values (occupations, instruments, industries, genres, what an award
honours) said in Chinese in a ``--language zh`` world's prose, from the reviewed table
``corpora/synthetic_values_zh.toml``; names and the infobox values stay as the world writes them."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from stillweb.corpora.synthetic import generate_world
from stillweb.corpora.synthetic import names as nm
from stillweb.corpora.synthetic.chinese_pages import ZH_SENTENCES, ZH_VALUES_PATH, chinese_world_pages, zh_value_word

_HAN = re.compile(r"[\u4e00-\u9fff]")
# the prose before a class-word value: 的职业是作家, 演奏钢琴, 属于出版行业, 的类型是科幻, 为表彰...而设立
_VALUE_OPENERS = {relation: ZH_SENTENCES[relation].split("{v}")[0].replace("{s}", "")
                  for relation in ("occupation", "instrument", "industry", "genre", "awarded_for")}


def _world_values() -> dict[str, set[str]]:
    """Every value the world can give each class-word relation, as its infobox writes it (synthetic/facts.py)."""
    return {
        "occupation": {o[:1].upper() + o[1:] for o in nm.OCCUPATIONS},
        "instrument": set(nm.INSTRUMENTS),
        "industry": set(nm.INDUSTRIES),
        "genre": set(nm.BOOK_GENRES) | set(nm.FILM_GENRES) | set(nm.MUSIC_GENRES),
        "awarded_for": {f"Excellence in {field.lower()}" for field, _ in nm.AWARD_FIELDS},
    }


def test_every_class_word_value_has_a_chinese_word():
    with open(ZH_VALUES_PATH, "rb") as handle:
        table = tomllib.load(handle)
    values = _world_values()
    assert set(table) == set(values)
    for relation, expected in values.items():
        assert set(table[relation]) == expected, relation  # none missing, none the world cannot give
        assert all(_HAN.search(word) and not re.search(r"[A-Za-z]", word) for word in table[relation].values())
    assert zh_value_word("occupation", "Writer") == "作家" and zh_value_word("genre", "Science fiction") == "科幻"
    assert zh_value_word("currency", "Pouavian dram") == "Pouavian dram"  # a name: as written


def test_chinese_prose_says_class_words_in_chinese_and_keeps_the_infobox_values():
    pages = list(chinese_world_pages(generate_world(150, 2)))
    said = {relation: 0 for relation in _VALUE_OPENERS}
    for page in pages:
        prose = page.text.split("== 概况 ==", 1)[-1]
        for relation, opener in _VALUE_OPENERS.items():
            for match in re.finditer(re.escape(opener) + r"(\S)", prose):
                assert _HAN.match(match[1]), f"{page.title}: {relation} said in Latin letters: {prose[:200]}"
                said[relation] += 1
    assert all(count > 0 for count in said.values()), said
    infoboxes = "\n".join(page.text.split("== 概况 ==", 1)[0] for page in pages)
    assert re.search(r"\| occupation = [A-Z][a-z]", infoboxes) and "| genre = " in infoboxes  # facts as in English


_PROSE = ("import hashlib, re; from stillweb.corpora.synthetic import generate_world; "
          "from stillweb.corpora.synthetic.chinese_pages import chinese_world_pages; "
          "texts = [p.title + '\\x1f' + p.text for p in chinese_world_pages(generate_world(150, 2))]; "
          "print(hashlib.sha256('\\x1e'.join(texts).encode()).hexdigest(), "
          "sum(len(re.findall('的职业是[\\u4e00-\\u9fff]', t)) for t in texts))")


def test_chinese_value_words_are_identical_in_two_processes():
    runs = [subprocess.run([sys.executable, "-c", _PROSE], check=True, capture_output=True, text=True).stdout.split()
            for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0][0]) == 64 and int(runs[0][1]) > 10
