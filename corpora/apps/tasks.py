"""App task sets: :func:`generate_app_tasks` draws tasks from the templates, category by
category, and writes ``SNAPSHOT/apps/<name>/{train,dev,test}.jsonl`` and ``card.md``.

Splits are by template (per category: the first template by name is test, the second
dev, the rest train), so no test template is seen in training. With ``count`` >= 48
every category appears at least ``count // 8`` times. Records are
:class:`~stillweb.corpora.tasks.store.record.TaskRecord` dicts: the first user turn is the
``question``; the facts the user asks for make the ``answer``; an impossible request is
``answerable: false``; the app-specific keys (``category``, ``template``, ``app_user``,
``turns``, ``program``, ``facts``, ``errors``, ``world``) ride along as extra keys.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.errors import UsageError
from stillweb.corpora.snapshot.publish import publish_directory
from stillweb.corpora.apps.generate import DEFAULT_USERS, shared_base
from stillweb.corpora.apps.template_kit import CATEGORIES, TaskSpec, TemplateContext
from stillweb.corpora.apps.templates_read import READ_TEMPLATES
from stillweb.corpora.apps.templates_write import WRITE_TEMPLATES
from stillweb.corpora.keyed import KeyedRng, stable_hash
from stillweb.corpora.tasks.store.record import TaskRecord

__all__ = ["TEMPLATES", "generate_app_tasks", "make_app_tasks", "template_splits", "app_task_dir"]

TEMPLATES = {**READ_TEMPLATES, **WRITE_TEMPLATES}
MAX_ATTEMPTS = 40


def template_splits() -> dict[str, str]:
    """Template name -> split: per category, the first template by name is test, the second dev, the rest train."""
    splits = {}
    for category in CATEGORIES:
        names = sorted(name for name, (kind, _) in TEMPLATES.items() if kind == category)
        for position, name in enumerate(names):
            splits[name] = "test" if position == 0 else "dev" if position == 1 else "train"
    return splits


def _cycle_order(category: str, splits: dict[str, str]) -> list[str]:
    """The order templates of a category take turns in: a train one, the test one, the dev one,
    then the other train ones (so small sets reach every split early)."""
    names = sorted(name for name, (kind, _) in TEMPLATES.items() if kind == category)
    train = [name for name in names if splits[name] == "train"]
    others = {splits[name]: name for name in names if splits[name] != "train"}
    return [*train[:1], *(others[split] for split in ("test", "dev") if split in others), *train[1:]]


def app_task_dir(snapshot_path: str | Path, name: str) -> Path:
    """Where the app task set ``name`` of a snapshot lives."""
    return Path(snapshot_path) / "apps" / name


def make_app_tasks(snapshot_path: str | Path, count: int, seed: int = 0, users: int = DEFAULT_USERS) -> list[dict[str, Any]]:
    """``count`` task records (round-robin over categories, then templates), in a deterministic order."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise UsageError(f"count must be a positive integer, got {count!r}")
    base = shared_base(str(Path(snapshot_path).resolve()), seed, users)
    connection = base.connect()
    splits = template_splits()
    by_category = {category: _cycle_order(category, splits) for category in CATEGORIES}
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index in range(count):
        category = CATEGORIES[index % len(CATEGORIES)]
        names = by_category[category]
        template = names[(index // len(CATEGORIES)) % len(names)]
        record = _draw(connection, base.users, seed, index, template, splits[template], seen)
        if record is None:
            raise UsageError(f"template {template!r} found no target in {MAX_ATTEMPTS} users of snapshot {snapshot_path}")
        record["world"] = {"seed": seed, "users": users}
        records.append(record)
    connection.close()
    return records


def generate_app_tasks(snapshot_path: str | Path, name: str, count: int, seed: int = 0, users: int = DEFAULT_USERS) -> Path:
    """Write the task set ``name`` (splits by template and a card); returns its directory."""
    if not name or "/" in name or name.startswith("."):
        raise UsageError(f"task set name must be a plain folder name, got {name!r}")
    records = make_app_tasks(snapshot_path, count, seed, users)

    def fill(directory: Path) -> None:
        for split in SPLITS:
            lines = [json.dumps(record, ensure_ascii=False, sort_keys=True) for record in records if record["split"] == split]
            (directory / f"{split}.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        (directory / "card.md").write_text(set_card(name, records), encoding="utf-8")

    return publish_directory(app_task_dir(snapshot_path, name), fill, "the app task set")  # whole or not at all


def set_card(name: str, records: list[dict[str, Any]]) -> str:
    """The set's card: world parameters, and the count and share of each category, template and split."""
    world = records[0]["world"]
    categories = Counter(record["category"] for record in records)
    lines = [f"# App task set {name}", "", f"{len(records)} tasks over the app world (seed {world['seed']}, "
             f"{world['users']} users). Checks: final state of every table equals the reference program's "
             "replay (touched and untouched), and the facts asked for appear in the answers; impossible "
             "requests pass only by abstaining with the state unchanged.", "",
             "| category | tasks | share | templates (split) |", "|---|---|---|---|"]
    splits = template_splits()
    for category in CATEGORIES:
        templates = sorted({record["template"] for record in records if record["category"] == category})
        named = ", ".join(f"{template} ({splits[template]})" for template in templates)
        lines.append(f"| {category} | {categories[category]} | {categories[category] / len(records):.0%} | {named} |")
    lines += ["", "| split | tasks |", "|---|---|"]
    lines += [f"| {split} | {sum(record['split'] == split for record in records)} |" for split in SPLITS]
    turns = Counter(len(record["turns"]) for record in records)
    lines += ["", "User turns per task: " + ", ".join(f"{count} with {number}" for number, count in sorted(turns.items())) + "."]
    return "\n".join(lines) + "\n"


def _draw(connection, users: int, seed: int, index: int, template: str, split: str, seen: set[str]) -> dict[str, Any] | None:
    category, make = TEMPLATES[template]
    for attempt in range(MAX_ATTEMPTS):
        rng = KeyedRng(seed, "apps", "task", index, attempt)
        user = rng.integer(1, users)
        spec = make(TemplateContext(connection, user, users, rng.child("template")))
        if spec is None:
            continue
        record = _record(spec, category, template, split, user)
        if record["task_id"] not in seen:
            seen.add(record["task_id"])
            return record
    return None


def _record(spec: TaskSpec, category: str, template: str, split: str, user: int) -> dict[str, Any]:
    facts = [fact for turn in spec.facts for fact in turn]
    body = {"category": category, "template": template, "app_user": user, "turns": list(spec.turns),
            "program": [list(turn) for turn in spec.program], "facts": [list(turn) for turn in spec.facts],
            "errors": {str(index): kind for index, kind in sorted(spec.errors.items())}, "split": split}
    task_id = stable_hash(json.dumps(body, sort_keys=True, ensure_ascii=False))
    answer = "" if spec.abstain else ("; ".join(facts) or "done")
    record = TaskRecord.from_dict({**body, "task_id": task_id, "question": spec.turns[0], "answer": answer,
                                   "answerable": not spec.abstain, "shape": category})
    return record.to_dict()
