"""Requirement ids are named by ``@pytest.mark.requirement(...)`` (never in a test's name), and every id a test
names is a row of ``tests/requirements_audit.md``."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ID = re.compile(r"^R-(A|C|GK|P|R|S|T|V|VI)-\d+$")
ID_IN_NAME = re.compile(r"(^|_)r_(a|c|gk|p|r|s|t|v|vi)_\d+(_|$)")


def _audit_ids() -> set[str]:
    rows = (TESTS / "requirements_audit.md").read_text(encoding="utf-8").splitlines()
    return {cells[1].strip() for line in rows if len(cells := line.split("|")) > 2 and ID.match(cells[1].strip())}


def _tests() -> Iterator[tuple[Path, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
                yield path, node


def _marked_ids(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [
        arg.value
        for decorator in node.decorator_list
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.requirement"
        for arg in decorator.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]


def test_no_test_name_carries_a_requirement_id() -> None:
    named = [f"{path.relative_to(TESTS)}::{node.name}" for path, node in _tests() if ID_IN_NAME.search(node.name)]
    assert not named, f"name the ids with @pytest.mark.requirement, not in the name: {named}"


def test_every_marked_id_is_a_row_of_the_audit() -> None:
    audit = _audit_ids()
    assert len(audit) >= 50, sorted(audit)
    marked = {rid for _, node in _tests() for rid in _marked_ids(node)}
    assert marked, "no test is marked with a requirement id"
    assert all(ID.match(rid) for rid in marked), sorted(rid for rid in marked if not ID.match(rid))
    assert marked <= audit, sorted(marked - audit)
