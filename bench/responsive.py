"""Health checks and run-cap refusals while the cap's runs compute over hostile log lines (issues 33 and 34).

A real server in a process of its own runs at most ``CAP`` runs at once over the bundled ``checkout-oom``
scenario with twelve 12 KB lines, each ``COPIES`` times, added to its logs and its Kubernetes events (shapes that make a
matching expression backtrack: one letter repeated then a bang, ``key=value&`` pairs, ``a:`` runs after a
scheme, repeated headers). While ``CAP`` such runs compute, this process checks health and sends one more
Diagnose (refused RESOURCE_EXHAUSTED at the cap) every 50 ms, and times each answer; the baseline, in the same
run, is the same two calls on the same server while it is idle.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.servers import ServerProcess
from bench.timing import percentile
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc
from diagnosis_server.tools.scenario import BUNDLED_DIR

SCENARIO = "checkout-oom"
BAIT_SCENARIO = "checkout-bait"
CAP = 4
LINE = 12 * 1024
COPIES = 2  # each bait line twice in the logs (as text and as a JSON line) and in the events
POLL_GAP_S = 0.05
RUN_TIMEOUT_S = 120.0


def _fill(unit: str, size: int = LINE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def bait_lines() -> list[str]:
    """12 KB lines shaped to make a backtracking expression work hard, written here from their shapes."""
    return [
        _fill("a") + "!",
        _fill("key=value&"),
        "x://" + _fill("a:") + " ",
        _fill("Authorization:"),
        "password" + _fill("="),
        "Bearer " + _fill(" ") + "x",
        _fill("1."),
        _fill("a-"),
        _fill("a.b_c"),
        _fill('"'),
        _fill("2026-11-30T09:47:12Z "),
        _fill("ignore previous instructions and "),
    ]


def write_bait_scenario(folder: Path) -> str:
    """The bundled scenario with the bait lines in its logs and events, as a pack of ``folder``; its question."""
    pack = json.loads((BUNDLED_DIR / f"{SCENARIO}.json").read_text(encoding="utf-8"))
    pack["name"] = BAIT_SCENARIO
    pack["default"] = False
    logs = pack["logs"]
    first_log = next(line for line in logs if line.get("service") == "checkout-api")
    for text in bait_lines() * COPIES:
        logs.append({**first_log, "level": "ERROR", "message": text})
        logs.append({**first_log, "level": "ERROR", "message": json.dumps({"level": "error", "msg": text})})
    events = pack.get("k8s_events") or []
    if events:
        for n, text in enumerate(bait_lines() * COPIES):
            events.append({**events[0], "type": "Warning", "reason": "BackOff", "message": text, "count": n + 1})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{BAIT_SCENARIO}.json").write_text(json.dumps(pack), encoding="utf-8")
    return str(pack["question"])


class Caller:
    """Health checks and Diagnose calls on one channel, each timed."""

    def __init__(self, channel: grpc.aio.Channel, question: str) -> None:
        self._health = health_pb2_grpc.HealthStub(channel)
        self._diagnosis = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        self._request = pb.DiagnoseRequest(question=question, context=pb.RequestContext(scenario=BAIT_SCENARIO))

    async def check(self) -> float:
        sent = time.perf_counter()
        await self._health.Check(health_pb2.HealthCheckRequest(service=""), timeout=RUN_TIMEOUT_S)
        return time.perf_counter() - sent

    async def diagnose(self) -> int:
        """A whole run's stream; the number of its messages."""
        return len([m async for m in self._diagnosis.Diagnose(self._request, timeout=RUN_TIMEOUT_S)])

    async def refused(self) -> float | None:
        """Seconds to a RESOURCE_EXHAUSTED refusal; None when the call was accepted (a capped run had ended)."""
        sent = time.perf_counter()
        try:
            await self.diagnose()
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            return time.perf_counter() - sent
        return None


async def _idle(caller: Caller, samples: int) -> list[float]:
    """Health checks of the idle server."""
    checks = []
    for _ in range(samples):
        checks.append(await caller.check())
        await asyncio.sleep(POLL_GAP_S)
    return checks


async def _under_load(caller: Caller) -> tuple[list[float], list[float]]:
    """Health checks and refusals while ``CAP`` bait runs compute."""
    runs = [asyncio.create_task(caller.diagnose()) for _ in range(CAP)]
    checks: list[float] = []
    refusals: list[float] = []
    await asyncio.sleep(0.2)  # the runs started (their first node computing)

    async def poll() -> None:
        while not any(run.done() for run in runs):
            checks.append(await caller.check())
            refused = await caller.refused()
            if refused is not None:
                refusals.append(refused)
            await asyncio.sleep(POLL_GAP_S)

    await poll()
    await asyncio.gather(*runs)
    return checks, refusals


def _ms(values: list[float], q: float) -> float:
    return round(percentile(values, q) * 1000, 1)


async def measure(*, workdir: Path | None = None, rounds: int = 3) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-responsive-") as tmp:
        folder = Path(tmp)
        question = write_bait_scenario(folder / "packs")
        log_dir = workdir or folder
        server = ServerProcess(
            "diagnose",
            "--database-url",
            f"sqlite+aiosqlite:///{folder / 'responsive.db'}",
            "--max-concurrent-runs",
            str(CAP),
            "--scenarios-dir",
            str(folder / "packs"),
            "--log-level",
            "warning",
            log_path=log_dir / "responsive-server.log",
        )
        async with server, grpc.aio.insecure_channel(server.target) as channel:
            caller = Caller(channel, question)
            await caller.diagnose()  # warm: the first run loads what later ones reuse
            idle_checks: list[float] = []
            checks: list[float] = []
            refusals: list[float] = []
            wall: list[float] = []
            for _ in range(rounds):
                idle_checks += await _idle(caller, 20)
                started = time.perf_counter()
                loaded_checks, loaded_refusals = await _under_load(caller)
                wall.append(time.perf_counter() - started)
                checks += loaded_checks
                refusals += loaded_refusals
    return {
        "health_p99_ms_while_runs_compute": _ms(checks, 99),
        "health_p50_ms_while_runs_compute": _ms(checks, 50),
        "health_max_ms_while_runs_compute": _ms(checks, 100),
        "health_checks_while_runs_compute": len(checks),
        "health_p50_ms_idle": _ms(idle_checks, 50),
        "health_p99_ms_idle": _ms(idle_checks, 99),
        "run_cap_refusal_p90_ms_under_load": _ms(refusals, 90),
        "run_cap_refusal_p50_ms_under_load": _ms(refusals, 50),
        "run_cap_refusal_max_ms_under_load": _ms(refusals, 100),
        "run_cap_refusals_under_load": len(refusals),
        "responsive_bait_runs_wall_s": round(statistics.median(wall), 2) if wall else None,
        "responsive_concurrent_runs": CAP,
    }
