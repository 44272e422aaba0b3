"""The package's import graph, read from the source (no module is imported).

:func:`import_graph` maps every module of the five layers (``stillweb.corpora`` ...
``stillweb.cli``) to the stillweb modules it imports, at any depth of the file
(module level, inside functions, inside ``try``), except under
``if TYPE_CHECKING:`` (names for annotations only, never run).
``from package import name`` points at ``package.name`` when that is a module,
else at the package itself. Importing a module also runs the ``__init__`` of every
package above it, so those packages are targets too, except the importer's own
ancestors (Python runs them before the importer itself): a package ``__init__`` that
imports a module which imports that package back is a cycle the graph shows.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS = ("corpora", "sandboxes", "envs", "server", "cli")  # lower first: a layer imports only its own and lower ones


def module_files() -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the layers (packages as their ``__init__``)."""
    modules = {}
    for layer in LAYERS:
        for path in sorted((REPO / layer).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(("stillweb", *parts))] = path
    return modules


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST, package: str, modules: dict[str, Path] | set[str]) -> list[str]:
    """Absolute names this tree imports (``from x import y``: ``x.y`` when that is one of ``modules``, else ``x``)."""
    found: list[str] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if _type_checking_only(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the importing package
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found.extend(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names)
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Module -> the stillweb modules it imports (see the module docstring); ``modules``: name -> file
    (default: the package's, :func:`module_files`)."""
    modules = module_files() if modules is None else modules
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        ancestors = {".".join(name.split(".")[:depth]) for depth in range(2, name.count(".") + 1)}
        if path.name == "__init__.py":
            ancestors.add(name)
        named = {imported for imported in _imports(ast.parse(path.read_text(encoding="utf-8")), package, modules)
                 if imported in modules}
        above = {".".join(imported.split(".")[:depth]) for imported in named for depth in range(2, imported.count(".") + 1)}
        graph[name] = (named | {package for package in above if package in modules and package not in ancestors}) - {name}
    return graph


def module_level_libraries(modules: dict[str, Path] | None = None) -> list[str]:
    """The modules outside stillweb that the package's modules (``modules``: name -> file, default
    :func:`module_files`) import as they are imported: at module level, in class bodies and ``try`` blocks, not
    inside functions nor under ``if TYPE_CHECKING:``; sorted."""
    found: set[str] = set()
    for path in (module_files() if modules is None else modules).values():
        stack = list(ast.parse(path.read_text(encoding="utf-8")).body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or _type_checking_only(node):
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module)
            stack.extend(ast.iter_child_nodes(node))
    return sorted(name for name in found if name.split(".")[0] not in ("stillweb", "__future__"))


def layer_of(module: str) -> int:
    """0 for stillweb.corpora ... 4 for stillweb.cli."""
    return LAYERS.index(module.split(".")[1])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
