"""BFCL's multi-turn tasks, read at run time from the installed ``bfcl-eval`` package.

Nothing of BFCL is copied into this repository: the questions, initial states, ground-truth
calls and function docs are read from ``bfcl_eval/data`` of the installed package (Berkeley
Function Calling Leaderboard v4, Apache-2.0; install with ``scripts/install_bfcl.sh``), and
the package's version goes into every episode's ``info`` and every recording.

A task is a :class:`~stillweb.corpora.tasks.store.record.TaskRecord` whose ``extra`` holds the BFCL entry:
``turns`` (each a list of user messages; a miss_func turn that adds functions is empty),
``initial_config``, ``involved_classes``, ``missed_function`` (turn index -> names held back
until that turn), ``ground_truth`` (per turn, BFCL's call strings) and ``category``.

>>> BFCL_CATEGORIES
('multi_turn_base', 'multi_turn_miss_func', 'multi_turn_miss_param', 'multi_turn_long_context')
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
from pathlib import Path
from typing import Any

from stillweb.corpora.errors import UsageError
from stillweb.corpora.tasks.store.record import TaskRecord
from stillweb.envs.core.task_loader import TaskSet

__all__ = ["BFCL_CATEGORIES", "BFCL_EVAL_VERSION", "API_CLASSES", "DEFAULT_MAX_TURNS", "DEFAULT_MAX_TOOL_CALLS", "bfcl_version", "bfcl_data_dir", "category_tasks",
           "function_docs", "require_bfcl"]

# The four multi-turn categories of BFCL v4 (200 tasks each). web_search is left out: its API calls
# live search engines (SerpAPI), which an offline environment cannot serve; memory needs embeddings.
BFCL_CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
# The version this environment, its card and its tests were made with (scripts/install_bfcl.sh installs it).
BFCL_EVAL_VERSION = "2026.3.23"
# The simulated APIs of the multi-turn categories and their function-doc files (BFCL's
# constants/executable_backend_config.py MULTI_TURN_FUNC_DOC_FILE_MAPPING, without web search and memory).
API_CLASSES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
# The default episode limits (BfclEnv's max_turns, max_tool_calls): the longest ground truth (a
# long_context task) takes 35 calls and 7 replies in one call per step.
DEFAULT_MAX_TURNS = 64
DEFAULT_MAX_TOOL_CALLS = 128
BFCL_INSTALL_HINT = 'install it with: python3 -m pip install -e ".[bfcl]" && bash scripts/install_bfcl.sh'


def require_bfcl() -> Path:
    """The installed ``bfcl_eval`` package directory; ``UsageError`` saying how to install it if absent."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(f"stillweb/BFCL-v0 needs the bfcl-eval package, which is not installed; {BFCL_INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


@functools.lru_cache(maxsize=1)
def bfcl_version() -> str:
    """The installed ``bfcl-eval`` version (recorded in ``info["bfcl_version"]``)."""
    require_bfcl()
    return importlib.metadata.version("bfcl-eval")


def bfcl_data_dir() -> Path:
    """``bfcl_eval/data`` of the installed package."""
    return require_bfcl() / "data"


def _read_lines(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@functools.lru_cache(maxsize=None)
def function_docs(class_name: str) -> tuple[dict[str, Any], ...]:
    """BFCL's function docs of one API class (``multi_turn_func_doc/<file>.json``), in file order."""
    if class_name not in API_CLASSES:
        raise UsageError(f"unknown BFCL API class {class_name!r}; known: {sorted(API_CLASSES)}")
    return tuple(_read_lines(bfcl_data_dir() / "multi_turn_func_doc" / f"{API_CLASSES[class_name]}.json"))


@functools.lru_cache(maxsize=None)
def category_tasks(category: str) -> TaskSet:
    """The tasks of one category, in BFCL's order, each entry joined with its ground truth."""
    if category not in BFCL_CATEGORIES:
        raise UsageError(f"category must be one of {BFCL_CATEGORIES}, got {category!r} "
                         "(web_search needs live search and is left out)")
    data = bfcl_data_dir()
    entries = _read_lines(data / f"BFCL_v4_{category}.json")
    answers = {row["id"]: row["ground_truth"] for row in _read_lines(data / "possible_answer" / f"BFCL_v4_{category}.json")}
    tasks = []
    for entry in entries:
        turns = [[message["content"] for message in turn] for turn in entry["question"]]
        extra = {
            "category": category,
            "turns": turns,
            "initial_config": entry.get("initial_config", {}),
            "involved_classes": list(entry["involved_classes"]),
            "missed_function": {int(turn): list(names) for turn, names in entry.get("missed_function", {}).items()},
            "excluded_function": list(entry.get("excluded_function", [])),
            "ground_truth": answers[entry["id"]],
        }
        question = next((text for turn in turns for text in turn), "")
        tasks.append(TaskRecord(task_id=entry["id"], question=question, answer="", extra=extra))
    return TaskSet(tasks, source=f"bfcl-eval {bfcl_version()} {category}")
