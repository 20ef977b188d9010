"""`make soak-api`: a mixed, bounded workload against a real `diagnosis serve` on loopback for 5 minutes.

The server is a subprocess in its default configuration (embedded heuristic provider, SQLite store in a
fresh temporary folder, bearer tokens for two tenants, metrics on loopback). For ``SOAK_SECONDS`` (300),
``SOAK_WORKERS`` (24) callers each pick, again and again, one of: Diagnose (to its end), WatchRun of a recent
run, GetRun, ListRuns (paged), CheckEvidence, or a bad request (an empty or NUL question, an unknown scenario,
a malformed run id, a wrong token, a page token of another tenant, a CheckEvidence over its limits, a
GetRun of another tenant's run). Every answer is checked: good requests must succeed, bad ones must fail
with their expected status code (INVALID_ARGUMENT, UNAUTHENTICATED, NOT_FOUND) and nothing else.

At most ``SOAK_WORKERS`` calls are in flight; each has a deadline; the workload stops by itself. It prints,
per kind, the count, errors, p50 and p99 latency, and the server's RSS and open file descriptors at the start
and the end; it fails (exit status 1) on any unexpected answer, a run not stored SUCCESS, or the server's
RSS growing more than ``SOAK_MAX_RSS_GROWTH`` (0.5 = 50 %) from its first minute to its end.

    make soak-api
    SOAK_SECONDS=30 SOAK_WORKERS=8 make soak-api
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import grpc.aio

from diagnosis.v1 import (
    contracts_pb2,
    diagnosis_service_pb2_grpc,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
    run_pb2,
)
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.conversions import to_value
from tests.support.serve import ServeProcess, start_serve

from .stress import env_float, percentile, stored_statuses, verdict

CALL_TIMEOUT_S = 60.0
TOKENS = {"acme": "soak-acme-token-3f9a1c", "globex": "soak-globex-token-77b2e0"}
QUESTIONS = ("Why is checkout-api returning 503s?", "What is wrong with the service right now?")


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    unexpected: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    started: dict[str, str] = field(default_factory=dict)  # run id -> tenant
    recent: dict[str, deque[str]] = field(default_factory=lambda: defaultdict(lambda: deque(maxlen=32)))

    def fail(self, kind: str, what: str) -> None:
        self.unexpected[kind] += 1
        if len(self.examples) < 20:
            self.examples.append(f"{kind}: {what}")


def _auth(tenant: str, token: str | None = None) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token or TOKENS[tenant]}"),)


def _check_request() -> gatekeeper_service_pb2.CheckEvidenceRequest:
    invocation = contracts_pb2.ToolInvocation(
        invocation_id="inv-1",
        run_id="run-soak",
        tool_name="k8s.events",
        output=to_value({"events": [{"reason": "OOMKilled"}]}),
    )
    claim = {
        "claim_id": "c1",
        "statement": "pods are OOMKilled",
        "critical": True,
        "status": "confirmed",
        "evidence_bindings": [
            {
                "source_invocation_ids": ["inv-1"],
                "tool_name": "k8s.events",
                "raw_path": "/events/0/reason",
                "matched_text": "OOMKilled",
            }
        ],
    }
    text = json.dumps({"contract": "executor_evidence_v2", "claims": [claim]})
    return gatekeeper_service_pb2.CheckEvidenceRequest(tool_invocations=[invocation], executor_output_text=text)


class Workload:
    def __init__(self, channel: grpc.aio.Channel, tally: Tally, scenarios: list[str]) -> None:
        self.diagnosis = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        self.gatekeeper = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel)
        self.tally = tally
        self.scenarios = scenarios
        self.rng = random.Random()

    def _tenant(self) -> str:
        return self.rng.choice(tuple(TOKENS))

    async def diagnose(self) -> None:
        tenant = self._tenant()
        request = pb.DiagnoseRequest(
            question=self.rng.choice(QUESTIONS), context=pb.RequestContext(scenario=self.rng.choice(self.scenarios))
        )
        final: run_pb2.DiagnosisRun | None = None
        async for message in self.diagnosis.Diagnose(request, metadata=_auth(tenant), timeout=CALL_TIMEOUT_S):
            if message.WhichOneof("kind") == "started":
                self.tally.started[message.run_id] = tenant
            elif message.WhichOneof("kind") == "run":
                final = message.run
        if final is None or final.status != run_pb2.RUN_STATUS_SUCCESS:
            raise AssertionError(f"final run {final.status if final else None}")
        self.tally.recent[tenant].append(final.run_id)

    async def watch(self) -> None:
        tenant = self._tenant()
        if not self.tally.recent[tenant]:
            return await self.diagnose()
        run_id = self.rng.choice(tuple(self.tally.recent[tenant]))
        sequences: list[int] = []
        ended: pb.RunEnded | None = None
        call = self.diagnosis.WatchRun(
            pb.WatchRunRequest(run_id=run_id), metadata=_auth(tenant), timeout=CALL_TIMEOUT_S
        )
        async for message in call:
            if message.WhichOneof("kind") == "event":
                sequences.append(message.event.sequence)
            else:
                ended = message.ended
        if ended is None or sequences != list(range(1, len(sequences) + 1)) or ended.last_sequence != len(sequences):
            raise AssertionError("incomplete watch")

    async def get(self) -> None:
        tenant = self._tenant()
        if not self.tally.recent[tenant]:
            return await self.diagnose()
        run_id = self.rng.choice(tuple(self.tally.recent[tenant]))
        reply = await self.diagnosis.GetRun(pb.GetRunRequest(run_id=run_id), metadata=_auth(tenant), timeout=10)
        if reply.run.run_id != run_id:
            raise AssertionError("another run")

    async def list_runs(self) -> None:
        tenant = self._tenant()
        token = ""
        for _ in range(3):
            request = pb.ListRunsRequest(page_size=20, page_token=token)
            page = await self.diagnosis.ListRuns(request, metadata=_auth(tenant), timeout=10)
            if any(self.tally.started.get(run.run_id, tenant) != tenant for run in page.runs):
                raise AssertionError("another tenant's run listed")
            token = page.next_page_token
            if not token:
                break

    async def check(self) -> None:
        reply = await self.gatekeeper.CheckEvidence(_check_request(), metadata=_auth(self._tenant()), timeout=10)
        if reply.gatekeeper_result.status != contracts_pb2.GATEKEEPER_STATUS_PASS:
            raise AssertionError("the check did not pass")

    async def bad(self) -> grpc.StatusCode:
        """One bad request; returns the code it must fail with (the call itself raises)."""
        choice = self.rng.randrange(7)
        tenant = self._tenant()
        if choice == 0:
            question = self.rng.choice(["", "   ", "why\x00?", "\u200b\u200b"])
            await _drain(self.diagnosis.Diagnose(pb.DiagnoseRequest(question=question), metadata=_auth(tenant)))
        elif choice == 1:
            request = pb.DiagnoseRequest(question="why?", context=pb.RequestContext(scenario="no-such-scenario"))
            await _drain(self.diagnosis.Diagnose(request, metadata=_auth(tenant)))
        elif choice == 2:
            await self.diagnosis.GetRun(pb.GetRunRequest(run_id="bad id!"), metadata=_auth(tenant), timeout=10)
        elif choice == 3:
            await self.diagnosis.ListRuns(pb.ListRunsRequest(), metadata=_auth(tenant, "wrong-token"), timeout=10)
            return grpc.StatusCode.UNAUTHENTICATED
        elif choice == 4:
            await self.diagnosis.ListRuns(pb.ListRunsRequest(page_token="bm90LWEtdG9rZW4"), metadata=_auth(tenant))
        elif choice == 5:
            check = _check_request()
            check.tool_invocations.extend(
                contracts_pb2.ToolInvocation(invocation_id=f"inv-x{n}", run_id="run-soak", tool_name="t")
                for n in range(300)
            )
            await self.gatekeeper.CheckEvidence(check, metadata=_auth(tenant), timeout=10)
        else:
            other = "globex" if tenant == "acme" else "acme"
            if not self.tally.recent[other]:
                await self.diagnosis.GetRun(pb.GetRunRequest(run_id="run-none"), metadata=_auth(tenant), timeout=10)
            else:
                run_id = self.tally.recent[other][-1]
                await self.diagnosis.GetRun(pb.GetRunRequest(run_id=run_id), metadata=_auth(tenant), timeout=10)
            return grpc.StatusCode.NOT_FOUND
        return grpc.StatusCode.INVALID_ARGUMENT


async def _drain(call: grpc.aio.UnaryStreamCall) -> None:  # type: ignore[type-arg]
    async for _ in call:
        pass


async def _worker(workload: Workload, until: float) -> None:
    kinds: list[tuple[str, Callable[[], Awaitable[object]], int]] = [
        ("Diagnose", workload.diagnose, 3),
        ("WatchRun", workload.watch, 2),
        ("GetRun", workload.get, 3),
        ("ListRuns", workload.list_runs, 2),
        ("CheckEvidence", workload.check, 2),
        ("bad request", workload.bad, 3),
    ]
    names = [k for k, _, weight in kinds for _ in range(weight)]
    table = {name: run for name, run, _ in kinds}
    tally = workload.tally
    while time.monotonic() < until:
        name = workload.rng.choice(names)
        began = time.perf_counter()
        try:
            result = await asyncio.wait_for(table[name](), timeout=CALL_TIMEOUT_S + 10)
        except grpc.aio.AioRpcError as exc:
            if name == "bad request":
                tally.latencies[name].append(time.perf_counter() - began)
                if exc.code() not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAUTHENTICATED,
                                      grpc.StatusCode.NOT_FOUND):  # fmt: skip
                    tally.fail(name, f"{exc.code().name}: {exc.details()}")
            else:
                tally.fail(name, f"{exc.code().name}: {exc.details()}")
            continue
        except (AssertionError, TimeoutError) as exc:
            tally.fail(name, f"{type(exc).__name__}: {exc}")
            continue
        tally.latencies[name].append(time.perf_counter() - began)
        if name == "bad request":
            tally.fail(name, f"a bad request succeeded (expected {result})")


def _fds(server: ServeProcess) -> int:
    return len(os.listdir(f"/proc/{server.pid}/fd"))


async def _drive(
    server: ServeProcess, seconds: float, workers: int, tally: Tally, rss: list[tuple[float, int]]
) -> float:
    channels = [
        grpc.aio.insecure_channel(server.target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(4)
    ]
    try:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channels[0])
        listed = await stub.ListScenarios(pb.ListScenariosRequest(), metadata=_auth("acme"), timeout=10)
        scenarios = [s.name for s in listed.scenarios]
        began = time.monotonic()
        until = began + seconds

        async def sample() -> None:
            while time.monotonic() < until:
                rss.append((time.monotonic() - began, server.rss_kib()))
                await asyncio.sleep(2.0)

        sampler = asyncio.create_task(sample())
        tasks = [
            asyncio.create_task(_worker(Workload(channels[n % len(channels)], tally, scenarios), until))
            for n in range(workers)
        ]
        async with asyncio.timeout(seconds + CALL_TIMEOUT_S * 2):
            await asyncio.gather(*tasks)
        await sampler
        elapsed = time.monotonic() - began
        rss.append((elapsed, server.rss_kib()))
        return elapsed
    finally:
        for channel in channels:
            await channel.close()


def main() -> int:
    seconds = env_float("SOAK_SECONDS", 300.0)
    workers = int(env_float("SOAK_WORKERS", 24))
    max_growth = env_float("SOAK_MAX_RSS_GROWTH", 0.5)
    if seconds <= 0 or workers < 1:
        raise SystemExit("soak-api: SOAK_SECONDS > 0 and SOAK_WORKERS >= 1")
    workdir = Path(tempfile.mkdtemp(prefix="diagnosis-soak-"))
    database = workdir / "soak.db"
    env = {
        "DIAGNOSIS_AUTH_TOKENS": ",".join(f"{tenant}:{token}" for tenant, token in TOKENS.items()),
        "DIAGNOSIS_METRICS_ADDRESS": "127.0.0.1:0",
        "DIAGNOSIS_HTTP_ADDRESS": "",
        "DIAGNOSIS_MAX_CONCURRENT_RUNS": str(max(64, workers * 2)),
        "DIAGNOSIS_MAX_CONCURRENT_CHECKS_PER_TENANT": str(max(2, workers)),
    }
    print(f"soak-api: {seconds:g} s, {workers} workers (mixed calls and bad requests); store {database}", flush=True)
    server = start_serve(workdir, database, env=env)
    tally = Tally()
    rss: list[tuple[float, int]] = []
    try:
        rss_start, fds_start = server.rss_kib(), _fds(server)
        elapsed = asyncio.run(_drive(server, seconds, workers, tally, rss))
        rss_end, fds_end = server.rss_kib(), _fds(server)
    finally:
        exit_status = server.stop(timeout=60)
    stored = stored_statuses(database)
    lost = [run_id for run_id in tally.started if stored.get(run_id) != run_pb2.RUN_STATUS_SUCCESS]

    calls = sum(len(v) for v in tally.latencies.values())
    print(f"calls: {calls} answered as expected in {elapsed:.1f} s ({calls / elapsed:.1f}/s)")
    for name in sorted(tally.latencies):
        values = tally.latencies[name]
        print(f"  {name:<14} {len(values):>6}  p50 {percentile(values, 0.5) * 1000:7.1f} ms  "
              f"p99 {percentile(values, 0.99) * 1000:7.1f} ms  unexpected {tally.unexpected[name]}")  # fmt: skip
    errors = sum(tally.unexpected.values())
    print(f"errors (unexpected answers): {errors}" + (f" {dict(tally.unexpected)}" if errors else ""))
    for example in tally.examples:
        print(f"  {example}")
    first_minute = [value for moment, value in rss if moment <= 60] or [rss_start]
    baseline = max(first_minute)
    growth = (rss_end - baseline) / baseline
    print(f"runs: {len(tally.started)} started, {len(lost)} not stored SUCCESS")
    print(f"server RSS: start {rss_start / 1024:.1f} MiB, end {rss_end / 1024:.1f} MiB, "
          f"peak {max(v for _, v in rss) / 1024:.1f} MiB (first minute to end {growth * 100:+.1f} %); "
          f"open fds: start {fds_start}, end {fds_end}; exit status after SIGTERM: {exit_status}")  # fmt: skip

    failures = []
    if errors:
        failures.append(f"{errors} unexpected answers")
    if lost:
        failures.append(f"{len(lost)} runs not stored SUCCESS")
    if growth > max_growth:
        failures.append(f"RSS grew {growth * 100:.0f} % (limit {max_growth * 100:.0f} %)")
    if not calls:
        failures.append("no call answered")
    return verdict("soak-api", failures, exit_status, server, workdir)


if __name__ == "__main__":
    sys.exit(main())
