"""What ``make load`` and ``make soak-api`` share: their knobs from the environment, latency percentiles, the
statuses the store holds, and the verdict that ends a run of either."""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

from tests.support.serve import ServeProcess


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.strip() else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    return float(value) if value.strip() else default


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def stored_statuses(database: Path) -> dict[str, int]:
    """Each stored run's status, read from the SQLite file beside the server."""
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)) as conn:
        return dict(conn.execute("SELECT run_id, status FROM diagnosis_run").fetchall())


def verdict(name: str, failures: list[str], exit_status: int, server: ServeProcess, workdir: Path) -> int:
    """The exit status of the run ``name``: 1 with ``failures`` (to which a server that did not exit cleanly
    after SIGTERM is added) said and the server's log kept, else 0 with the temporary folder removed."""
    if exit_status != 0:
        failures.append(f"the server exited with {exit_status} after SIGTERM")
    if failures:
        print(f"{name}: FAILED: {'; '.join(failures)} (server log: {server.log})")
        return 1
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"{name}: OK")
    return 0
