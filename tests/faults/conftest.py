"""Fixtures of the fault tests: a PostgreSQL server the tests stop and start, settings without the shell's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.postgres import PostgresUnavailable, postgres_required
from tests.support.settings import clean_environment

from .postgres import RestartablePostgres


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch)


@pytest.fixture(scope="session")
def restartable_postgres() -> Iterator[RestartablePostgres]:
    try:
        pg = RestartablePostgres.create()
    except (PostgresUnavailable, OSError) as exc:
        if postgres_required():
            pytest.fail(f"PostgreSQL fault tests need a server: {exc}", pytrace=False)
        pytest.skip(f"PostgreSQL fault tests need a server: {exc}")
    try:
        yield pg
    finally:
        pg.destroy()


@pytest.fixture
def postgres(restartable_postgres: RestartablePostgres) -> RestartablePostgres:
    """The fault tests' PostgreSQL, running (a test that stopped it has it started again)."""
    if not restartable_postgres.running:
        restartable_postgres.start()
    return restartable_postgres
