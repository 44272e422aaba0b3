"""Each meaning once (issue 32): no two modules define a module-level constant of the same name with
different values; the same value under the same name is allowed only where it is one shared meaning."""

from __future__ import annotations

import ast
from collections import defaultdict

from support.import_graph import module_files

# Per-module conventions, like a docstring: every CLI module has its own help examples, every call
# format its own example call, answer and abstention, every generic module its own TypeVar.
PER_MODULE = {"EXAMPLES", "EPILOG", "EXAMPLE_CALL", "EXAMPLE_ANSWER", "EXAMPLE_ABSTAIN", "T", "DESCRIPTION"}


def _constants():
    found = defaultdict(dict)
    for module, path in sorted(module_files().items()):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for target in targets:
                if isinstance(target, ast.Name) and target.id.lstrip("_").isupper() and node.value is not None:
                    found[target.id][module] = ast.unparse(node.value)
    return found


def test_no_constant_name_has_two_values():
    clashes = {name: values for name, values in _constants().items()
               if name not in PER_MODULE and len(set(values.values())) > 1}
    assert not clashes, f"one name, several values (rename one, or import the other): {clashes}"
