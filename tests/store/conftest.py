"""Fixtures of the store tests: the same suite runs on SQLite (a file in tmp_path), PostgreSQL and, where the
test is backend-neutral (the ``repo`` and ``backend`` fixtures), on the in-memory store.

PostgreSQL comes from ``DIAGNOSIS_TEST_POSTGRES_URL`` (a throwaway database: the tests drop the
store's tables in it) or from a server this session starts itself: ``initdb`` and ``pg_ctl`` found on
PATH or in /usr/lib/postgresql/*/bin make a cluster in a temporary folder, listening on 127.0.0.1 on a
free port, stopped and removed at the end. As root, the server runs as the ``postgres`` user (or
``nobody``). When no server can be had, the PostgreSQL tests skip and say what was missing, or fail
when ``DIAGNOSIS_TEST_REQUIRE_POSTGRES=1`` (CI sets it, so a missing install step cannot hide).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.ext.asyncio import create_async_engine

from diagnosis_server.store import MemoryStore, RunStore, open_repository
from diagnosis_server.store.migrate import upgrade_connection

POSTGRES_URL_ENV = "DIAGNOSIS_TEST_POSTGRES_URL"
REQUIRE_POSTGRES_ENV = "DIAGNOSIS_TEST_REQUIRE_POSTGRES"
STORE_TABLES = (
    "store_probe",
    "node_step",
    "orchestration_event",
    "tool_invocation",
    "diagnosis_run",
    "alembic_version",
)
_START_TIMEOUT_S = 30


class PostgresUnavailable(Exception):
    """Why no PostgreSQL server could be started (the skip reason)."""


@dataclass(frozen=True, slots=True)
class _Runner:
    """Runs the server's programs as a non-root user when we are root."""

    uid: int | None
    gid: int | None

    def run(self, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            cwd=cwd,
            user=self.uid,
            group=self.gid,
            extra_groups=[] if self.uid is not None else None,
            capture_output=True,
            text=True,
            timeout=_START_TIMEOUT_S,
            check=False,
            env={**os.environ, "LC_ALL": "C", "LANG": "C"},
        )


def _find_bin_dir() -> Path:
    candidates: list[Path] = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(os.path.realpath(on_path)).parent)
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    raise PostgresUnavailable(
        f"no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin (install Debian's postgresql, "
        f"or set {POSTGRES_URL_ENV})"
    )


def _runner() -> _Runner:
    if os.geteuid() != 0:
        return _Runner(uid=None, gid=None)
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return _Runner(uid=entry.pw_uid, gid=entry.pw_gid)
    raise PostgresUnavailable("running as root and no 'postgres' or 'nobody' user to run the server as")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(slots=True)
class _Server:
    bin_dir: Path
    base: Path
    runner: _Runner
    port: int = 0

    @property
    def data(self) -> Path:
        return self.base / "data"

    def _check(self, argv: list[str], what: str) -> None:
        result = self.runner.run(argv, cwd=self.base)
        if result.returncode != 0:
            raise PostgresUnavailable(f"{what} failed ({result.returncode}): {(result.stderr or result.stdout)[-800:]}")

    def start(self) -> str:
        if self.runner.uid is not None:
            os.chown(self.base, self.runner.uid, self.runner.gid or -1)
        self._check(
            [str(self.bin_dir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
             "--no-sync", "--no-instructions"],
            "initdb",
        )  # fmt: skip
        self.port = _free_port()
        options = (
            f"-p {self.port} -h 127.0.0.1 -k {self.base} -F "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        self._check(
            [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.base / "server.log"), "-w",
             "-t", str(_START_TIMEOUT_S), "-o", options, "start"],
            "pg_ctl start",
        )  # fmt: skip
        database = "diagnosis_test"
        createdb = self.bin_dir / "createdb"
        if createdb.is_file():
            self._check(
                [str(createdb), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", database], "createdb"
            )
        else:
            database = "postgres"
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        if self.port:
            self.runner.run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                            cwd=self.base)  # fmt: skip
        shutil.rmtree(self.base, ignore_errors=True)


def _unavailable(reason: str) -> NoReturn:
    message = f"PostgreSQL tests need a server: {reason}"
    if os.environ.get(REQUIRE_POSTGRES_ENV, "").strip() in ("1", "true", "yes"):
        pytest.fail(f"{message} ({REQUIRE_POSTGRES_ENV} is set)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL URL for the session; skips with the reason when there is none."""
    configured = os.environ.get(POSTGRES_URL_ENV, "").strip()
    if configured:
        yield configured
        return
    try:
        server = _Server(bin_dir=_find_bin_dir(), base=Path(tempfile.mkdtemp(prefix="diagnosis-pg-")), runner=_runner())
    except PostgresUnavailable as exc:
        _unavailable(str(exc))
    try:
        url = server.start()
    except (PostgresUnavailable, OSError, subprocess.SubprocessError) as exc:
        server.stop()
        _unavailable(f"could not start one: {exc}")
    try:
        yield url
    finally:
        server.stop()


async def _reset_postgres(url: str, *, drop: bool) -> None:
    """Empties the store's tables (``drop``: removes them, migrations included)."""
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            if drop:
                # checkpoint: dropped by migration 0003, still in a database an older version left
                for table in ("checkpoint", *STORE_TABLES):
                    await conn.execute(text(f'DROP TABLE IF EXISTS "{table}" CASCADE'))
            elif (await conn.execute(text("SELECT to_regclass('diagnosis_run')"))).scalar() is not None:
                for table in STORE_TABLES[:-1]:
                    await conn.execute(text(f'DELETE FROM "{table}"'))
    finally:
        await engine.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty SQLite file to copy: tests start from it instead of migrating each time."""
    path = tmp_path_factory.mktemp("template") / "diagnosis.db"
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            upgrade_connection(conn)
    finally:
        engine.dispose()
    return path


_BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=_BACKENDS)
async def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database of each backend with no tables at all."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'store' / 'diagnosis.db'}"
    url: str = request.getfixturevalue("postgres_url")
    await _reset_postgres(url, drop=True)
    return url


async def _database(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        path = tmp_path / "diagnosis.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite+aiosqlite:///{path}"
    url: str = request.getfixturevalue("postgres_url")
    await _reset_postgres(url, drop=False)
    return url


@pytest.fixture(params=_BACKENDS)
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database of each backend whose store tables are empty (migrated, or migrated on open)."""
    return await _database(request.param, request, tmp_path)


@pytest.fixture(params=[*_BACKENDS, "memory"])
async def backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[str], Awaitable[RunStore]]]:
    """Every store backend, empty, for the store contract tests: opens it as the instance of an owner id
    (``store_builders.OpenStore``)."""
    opened: list[RunStore] = []
    if request.param == "memory":
        data = MemoryStore()

        async def open_store(owner: str) -> RunStore:
            return data.instance(owner)
    else:
        url = await _database(request.param, request, tmp_path)

        async def open_store(owner: str) -> RunStore:
            store = await open_repository(url, owner=owner)
            opened.append(store)
            return store

    try:
        yield open_store
    finally:
        for store in opened:
            await store.close()


@pytest.fixture
async def repo(backend: Callable[[str], Awaitable[RunStore]]) -> RunStore:
    """The store of instance ``instance-a``, on each backend."""
    return await backend("instance-a")
