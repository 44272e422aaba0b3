"""One name, one place: a public class or function is defined in one module, no module gives a
class a second name (``Task = TaskRecord``), and the names below are exported by the module that
defines them and by no other (a package ``__init__`` may gather them)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict

from support.import_graph import module_files

# Per-module conventions, like a docstring: every CLI module registers its own subcommand and runs
# its own subcommands; every viewer page module has its own router; the sandbox's bootstrap and
# the CLI each have a main.
PER_MODULE = {"register", "router", "main", "run_export", "run_generate", "run_verify"}
# Different concepts sharing a name in unrelated subpackages (left as they were; not aliases).
KNOWN_HOMONYMS = {"entity_facts", "evaluate", "person_name"}
# Each must be exported (``__all__``) by exactly one module besides package ``__init__`` files.
EXPORTED_ONCE = ("TaskRecord", "EvidenceItem", "WikiQACounts", "EpisodeCounts", "AppCounts", "normalize_answer",
                 "qa_normalize", "answers_match", "match_score", "em_score", "best_f1", "check_positive_int",
                 "import_tasks", "check_tasks", "score_app_episode", "score_episode")


def _trees():
    return {module: ast.parse(path.read_text(encoding="utf-8")) for module, path in sorted(module_files().items())}


def _definitions(trees):
    found = defaultdict(list)
    for module, tree in trees.items():
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                found[node.name].append(module)
    return found


def _exports(tree) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [element.value for element in node.value.elts]
    return []


def test_each_public_class_and_function_is_defined_once():
    twice = {name: modules for name, modules in _definitions(_trees()).items()
             if len(modules) > 1 and name not in PER_MODULE | KNOWN_HOMONYMS}
    assert not twice, f"one name defined in several modules (rename one, or import it): {twice}"


def test_no_module_gives_a_class_a_second_name():
    trees = _trees()
    classes = {name for name, _ in _definitions(trees).items() if name[:1].isupper()}
    aliases = [f"{module}: {node.targets[0].id} = {node.value.id}" for module, tree in trees.items() for node in tree.body
               if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in classes
               and isinstance(node.targets[0], ast.Name)]
    assert not aliases, f"aliases of a class (use the class's own name): {aliases}"


def test_the_shared_names_are_exported_by_one_module():
    exporters, packages = defaultdict(list), {module for module, path in module_files().items() if path.name == "__init__.py"}
    for module, tree in _trees().items():
        if module not in packages:
            for name in _exports(tree):
                exporters[name].append(module)
    assert {name: exporters[name] for name in EXPORTED_ONCE if len(exporters[name]) != 1} == {}


def test_the_shared_names_table_links_each_name_to_the_module_that_defines_it():
    root = module_files()["stillweb.corpora"].parents[1]
    table = (root / "docs" / "interfaces.md").read_text(encoding="utf-8").split("## Shared names", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) >= 10
    for row in rows:
        names = re.findall(r"`(\w+)`", row.split("|")[1])
        sources = "\n".join((root / "docs" / link).resolve().read_text(encoding="utf-8")
                            for link in re.findall(r"\]\(([^)]+\.py)\)", row))
        for name in names:
            assert re.search(rf"^(class {name}\b|def {name}\b|{name}\s*[:=])", sources, re.M), f"{name} is not defined in {row}"


def test_a_module_exports_only_what_it_defines():
    """``__all__`` of a module (not a package ``__init__``) names its own definitions: a name imported from
    elsewhere is exported by the module that defines it, and imported from there."""
    packages = {module for module, path in module_files().items() if path.name == "__init__.py"}
    borrowed = {}
    for module, tree in _trees().items():
        if module in packages:
            continue
        own = {node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
        own |= {name.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                for name in ast.walk(target) if isinstance(name, ast.Name)}  # ``A, B = ...`` defines both
        if extra := sorted(set(_exports(tree)) - own):
            borrowed[module] = extra
    assert not borrowed, f"exported but defined elsewhere (export it from its own module): {borrowed}"
