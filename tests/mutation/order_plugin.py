"""The mutation run's pytest plugin (``-p tests.mutation.order_plugin``, in the staging tree's copy of the tests).

A mutant's tests run in the order most likely to kill it soonest: first the tests that killed other mutants of the
same function in this run (most kills first: the mutants of one function are mostly caught by the same few tests),
then the tests of its own module (``tests/composition/test_material*.py`` for ``composition/material.py``), then
the rest of its package's tests, then the others; fastest first within each (the durations mutmut measured in its
stats run). A killed mutant costs the tests run until the first failure, so this order is most of its cost. Kills
are appended to ``mutmut-killers.tsv`` (a line each, by the forked children; short appends do not interleave).

A forked child inherits the caches that the stats run filled with the unmutated code's results: they are emptied
(below) so that no mutant hides behind one.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

_durations: dict[str, float] = {}
_KILLERS = Path("mutmut-killers.tsv")
_CACHED = type(functools.lru_cache(maxsize=None)(lambda: None))


def _function() -> str:
    return os.environ.get("MUTANT_UNDER_TEST", "").rpartition("__mutmut_")[0]


def _kills(function: str) -> Counter[str]:
    if not function or not _KILLERS.exists():
        return Counter()
    prefix = function + "\t"
    return Counter(line[len(prefix) :] for line in _KILLERS.read_text("utf-8").splitlines() if line.startswith(prefix))


def _rank(nodeid: str, package: str, module: str) -> int:
    path = nodeid.split("::")[0]
    if path.startswith(f"tests/{package}/"):
        return 0 if Path(path).name.startswith(f"test_{module}") else 1
    return 2


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if not _durations and Path("mutmut-stats.json").exists():  # none before the stats run has written them
        _durations.update(json.loads(Path("mutmut-stats.json").read_text())["duration_by_test"])
    # diagnosis_server.<package>.<module>.x_<function>__mutmut_<n>
    parts = os.environ.get("MUTANT_UNDER_TEST", "").split(".")
    package, module = (parts[1], parts[2]) if len(parts) > 3 else ("", "")
    kills = _kills(_function())
    items.sort(
        key=lambda item: (-kills[item.nodeid], _rank(item.nodeid, package, module), _durations.get(item.nodeid, 0.0))
    )


def _clear_caches(own: str) -> None:
    """Empties the package's memoized results (its bounded caches) and every cache of module ``own``."""
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("diagnosis_server."):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, _CACHED) and (module_name == own or value.cache_parameters()["maxsize"] is not None):
                value.cache_clear()


def pytest_configure(config: pytest.Config) -> None:
    """A forked child inherits the caches that the stats run filled with the unmutated code's results, and a
    mutant behind a cache would never run: they start empty, and the mutant's own module's tables too."""
    name = os.environ.get("MUTANT_UNDER_TEST", "")
    if "__mutmut_" in name:
        _clear_caches(own=name.rpartition(".")[0])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """In the stats run (which records the tests that reach each function), every test starts with empty
    caches: a function whose result an earlier test left cached would not be recorded as reached by this one,
    and no mutant of it would be checked against this test."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        _clear_caches(own="")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    function = _function()
    if report.failed and function:
        with _KILLERS.open("a", encoding="utf-8") as out:
            out.write(f"{function}\t{report.nodeid}\n")
