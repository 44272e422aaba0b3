"""BFCL's simulated APIs for one episode, called without ``eval``.

BFCL's own executor (``multi_turn_utils.execute_multi_turn_func_call``) turns each call into a
string and ``eval``s it. Here a call reaches BFCL's code only as a whitelisted method name (a
public method of an involved API class that the episode offers) and the literal arguments of
its parsed JSON, run as ``getattr(instance, name)(**arguments)``: no policy text is ever
evaluated. Results are turned into text exactly as BFCL's executor does (a str as is, a dict
as JSON, anything else ``str()``; an exception as ``"Error during execution: ..."``), so the
checker sees the same responses it would see under BFCL's own harness.

Ground-truth call strings (BFCL's ``possible_answer`` files, not policy text) are read with
:func:`parse_call` (``ast``, literals only), positional arguments named by the method's signature.

>>> parse_call("mv(source='a.txt', destination='tmp')")
('mv', {'source': 'a.txt', 'destination': 'tmp'})
"""

from __future__ import annotations

import ast
import contextlib
import copy
import decimal
import importlib
import inspect
import json
import pickle
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from stillweb.corpora.errors import DataError
from stillweb.corpora.keyed import KeyedRng
from stillweb.envs.bfcl.data import API_CLASSES
from stillweb.envs.bfcl.state import jsonable

__all__ = ["BfclWorld", "parse_call", "result_text", "api_module", "method_names", "named_arguments", "guard_arguments", "MAX_INT"]

# BFCL's func_source_code package (constants/executable_backend_config.py BACKEND_PATH_PREFIX).
_BACKEND = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
# BFCL's STATELESS_CLASSES: created without a scenario.
_STATELESS = ("MathAPI",)
# Integers a policy may pass (|n| <= 10**15): MathAPI.power(10, 10**9) or a precision of 10**9
# (mpmath, decimal) would run for minutes; no BFCL task needs more.
MAX_INT = 10**15
# Arguments that size work: logarithm's and square_root's precision (mpmath dps, decimal prec) and
# power's exponent, capped where each stays in milliseconds.
_CAPPED = {("logarithm", "precision"): 1000, ("square_root", "precision"): 1000, ("power", "exponent"): 1000}


def api_module(class_name: str) -> Any:
    """BFCL's module of an API class (imported on first use)."""
    return importlib.import_module(f"{_BACKEND}.{API_CLASSES[class_name]}")


