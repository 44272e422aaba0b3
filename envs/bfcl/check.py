"""The reward of ``BFCL-v0``: BFCL's own multi-turn checker, binary, at the end of the episode.

:func:`score_bfcl_episode` runs ``multi_turn_checker`` from the installed ``bfcl-eval``
(``eval_checker/multi_turn_eval/multi_turn_checker.py``: per turn, the state check, then the
response check, after the empty-turn check) unchanged, with one substitution: its executor,
which ``eval``s call strings, is replaced by :func:`safe_executor`, which runs the same calls as
``getattr`` on fresh :class:`~stillweb.envs.bfcl.api.BfclWorld` instances (same instance per
model and test entry across turns, same result text). The checker's function object is rebuilt
over a copy of its module's globals, so BFCL's module itself is never patched.

Before it, as BFCL's ``_evaluate_single_multi_turn_entry`` does, an episode that did not reach
the end of every user turn fails (``force_terminated``).

``reward_parts``: ``outcome`` (1.0 or 0.0), ``failed_check`` (``None``, ``"turns"``,
``"empty_turn"``, ``"instance_count"``, ``"state"`` or ``"response"``), ``failed_turn``,
``bfcl_error_type`` (BFCL's own, e.g. ``multi_turn:instance_state_mismatch``), ``error_message``,
``state_differences`` (the attributes that differed) and ``answered_turns``.
"""

from __future__ import annotations

import copy
import functools
import json
import types
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from stillweb.envs.bfcl.api import BfclWorld, parse_call
from stillweb.corpora.tasks.store.record import TaskRecord

__all__ = ["BfclChecks", "score_bfcl_episode", "safe_executor", "ground_truth_calls", "Call"]

Call = tuple[str, dict[str, Any]]  # a whitelisted method name and its literal arguments
_CHECKS = {"multi_turn:empty_turn_model_response": "empty_turn", "multi_turn:instance_state_mismatch": "state",
           "multi_turn:execution_response_mismatch": "response"}


@dataclass(frozen=True)
class BfclChecks:
    """The outcome of BFCL's checker on one episode, and which check failed."""

    outcome: float
    failed_check: str | None
    failed_turn: int | None
    bfcl_error_type: str | None
    error_message: str | None
    answered_turns: int
    state_differences: tuple[str, ...] = field(default=())

    @property
    def total(self) -> float:
        """The reward: the binary outcome (no intermediate rewards)."""
        return self.outcome

    def as_dict(self) -> dict[str, Any]:
        """The checks as ``info["reward_parts"]``."""
        parts = asdict(self)
        parts["state_differences"] = list(self.state_differences)
        return parts


@functools.lru_cache(maxsize=4096)
def _ground_truth(task_id: str, ground_truth: str) -> tuple[tuple[Call, ...], ...]:
    return tuple(tuple(parse_call(text) for text in turn) for turn in json.loads(ground_truth))


def ground_truth_calls(task: TaskRecord) -> tuple[tuple[Call, ...], ...]:
    """The task's ground truth, per turn, as ``(name, arguments)`` (positional arguments as ``"#i"``)."""
    return _ground_truth(task.task_id, json.dumps(task.extra["ground_truth"]))


def safe_executor(seed: int | None) -> Any:
    """An executor with the signature of BFCL's ``execute_multi_turn_func_call`` that takes
    :data:`Call` tuples instead of strings and never evaluates text."""
    worlds: dict[tuple[str, str], BfclWorld] = {}
    turns = [0]  # ground-truth executions so far: the checker runs the ground truth once per turn

    def execute(func_call_list: Sequence[Call], initial_config: Mapping[str, Any], involved_classes: Sequence[str],
                model_name: str, test_entry_id: str, long_context: bool = False,
                is_evaL_run: bool = False) -> tuple[list[str], dict[str, Any]]:
        key = (model_name + ("_eval" if is_evaL_run else ""), test_entry_id)
        if model_name.endswith("_ground_truth"):
            turns[0] += 1
        if key not in worlds:
            worlds[key] = BfclWorld(test_entry_id, initial_config, involved_classes, long_context, seed)
        world = worlds[key]
        results = []
        for name, arguments in func_call_list:
            if name not in world.method_class:  # what eval() says of a name no involved class defines
                results.append(f"Error during execution: name '{name}' is not defined")
                continue
            results.append(world.call(name, copy.deepcopy(world.named(name, arguments))))
        return results, dict(world.instances)

    execute.turns = turns
    return execute


@functools.lru_cache(maxsize=None)
def _checker_module() -> Any:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker

    return multi_turn_checker


def _checker(seed: int | None) -> tuple[Any, Any]:
    """BFCL's ``multi_turn_checker`` over a copy of its globals whose executor is :func:`safe_executor`, and that executor."""
    module = _checker_module()
    executor = safe_executor(seed)
    namespace = dict(vars(module), execute_multi_turn_func_call=executor)
    original = module.multi_turn_checker
    return types.FunctionType(original.__code__, namespace, original.__name__, original.__defaults__), executor


def score_bfcl_episode(task: TaskRecord, turn_calls: Sequence[Sequence[Sequence[Call]]], answered_turns: int,
                       seed: int | None) -> BfclChecks:
    """BFCL's verdict on an episode: ``turn_calls[turn][step]`` are the calls each step ran (steps
    without calls left out, as BFCL's decoder leaves out empty steps); ``answered_turns`` how many
    user turns the agent finished."""
    extra = task.extra
    turns = len(extra["turns"])
    if answered_turns < turns:
        return BfclChecks(0.0, "turns", answered_turns, "multi_turn:force_terminated",
                          f"the episode ended after {answered_turns} of {turns} user turns", answered_turns)
    entry = {"id": task.task_id, "initial_config": extra["initial_config"], "involved_classes": extra["involved_classes"]}
    model = [[list(step) for step in turn] for turn in turn_calls]
    checker, executor = _checker(seed)
    try:
        verdict = checker(model, [list(turn) for turn in ground_truth_calls(task)], entry, extra["category"], "stillweb")
    except AssertionError as error:  # the checker's own assertion: model and ground-truth instances differ in number
        return BfclChecks(0.0, "instance_count", executor.turns[0] - 1, "multi_turn:instance_count_mismatch", str(error)[:500], answered_turns)
    if verdict["valid"]:
        return BfclChecks(1.0, None, None, None, None, answered_turns)
    error_type = verdict.get("error_type")
    message = str(verdict.get("error_message", ""))
    differences = tuple(sorted((verdict.get("details") or {}).get("differences", {})))
    return BfclChecks(0.0, _CHECKS.get(error_type, "other"), executor.turns[0] - 1, error_type, message[:500],
                      answered_turns, differences)

