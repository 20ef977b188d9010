"""The mutation run's test order: the tests that killed a function's other mutants first, then its own module's."""

from __future__ import annotations

import json
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.mutation import order_plugin

FUNCTION = "diagnosis_server.composition.material.x_allowed_material"


@dataclass
class _Item:
    nodeid: str


@dataclass
class _Report:
    nodeid: str
    failed: bool


@pytest.fixture
def staged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The plugin as a forked child runs it: in the staging tree's folder, with a mutant under test."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{FUNCTION}__mutmut_7")
    monkeypatch.setattr(order_plugin, "_durations", {})
    durations = {"tests/composition/test_material.py::slow": 2.0, "tests/composition/test_material.py::fast": 0.1}
    Path("mutmut-stats.json").write_text(json.dumps({"duration_by_test": durations}), encoding="utf-8")
    return order_plugin


def _order(plugin: types.ModuleType, nodeids: list[str]) -> list[str]:
    items = [_Item(n) for n in nodeids]
    plugin.pytest_collection_modifyitems(items)
    return [item.nodeid for item in items]


NODEIDS = [
    "tests/graph/test_engine.py::other_package",
    "tests/composition/test_render.py::same_package",
    "tests/composition/test_material.py::slow",
    "tests/composition/test_material.py::fast",
]


def test_without_kills_own_module_first_then_package_then_others_fastest_first(staged: types.ModuleType) -> None:
    assert _order(staged, NODEIDS) == [
        "tests/composition/test_material.py::fast",
        "tests/composition/test_material.py::slow",
        "tests/composition/test_render.py::same_package",
        "tests/graph/test_engine.py::other_package",
    ]


def test_a_test_that_killed_this_functions_mutants_runs_first_most_kills_first(staged: types.ModuleType) -> None:
    for nodeid in [
        "tests/graph/test_engine.py::other_package",
        *["tests/composition/test_render.py::same_package"] * 2,
    ]:
        staged.pytest_runtest_logreport(_Report(nodeid, failed=True))
    staged.pytest_runtest_logreport(_Report("tests/composition/test_material.py::slow", failed=False))
    assert _order(staged, NODEIDS) == [
        "tests/composition/test_render.py::same_package",
        "tests/graph/test_engine.py::other_package",
        "tests/composition/test_material.py::fast",
        "tests/composition/test_material.py::slow",
    ]


def test_kills_of_another_function_do_not_reorder(staged: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUTANT_UNDER_TEST", "diagnosis_server.composition.material.x_mentions__mutmut_2")
    staged.pytest_runtest_logreport(_Report("tests/graph/test_engine.py::other_package", failed=True))
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{FUNCTION}__mutmut_8")
    assert _order(staged, NODEIDS)[0] == "tests/composition/test_material.py::fast"
    assert Path("mutmut-killers.tsv").read_text(encoding="utf-8") == (
        "diagnosis_server.composition.material.x_mentions\ttests/graph/test_engine.py::other_package\n"
    )


def test_no_mutant_records_no_kill(staged: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stats run and mutmut's own check ("fail") run with no mutant of a function under test."""
    for name in ("", "fail"):
        monkeypatch.setenv("MUTANT_UNDER_TEST", name)
        staged.pytest_runtest_logreport(_Report("tests/graph/test_engine.py::other_package", failed=True))
    assert not Path("mutmut-killers.tsv").exists()


def test_a_mutants_child_starts_with_empty_result_caches(
    staged: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked child inherits what the stats run cached: a mutant of ``_normalize`` would never run for a text
    ``normalize`` remembered. Bounded caches are emptied; an unbounded table only in the mutant's own module."""
    from diagnosis_server.text import language, normalize

    normalize.normalize("Check Out")
    language.vocabulary()
    assert normalize._remembered.cache_info().currsize and language.vocabulary.cache_info().currsize
    monkeypatch.setenv("MUTANT_UNDER_TEST", "diagnosis_server.text.normalize.x__normalize__mutmut_16")
    staged.pytest_configure(None)
    assert normalize._remembered.cache_info().currsize == 0
    assert language.vocabulary.cache_info().currsize == 1  # another module's table stays
    language.vocabulary()
    monkeypatch.setenv("MUTANT_UNDER_TEST", "diagnosis_server.text.language.x_stem__mutmut_3")
    staged.pytest_configure(None)
    assert language.vocabulary.cache_info().currsize == 0


def test_the_stats_run_starts_every_test_with_empty_result_caches(
    staged: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """So that each test that reaches a cached function is recorded as reaching it (mutmut runs only those)."""
    from diagnosis_server.text import normalize

    normalize.normalize("Check Out")
    monkeypatch.setenv("MUTANT_UNDER_TEST", "stats")
    staged.pytest_runtest_setup(None)
    assert normalize._remembered.cache_info().currsize == 0
    normalize.normalize("Check Out")
    monkeypatch.setenv("MUTANT_UNDER_TEST", f"{FUNCTION}__mutmut_7")
    staged.pytest_runtest_setup(None)
    assert normalize._remembered.cache_info().currsize == 1
