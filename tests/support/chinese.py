"""A small Chinese row corpus, written for these tests (not copied from anywhere), and its snapshot.

Simplified and traditional characters mix as they do on zhwiki; one row is Japanese and
one Korean, so the bigram analyzer's three main scripts are all present.
"""

from __future__ import annotations

import json
from pathlib import Path

from stillweb.corpora.build.from_source import build_rows
from stillweb.corpora.build.snapshot_writer import BuildResult

CHINESE_ROWS = [
    {"id": "1", "title": "北京", "text": "北京是中华人民共和国的首都，位于华北平原的北部。北京有故宫和天坛。"},
    {"id": "2", "title": "上海", "text": "上海位于长江入海口，是中国最大的城市之一，也是重要的港口。"},
    {"id": "3", "title": "長城", "text": "長城是中國古代的軍事防禦工程，東起山海關，西至嘉峪關。The Great Wall of China."},
    {"id": "4", "title": "长江", "text": "长江是亚洲第一长河，全长约6300公里，流经上海注入东海。"},
    {"id": "5", "title": "黄河", "text": "黄河是中国第二长河，被称为中华文明的摇篮。"},
    {"id": "6", "title": "故宫", "text": "故宫位于北京中轴线的中心，是明清两代的皇家宫殿，旧称紫禁城。"},
    {"id": "7", "title": "東京", "text": "東京は日本の首都であり、東京都の区部を指すこともある。"},
    {"id": "8", "title": "서울", "text": "서울은 대한민국의 수도이며 한강이 도시를 가로질러 흐른다."},
]


def write_chinese_rows(path: Path, rows: list[dict] | None = None) -> Path:
    """The rows as a JSON-lines file at ``path``."""
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows or CHINESE_ROWS), encoding="utf-8")
    return path


def build_chinese_snapshot(directory: Path, **options) -> BuildResult:
    """Build the Chinese rows into ``directory / "zh"`` (``options`` go to ``build_rows``)."""
    directory.mkdir(parents=True, exist_ok=True)
    return build_rows([write_chinese_rows(directory / "zh.jsonl")], directory / "zh", progress=False, **options)


# A question written for these tests over CHINESE_ROWS (doc 0 is 北京), with the answer's other forms.
CAPITAL_TASK = {
    "task_id": "zh-capital", "question": "中华人民共和国的首都是哪座城市？", "answer": "北京", "aliases": ["北京市"],
    "evidence": [{"subject": "北京", "relation": "首都", "value": "中华人民共和国", "doc_id": 0, "doc_title": "北京"}],
    "evidence_docs": [0], "hops": 1, "split": "train", "answer_doc": 0,
}


def chinese_task_snapshot(directory: Path, name: str = "zh") -> Path:
    """The Chinese snapshot with a task set ``name`` holding :data:`CAPITAL_TASK`."""
    from stillweb.corpora.tasks.store.record import TaskRecord
    from stillweb.corpora.tasks.store.files import write_task_set

    out = build_chinese_snapshot(directory).path
    write_task_set(out, name, [TaskRecord.from_dict(CAPITAL_TASK)],
                   lambda folder: (folder / "card.md").write_text("中文 task set for the tests\n", encoding="utf-8"))
    return out
