"""The package's shape: no import loops between its modules, modules of one job and a bounded size.

The import graph is read from the source, not from ``sys.modules``: every ``import`` and
``from ... import`` counts, at module level or inside a function (a lazy import is still a
dependency), except those under ``if TYPE_CHECKING:``. ``from pkg import name`` is an edge to
``pkg.name`` when that is a module, else to ``pkg``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "ground_integrations"

#: About 600 lines: past that a module usually does two jobs.
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                hidden.update(id(n) for n in ast.walk(child))
    return hidden


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The package's modules that module ``name`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    yield sub
                elif target in modules:
                    yield target


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (itself excluded)."""
    modules = _modules()
    return {
        name: {t for t in _imports(name, path, modules) if t != name}
        for name, path in modules.items()
    }


def loops(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _describe(component: frozenset[str], graph: dict[str, set[str]]) -> str:
    edges = [f"{a} -> {b}" for a in sorted(component) for b in sorted(graph[a]) if b in component]
    return "{" + ", ".join(sorted(component)) + "}: " + "; ".join(edges)


def test_the_graph_sees_lazy_imports_and_ignores_type_checking_ones() -> None:
    graph = import_graph()
    # a function-level import: the checker's compatibility forwarder to the citation check
    assert "ground_integrations.citations" in graph["ground_integrations.checker"]
    # `from . import telemetry` is an edge to the submodule
    assert "ground_integrations.telemetry" in graph["ground_integrations.checker"]
    # policies.Decision is imported by telemetry for type hints only
    assert "ground_integrations.policies" not in graph["ground_integrations.telemetry"]


def test_loops_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert loops(graph) == [frozenset({"a", "b", "c"})]


def test_no_import_loops_between_the_package_modules() -> None:
    graph = import_graph()
    found = loops(graph)
    assert not found, "import loops:\n" + "\n".join(_describe(c, graph) for c in found)


def test_the_core_never_imports_an_adapter_or_the_service() -> None:
    graph = import_graph()
    hosts = ("ground_integrations.langchain", "ground_integrations.llama_index")
    outer = (*hosts, "ground_integrations.server", "ground_integrations.batch")
    for module, targets in graph.items():
        if module.startswith(outer):
            continue
        # the `ground` command starts the service and batch runs; it never needs a host
        command = module == "ground_integrations.cli" or module.startswith(
            "ground_integrations._cli"
        )
        allowed = hosts if command else outer
        bad = sorted(t for t in targets if t.startswith(allowed))
        assert not bad, f"{module} imports {bad}"
    for module, targets in graph.items():
        for a, b in (hosts, hosts[::-1]):
            if module.startswith(a):
                assert not any(t.startswith(b) for t in targets), f"{module} imports {b}"


def test_every_module_says_its_job_first() -> None:
    missing = [
        str(path.relative_to(PACKAGE))
        for path in _modules().values()
        if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not missing, f"modules without an opening docstring: {missing}"


def test_modules_stay_under_the_size_limit() -> None:
    large = {
        str(path.relative_to(PACKAGE)): n
        for path in _modules().values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not large, f"modules over {MAX_LINES} lines (split them by job): {large}"


def private_imports() -> list[str]:
    """``module: name`` for each private name (``_x``, not a module) a module imports from
    another of the package's modules: a name another module needs is that module's public one."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ground_integrations"):
                continue
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and f"{target}.{alias.name}" not in modules:
                    found.append(f"{name}: {target}.{alias.name}")
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    found = private_imports()
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_private_imports_are_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "ground_integrations"
    package.mkdir()
    (package / "__init__.py").write_text('"""Package."""\nfrom . import _impl\n')
    (package / "_impl.py").write_text('"""Impl."""\n_SECRET = 1\nPUBLIC = 2\n')
    (package / "user.py").write_text('"""User."""\nfrom ._impl import PUBLIC, _SECRET\n')
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert private_imports() == ["ground_integrations.user: ground_integrations._impl._SECRET"]
