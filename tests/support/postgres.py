"""A throwaway PostgreSQL cluster: ``initdb`` and ``pg_ctl`` found on PATH or in /usr/lib/postgresql/*/bin make a
cluster in a temporary folder, listening on 127.0.0.1 on a free port. As root, the server runs as the ``postgres``
user (or ``nobody``). When none can be had, a test skips and says what was missing, or fails when
``DIAGNOSIS_TEST_REQUIRE_POSTGRES=1`` (CI sets it, so a missing install step cannot hide).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from .serve import free_port

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
START_TIMEOUT_S = 30


class PostgresUnavailable(Exception):
    """Why no PostgreSQL server could be started (the skip reason)."""


def postgres_required() -> bool:
    return os.environ.get(REQUIRE_POSTGRES_ENV, "").strip() in ("1", "true", "yes")


def unavailable(reason: str) -> NoReturn:
    """Skips the test for want of a server, or fails it when one is required."""
    message = f"PostgreSQL tests need a server: {reason}"
    if postgres_required():
        pytest.fail(f"{message} ({REQUIRE_POSTGRES_ENV} is set)", pytrace=False)
    pytest.skip(message)


@dataclass(frozen=True, slots=True)
class Runner:
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
            timeout=START_TIMEOUT_S,
            check=False,
            env={**os.environ, "LC_ALL": "C", "LANG": "C"},
        )


def find_bin_dir() -> Path:
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


def runner() -> Runner:
    if os.geteuid() != 0:
        return Runner(uid=None, gid=None)
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return Runner(uid=entry.pw_uid, gid=entry.pw_gid)
    raise PostgresUnavailable("running as root and no 'postgres' or 'nobody' user to run the server as")


@dataclass(slots=True)
class Cluster:
    """One cluster under ``base``: ``start`` makes and starts it, ``stop`` stops and removes it."""

    bin_dir: Path
    base: Path
    runner: Runner
    port: int = 0

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def server_options(self) -> str:
        """The postgres options of a fast, throwaway server on 127.0.0.1:``port``."""
        return (
            f"-p {self.port} -h 127.0.0.1 -k {self.base} -F "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )

    def _check(self, argv: list[str], what: str) -> None:
        result = self.runner.run(argv, cwd=self.base)
        if result.returncode != 0:
            raise PostgresUnavailable(f"{what} failed ({result.returncode}): {(result.stderr or result.stdout)[-800:]}")

    def start(self) -> str:
        """Makes the cluster, starts it and creates its database; the database's URL."""
        if self.runner.uid is not None:
            os.chown(self.base, self.runner.uid, self.runner.gid or -1)
        self._check(
            [str(self.bin_dir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
             "--no-sync", "--no-instructions"],
            "initdb",
        )  # fmt: skip
        self.port = free_port()
        self._check(
            [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.base / "server.log"), "-w",
             "-t", str(START_TIMEOUT_S), "-o", self.server_options, "start"],
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


async def reset_postgres(url: str, *, drop: bool) -> None:
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
