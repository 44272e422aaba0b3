"""The import structure: no cycles, no upward layer imports, and every module importable alone.

Layers, lower first: corpora < sandboxes < envs < server < cli (ARCHITECTURE.md);
a module imports only its own layer and lower ones. A cycle is cut by moving code
to where it belongs, so the graph counts imports at any depth of a file, inside
functions too (:mod:`support.import_graph`); only ``if TYPE_CHECKING:`` blocks
(annotations, never run) are left out.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from support.import_graph import LAYERS, cycles, import_graph, layer_of, module_files, module_level_libraries

# The libraries the package imports at module level (numpy, pyarrow, numba, gymnasium, fastapi, the extras'
# integrations: verl's tools bring torch and transformers...; support.import_graph.module_level_libraries) are loaded
# once by the driver before it forks a child per module: each child then imports one stillweb module into an
# interpreter holding no stillweb module, without paying their start-up again (numba alone: ~0.25 CPU s in each of
# ~300 children; the trainer integrations paid 4.5-5.5 s each). A missing one (an extra not installed) is skipped.

_DRIVER = r"""
import importlib, os, sys
for name in sys.argv[2].split(","):
    try:
        importlib.import_module(name)
    except ImportError:
        pass
assert not [m for m in sys.modules if m.startswith("stillweb")]
failures = []
for module in sys.argv[1].split(","):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        message = b""
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:  # an optional extra that is not installed: fine
            if (error.name or "").startswith("stillweb"):
                message = repr(error).encode()
        except BaseException as error:
            message = f"{type(error).__name__}: {error}".encode()
        os.write(write, message[:2000])
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read()
    os.waitpid(pid, 0)
    if message:
        failures.append(f"{module}: {message.decode(errors='replace')}")
print("\n".join(failures))
"""


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The import graph, read once for the tests of this module (~1 s a read)."""
    return import_graph()


def test_no_import_cycles(graph):
    assert cycles(graph) == []


def test_no_layer_imports_a_higher_layer(graph):
    upward = sorted(f"{module} -> {target}" for module, targets in graph.items() for target in targets
                    if layer_of(target) > layer_of(module))
    assert upward == [], f"layers are {' < '.join(LAYERS)}"


def test_the_graph_sees_what_it_must(graph):
    """The reader finds module-level, function-level and `from package import module` edges."""
    assert "stillweb.corpora.snapshot.reading" in graph["stillweb.corpora.snapshot.shared"]  # module level
    assert "stillweb.corpora.snapshot.shared" in graph["stillweb.corpora.tasks.task_world"]  # function level
    assert "stillweb.corpora.tasks.compose.on_ray" in graph["stillweb.corpora.tasks.compose.generate"]
    assert "stillweb.corpora.synthetic.names" in graph["stillweb.corpora.synthetic.world"]  # from pkg import module
    assert "stillweb.corpora.synthetic" not in graph["stillweb.corpora.synthetic.world"]


def _graph_of(tmp_path, sources: dict[str, str]) -> dict[str, set[str]]:
    files = {}
    for name, source in sources.items():
        safe = name.rstrip("/").replace(".", "_")
        path = tmp_path / safe / "__init__.py" if name.endswith("/") else tmp_path / f"{safe}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        files[name.rstrip("/")] = path
    return import_graph(files)


def test_a_cycle_through_a_package_init_or_a_function_level_import_is_seen(tmp_path):
    # how envs/runs/recording.py registered the environments: `import stillweb.envs` in a function
    graph = _graph_of(tmp_path, {"stillweb.envs/": "from stillweb.envs.runs.recording import replay\n",
                                 "stillweb.envs.runs/": "",
                                 "stillweb.envs.runs.recording": "def replay():\n    import stillweb.envs\n"})
    assert cycles(graph) == [["stillweb.envs", "stillweb.envs.runs.recording"]]
    # importing a module runs its packages' __init__: a -> pkg.b runs pkg/__init__, which imports a
    graph = _graph_of(tmp_path, {"stillweb.corpora.a": "from stillweb.corpora.pkg.b import f\n",
                                 "stillweb.corpora.pkg/": "from stillweb.corpora import a\n",
                                 "stillweb.corpora.pkg.b": "def f(): pass\n"})
    assert cycles(graph) == [["stillweb.corpora.a", "stillweb.corpora.pkg"]]
    # a module's own packages have run before it: importing a sibling is no cycle
    graph = _graph_of(tmp_path, {"stillweb.corpora.pkg/": "from stillweb.corpora.pkg.b import f\n",
                                 "stillweb.corpora.pkg.b": "from stillweb.corpora.pkg.c import g\n",
                                 "stillweb.corpora.pkg.c": "def g(): pass\n"})
    assert cycles(graph) == []


def test_the_preloaded_libraries_are_the_module_level_imports(tmp_path):
    source = tmp_path / "a.py"
    source.write_text("import numpy, os.path\nfrom typing import TYPE_CHECKING\ntry:\n    import yaml\nexcept ImportError:\n"
                      "    yaml = None\nif TYPE_CHECKING:\n    import pandas\nfrom stillweb.corpora import errors\n"
                      "from . import sibling\nclass A:\n    import json\ndef f():\n    import torch\n")
    assert module_level_libraries({"stillweb.corpora.a": source}) == ["json", "numpy", "os.path", "typing", "yaml"]
    assert {"numpy", "pyarrow", "numba", "gymnasium"} <= set(module_level_libraries())


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.slow  # ~150 imports, torch/ray/transformers among them where the extras are installed
def test_every_module_imports_alone_in_a_fresh_process():
    modules = sorted(module_files())
    result = subprocess.run([sys.executable, "-c", _DRIVER, ",".join(modules), ",".join(module_level_libraries())],
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", result.stdout


def test_environments_register_without_importing_the_package_in_a_function():
    import ast

    offenders = []
    for name, path in sorted(module_files().items()):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                offenders += [f"{name}:{node.lineno}" for node in ast.walk(function) if isinstance(node, ast.Import)
                              and any(alias.name == "stillweb.envs" for alias in node.names)]
    assert offenders == [], f"import stillweb.envs.registration at the top instead: {offenders}"
