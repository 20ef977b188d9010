"""No import cycle between the packages of ``diagnosis_server``.

Every module's imports (at any depth, under ``TYPE_CHECKING`` too) are read from its syntax tree and mapped to
the subpackage they name (``gatekeeper``, ``verification``, ...; a top-level module such as ``conversions`` is
a node of its own). The graph of those nodes must have no cycle: the pure parts stack, and a package never
reaches back up through another.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import diagnosis_server

PACKAGE = "diagnosis_server"
ROOT = Path(diagnosis_server.__file__).parent

Edges = dict[str, dict[str, list[str]]]


def _module_name(path: Path) -> str:
    parts = (PACKAGE, *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _node(module: str) -> str | None:
    """The graph node a dotted module name belongs to; None outside the package."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) == 1:
        return PACKAGE
    return parts[1] if (ROOT / parts[1]).is_dir() or (ROOT / f"{parts[1]}.py").is_file() else PACKAGE


def _imported(tree: ast.AST, module: str, is_package: bool) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.append((target, node.lineno))
            found.extend((f"{target}.{alias.name}", node.lineno) for alias in node.names)
    return found


def package_edges() -> Edges:
    """node -> node it imports -> where (``path:line``), for every import crossing two nodes."""
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        source = _node(module)
        assert source is not None
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for target, line in _imported(tree, module, path.name == "__init__.py"):
            node = _node(target)
            if node is not None and node != source:
                edges[source][node].append(f"{path.relative_to(ROOT)}:{line}")
    return edges


def cycles(edges: Edges) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_walk_sees_the_packages_and_their_imports() -> None:
    edges = package_edges()
    assert "gatekeeper" in edges["verification"]  # verification reads Gatekeeper results
    assert "protocols" in edges["gatekeeper"]
    assert "evidence_check" in edges["api"] and "evidence_check" in edges["cli"]


def test_cycles_finds_a_cycle_through_three_packages() -> None:
    edges: Edges = {"a": {"b": []}, "b": {"c": []}, "c": {"a": [], "d": []}, "d": {}}
    assert cycles(edges) == [["a", "b", "c"]]


def test_no_import_cycle_between_packages() -> None:
    edges = package_edges()
    described = [
        "; ".join(f"{a} -> {b} ({', '.join(edges[a][b][:3])})" for a in component for b in component if b in edges[a])
        for component in cycles(edges)
    ]
    assert described == []
