"""The store against its floor: CPU per run of our SQLite store vs a raw sqlite3 loop writing the same rows.

Both replay the store calls of one captured heuristic run (``bench.capture``), under fresh run ids: ours
through ``Repository`` (what the orchestrator calls, protos in, protos out), the floor as plain sqlite3
statements with the payload bytes already made: the same schema (migrated by the store), the same pragmas
(WAL, synchronous=NORMAL, foreign keys, busy timeout), the same transactions (BEGIN IMMEDIATE and COMMIT per
write, one per read). Rounds alternate; each round's ratio is one sample.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.capture import CapturedRun, StoreCall, copy_commit, copy_message
from bench.profiling import ProfileSummary, profile_async
from diagnosis.v1 import run_pb2
from diagnosis_server.store import RunStore, open_repository
from diagnosis_server.store.records import payload, utc_now
from diagnosis_server.store.sqlite_ops import stamp

_INSERT_RUN = (
    "INSERT INTO diagnosis_run (run_id, tenant, status, verdict, question, scenario, created_at, updated_at, "
    "owner, heartbeat_at, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_UPDATE_RUN = (
    "UPDATE diagnosis_run SET status = ?, verdict = ?, updated_at = ?, heartbeat_at = ?, payload = ? WHERE run_id = ?"
)
_INSERT_STEP = "INSERT INTO node_step (run_id, node, attempt, payload) VALUES (?, ?, ?, ?)"
_INSERT_EVENT = "INSERT INTO orchestration_event (run_id, sequence, node, outcome, payload) VALUES (?, ?, ?, ?, ?)"
_INSERT_INVOCATION = "INSERT INTO tool_invocation (run_id, invocation_id, tool_name, payload) VALUES (?, ?, ?, ?)"
_LIST_INVOCATIONS = "SELECT payload FROM tool_invocation WHERE run_id = ? ORDER BY seq"


def rename(calls: Sequence[StoreCall], run_id: str) -> list[StoreCall]:
    """The calls of one run as another run (every proto's run_id replaced)."""
    return [
        StoreCall(
            call.name,
            run=None if call.run is None else copy_message(call.run, run_id),
            commit=None if call.commit is None else copy_commit(call.commit, run_id),
            invocation=None if call.invocation is None else copy_message(call.invocation, run_id),
        )
        for call in calls
    ]


async def replay(repository: RunStore, run_id: str, calls: Sequence[StoreCall]) -> None:
    """One run's store calls, as the orchestrator makes them."""
    for call in calls:
        if call.name == "create_run":
            assert call.run is not None
            await repository.create_run(call.run)
        elif call.name == "commit_node":
            assert call.commit is not None
            await repository.commit_node(call.commit)
        elif call.name == "add_tool_invocation":
            assert call.invocation is not None
            await repository.add_tool_invocation(call.invocation)
        elif call.name == "finish_run":
            assert call.run is not None
            await repository.finish_run(call.run)
        elif call.name == "list_tool_invocations":
            await repository.list_tool_invocations(run_id)


# A raw transaction: (statement, rows) pairs written in one BEGIN IMMEDIATE .. COMMIT, or a read.
RawOp = tuple[str, list[tuple[str, list[tuple[Any, ...]]]]]


def raw_ops(calls: Sequence[StoreCall], run_id: str) -> list[RawOp]:
    """The same rows as plain parameter tuples (payload bytes made here, before any timing)."""
    now = stamp(utc_now())
    ops: list[RawOp] = []
    for call in calls:
        if call.name == "create_run":
            run = call.run
            assert run is not None
            row = (run_id, run.tenant, int(run_pb2.RUN_STATUS_RUNNING), 0, run.question, run.scenario, now, now)
            ops.append(("write", [(_INSERT_RUN, [(*row, "bench", now, payload(run))])]))
        elif call.name == "commit_node":
            commit = call.commit
            assert commit is not None
            statements: list[tuple[str, list[tuple[Any, ...]]]] = []
            if commit.run is not None:
                run = commit.run
                statements.append((_UPDATE_RUN, [(int(run.status), int(run.verdict), now, now, payload(run), run_id)]))
            if commit.steps:
                steps = [(run_id, int(s.node), s.attempt, payload(s)) for s in commit.steps]
                statements.append((_INSERT_STEP, steps))
            if commit.events:
                events = [(run_id, e.sequence, int(e.node), int(e.outcome), payload(e)) for e in commit.events]
                statements.append((_INSERT_EVENT, events))
            ops.append(("write", statements))
        elif call.name == "add_tool_invocation":
            i = call.invocation
            assert i is not None
            ops.append(("write", [(_INSERT_INVOCATION, [(run_id, i.invocation_id, i.tool_name, payload(i))])]))
        elif call.name == "finish_run":
            run = call.run
            assert run is not None
            final = (int(run.status), int(run.verdict), now, now, payload(run), run_id)
            ops.append(("write", [(_UPDATE_RUN, [final])]))
        elif call.name == "list_tool_invocations":
            ops.append(("read", [(_LIST_INVOCATIONS, [(run_id,)])]))
    return ops


def raw_connection(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA busy_timeout = 15000")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def raw_run(conn: sqlite3.Connection, ops: Sequence[RawOp]) -> None:
    """One run's rows through the bare driver, a transaction per store call."""
    for kind, statements in ops:
        if kind == "read":
            conn.execute("BEGIN")
            for statement, rows in statements:
                conn.execute(statement, rows[0]).fetchall()
            conn.execute("COMMIT")
            continue
        conn.execute("BEGIN IMMEDIATE")
        for statement, rows in statements:
            if len(rows) == 1:
                conn.execute(statement, rows[0])
            else:
                conn.executemany(statement, rows)
        conn.execute("COMMIT")


def spread(values: Sequence[float]) -> list[float]:
    return [round(min(values), 4), round(max(values), 4)] if values else []


@dataclasses.dataclass
class StoreBench:
    """Two migrated SQLite files, ours through the repository and the floor's through sqlite3."""

    captured: CapturedRun
    folder: Path
    repository: RunStore | None = None
    conn: sqlite3.Connection | None = None
    _serial: int = 0

    async def open(self) -> None:
        self.repository = await open_repository(f"sqlite+aiosqlite:///{self.folder / 'ours.db'}", owner="bench")
        floor = await open_repository(f"sqlite+aiosqlite:///{self.folder / 'floor.db'}", owner="bench")
        await floor.close()
        self.conn = raw_connection(self.folder / "floor.db")

    async def close(self) -> None:
        if self.repository is not None:
            await self.repository.close()
        if self.conn is not None:
            self.conn.close()

    def _ids(self, runs: int) -> list[str]:
        self._serial += runs
        return [f"run-bench-{self._serial - runs + i:06d}" for i in range(runs)]

    async def ours_cpu_ms(self, runs: int) -> float:
        """Process CPU ms per run of our store (the loop's and the worker thread's)."""
        assert self.repository is not None
        batches = [(run_id, rename(self.captured.calls, run_id)) for run_id in self._ids(runs)]
        start = time.process_time()
        for run_id, calls in batches:
            await replay(self.repository, run_id, calls)
        return (time.process_time() - start) / runs * 1000

    def floor_cpu_ms(self, runs: int) -> float:
        """Process CPU ms per run of the raw sqlite3 loop writing the same rows."""
        assert self.conn is not None
        batches = [raw_ops(self.captured.calls, run_id) for run_id in self._ids(runs)]
        start = time.process_time()
        for ops in batches:
            raw_run(self.conn, ops)
        return (time.process_time() - start) / runs * 1000


async def measure(captured: CapturedRun, *, runs: int = 30, rounds: int = 5) -> dict[str, Any]:
    """``store_cpu_vs_raw_sqlite``: our store's CPU per run over the raw floor's, per round."""
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        bench = StoreBench(captured, Path(tmp))
        await bench.open()
        try:
            await bench.ours_cpu_ms(3)
            bench.floor_cpu_ms(3)
            ours: list[float] = []
            floor: list[float] = []
            for _ in range(rounds):
                ours.append(await bench.ours_cpu_ms(runs))
                floor.append(bench.floor_cpu_ms(runs))
        finally:
            await bench.close()
    ratios = [o / f for o, f in zip(ours, floor, strict=True)]
    calls = captured.calls
    return {
        "store_cpu_vs_raw_sqlite": round(statistics.median(ratios), 3),
        "store_cpu_vs_raw_sqlite_rounds": [round(r, 3) for r in ratios],
        "store_cpu_ms_per_run": round(statistics.median(ours), 3),
        "store_cpu_ms_per_run_rounds": [round(v, 3) for v in ours],
        "raw_sqlite_cpu_ms_per_run": round(statistics.median(floor), 3),
        "raw_sqlite_cpu_ms_per_run_rounds": [round(v, 3) for v in floor],
        "store_writes_per_run": sum(1 for c in calls if c.name != "list_tool_invocations"),
        "store_reads_per_run": sum(1 for c in calls if c.name == "list_tool_invocations"),
    }


async def profile(captured: CapturedRun, *, runs: int = 30) -> ProfileSummary:
    """A cProfile of our store replaying the captured run's calls."""
    with tempfile.TemporaryDirectory(prefix="bench-store-profile-") as tmp:
        bench = StoreBench(captured, Path(tmp))
        await bench.open()
        try:
            assert bench.repository is not None
            repository = bench.repository
            batches = iter([(run_id, rename(captured.calls, run_id)) for run_id in bench._ids(runs)])

            async def one() -> None:
                run_id, calls = next(batches)
                await replay(repository, run_id, calls)

            return await profile_async(one, ops=runs, what=f"our SQLite store replaying {runs} runs' store calls")
        finally:
            await bench.close()