def method_names(class_name: str) -> tuple[str, ...]:
    """The public methods of an API class (what BFCL's executor maps call names to), sorted."""
    cls = getattr(api_module(class_name), class_name)
    return tuple(sorted(name for name, member in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")))


def parse_call(text: str) -> tuple[str, dict[str, Any]]:
    """``(name, arguments)`` of one BFCL call string such as ``"cd(folder='docs')"``; positional
    arguments come back under ``"#0"``, ``"#1"`` (named by :meth:`BfclWorld.named`). Literals only."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise DataError(f"not a BFCL function call: {text!r}")
    arguments = {f"#{index}": ast.literal_eval(value) for index, value in enumerate(node.args)}
    arguments.update((keyword.arg, ast.literal_eval(keyword.value)) for keyword in node.keywords)
    return node.func.id, arguments


def result_text(value: Any) -> str:
    """A method's return value as BFCL's executor writes it for the model and the checker."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except Exception:
            return str(value)
    return str(value)


def guard_arguments(name: str, arguments: Mapping[str, Any]) -> str | None:
    """Why these arguments are refused before they run (``None``: they may run): an integer over
    :data:`MAX_INT` anywhere, or a work-sizing argument over its cap."""
    for key, value in arguments.items():
        cap = _CAPPED.get((name, key))
        if cap is not None and isinstance(value, (int, float)) and abs(value) > cap:
            return f"{key}={value!r} is over this environment's cap of {cap} for {name}"
        if _has_huge_int(value):
            return f"{key} holds an integer over {MAX_INT} (this environment's cap)"
    return None


def _has_huge_int(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_INT:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


@contextlib.contextmanager
def _process_precision() -> Iterator[None]:
    """Keep a call's changes to process-wide precision inside it: MathAPI's ``square_root`` sets the
    thread's ``decimal`` precision and ``logarithm`` mpmath's ``mp.dps``, which would otherwise carry
    into later episodes (and any other ``decimal`` user) in the same process."""
    mpmath = sys.modules.get("mpmath")
    dps = mpmath.mp.dps if mpmath is not None else None
    try:
        with decimal.localcontext():
            yield
    finally:
        if mpmath is not None:
            mpmath.mp.dps = dps


def named_arguments(class_name: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` of :func:`parse_call` with positional ``"#i"`` keys named by the method's signature."""
    if not any(key.startswith("#") for key in arguments):
        return dict(arguments)
    method = getattr(getattr(api_module(class_name), class_name), name)
    parameters = [p for p in inspect.signature(method).parameters if p != "self"]
    return {(parameters[int(key[1:])] if key.startswith("#") else key): value for key, value in arguments.items()}


class BfclWorld:
    """Fresh instances of a task's API classes, loaded from its initial configuration.

    ``seed`` keys the APIs' own random streams (BFCL seeds ``random.Random`` per class from the
    scenario's ``random_seed``: trading-bot timestamps, message, booking and card ids, vehicle
    readings): each class gets ``KeyedRng(seed, "bfcl", task_id, class).integer(...)`` unless the
    configuration sets one or ``seed`` is ``None`` (BFCL's own defaults).
    """

    def __init__(self, task_id: str, initial_config: Mapping[str, Any], involved_classes: Iterable[str],
                 long_context: bool, seed: int | None) -> None:
        self.instances: dict[str, Any] = {}
        self.method_class: dict[str, str] = {}
        for class_name in involved_classes:
            instance = getattr(api_module(class_name), class_name)()
            if class_name not in _STATELESS:
                config = copy.deepcopy(dict(initial_config.get(class_name, {})))
                if seed is not None and "random_seed" not in config:
                    config["random_seed"] = KeyedRng(int(seed), "bfcl", task_id, class_name).integer(0, 2**31 - 1)
                instance._load_scenario(config, long_context=long_context)
            self.instances[class_name] = instance
            for method in method_names(class_name):  # a later class wins a shared name, as in BFCL's mapping
                self.method_class[method] = class_name

    def named(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` with positional ``"#i"`` keys named by the method's signature."""
        return named_arguments(self.method_class[name], name, arguments)

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one whitelisted call (``name`` must be in :attr:`method_class`); its result text. The method
        may change ``arguments`` (as BFCL's executor, which makes fresh ones per call): pass a copy to keep them."""
        method = getattr(self.instances[self.method_class[name]], name)
        with _process_precision():
            try:
                return result_text(method(**arguments))
            except Exception as error:  # BFCL's executor: any failure is the call's result
                return f"Error during execution: {error}"

    def state_bytes(self, class_name: str) -> bytes | None:
        """A cheap check of one instance's public attributes: equal bytes, equal state (``None`` when they do
        not pickle; unequal bytes may still be an equal state: compare :meth:`state` then)."""
        public = {key: value for key, value in vars(self.instances[class_name]).items() if not key.startswith("_")}
        try:
            return pickle.dumps(public, protocol=5)
        except Exception:  # an attribute that does not pickle: no shortcut
            return None

    def state(self, classes: Iterable[str] | None = None) -> dict[str, Any]:
        """The public attributes of every instance (or of ``classes``), what BFCL's state checker
        compares, as JSON values (:func:`~stillweb.envs.bfcl.state.jsonable`)."""
        names = sorted(self.instances if classes is None else classes)
        return {name: jsonable(self.instances[name]) for name in names}

