"""Fixtures every suite may use. What suites share beyond fixtures is in ``tests.support``.

The tests are one package tree (``tests.<suite>.<module>``): a module imports a neighbour relatively and shared
code as ``tests.support.<module>``, never through ``sys.path``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import structlog

from diagnosis_server.api.logging import configure_logging
from diagnosis_server.store import Repository, open_repository
from tests.support.settings import sqlite_url


@pytest.fixture
async def repository(tmp_path: Path) -> AsyncIterator[Repository]:
    """A migrated SQLite store of the test's own."""
    repo = await open_repository(sqlite_url(tmp_path / "store.db"))
    try:
        yield repo
    finally:
        await repo.close()


@pytest.fixture(autouse=True)
def _suite_logging() -> Iterator[None]:
    """Each test starts with the suite's logging: a CLI command run in-process (``eval``, ``tools``) configures
    the service's at ``warning``, which would hide the info lines a later test of the same worker reads."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def pytest_configure(config: pytest.Config) -> None:
    """The service's own log format (JSON lines on stderr), not structlog's console default: that one renders a
    logged traceback with rich, which costs a test that crashes a node on purpose a second or more. Every level
    is kept, as the default does: tests read info lines (``structlog.testing.capture_logs``)."""
    configure_logging("debug")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--requirement",
        action="append",
        default=[],
        metavar="ID",
        help="run only the tests marked with this requirement id (e.g. R-GK-3); may be repeated",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--requirement R-GK-3``: keeps the tests whose ``requirement`` marks name that id."""
    wanted = {value.upper() for value in config.getoption("requirement")}
    if not wanted:
        return
    selected: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    for item in items:
        ids = {str(arg).upper() for mark in item.iter_markers("requirement") for arg in mark.args}
        (selected if ids & wanted else deselected).append(item)
    config.hook.pytest_deselected(items=deselected)
    items[:] = selected
