"""Lines shaped to make a matching expression backtrack (nested-quantifier bait, 12 KB lines, a 420 KB
statement), in tool outputs read by the embedded default and in agent outputs, end within generous bounds, and
the server answers its health checks while such a run computes."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc.aio
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from tests.support import settings as support_settings
from tests.support.api import HEURISTIC, Api, api_servers

from . import world
from .harness import run_all

HERE = Path(__file__).resolve().parent
PACK = HERE.parent / "incidents" / "packs" / "cart-pods-restarting.json"
LINE = 12 * 1024
RUN_BOUND_S = 15.0  # a normal run here takes 1-3 s on a loaded machine
COPIES = 2  # events per bait: what a crash-looping pod's warnings come to in an hour


def _fill(unit: str, size: int = LINE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


BAIT = {
    "letters-then-bang": _fill("a") + "!",
    "pair-of-equals": "password" + _fill("="),
    "userinfo-colons": "x://" + _fill("a:") + " ",
    "pem-unterminated": "-----BEGIN PRIVATE KEY-----" + _fill("A"),
    "jwt-no-dots": "eyJ" + _fill("a", LINE // 2) + "." + _fill("b", LINE // 2),
    "dotted-numbers": _fill("1."),
    "hyphen-chain": _fill("a-"),
    "bearer-spaces": "Bearer " + _fill(" ") + "x",
    "query-pairs": _fill("key=value&"),
    "open-braces": _fill("{") + '"password":',
    "quotes": _fill('"'),
    "header-repeats": _fill("Authorization:"),
    "combining-marks": _fill("e\u0301"),
    "dotted-snake": _fill("a.b_c"),
    "hex-run": "0x" + _fill("f"),
    "instruction-repeats": _fill("ignore previous instructions and "),
    "number-units": _fill("12Mi 3.5Gi 250ms "),
    "timestamps": _fill("2026-11-30T09:47:12Z "),
}


# ------------------------------------------------------------------ agent outputs through the replayed graph


def _statement_case(name: str, statement: str) -> world.Json:
    base = world.clean_claims()[0]
    return world.case(f"bait-{name}", [dict(base, claim_id="c5", statement=statement, critical=False)])


def test_hostile_statements_end_within_bounds() -> None:
    """Every bait as a claim statement and as a binding's matched text, and a 420 KB statement."""
    cases = [_statement_case(name, text) for name, text in BAIT.items()]
    cases.append(_statement_case("420kb", _fill("ledger-svc status=502 OOMKilled a-b.c_d ", 420 * 1024)))
    matched = world.clean_claims()[0]
    matched = dict(matched, claim_id="c6", critical=False)
    matched["evidence_bindings"] = [dict(matched["evidence_bindings"][0], matched_text=BAIT["letters-then-bang"])]
    cases.append(world.case("bait-matched-text", [matched]))
    started = time.monotonic()
    outcomes = run_all(cases)
    elapsed = time.monotonic() - started
    assert elapsed < RUN_BOUND_S * 2, f"{len(cases)} runs took {elapsed:.1f} s"
    for case_id, outcome in outcomes.items():
        assert outcome.run.answer_text, case_id
        assert outcome.run.status == run_pb2.RUN_STATUS_SUCCESS, case_id


# ------------------------------------------------------------------ tool outputs through a real server


def _hostile_pack(folder: Path) -> str:
    pack = json.loads(PACK.read_text(encoding="utf-8"))
    pack["name"] = "ledger-bait"
    k8s = pack["kubernetes"]
    k8s["pod_logs"][0]["lines"].extend(BAIT.values())
    k8s["pod_logs"][0]["lines"].extend(json.dumps({"level": "error", "msg": text}) for text in BAIT.values())
    first = k8s["events"][0]
    for n, text in enumerate([*BAIT.values()] * COPIES):
        event = copy.deepcopy(first)
        event["metadata"]["name"] = f"{first['metadata']['name']}-b{n}"
        event.update(type="Warning", reason="BackOff", message=text, count=n + 1)
        k8s["events"].append(event)
    k8s["pods"][0]["metadata"].setdefault("annotations", {})["ledger.example/bait"] = BAIT["userinfo-colons"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ledger-bait.json").write_text(json.dumps(pack), encoding="utf-8")
    return str(pack["question"])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bait_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Api, str]]:
    """One real server with the embedded default agents over the pack of hostile lines."""
    folder = tmp_path_factory.mktemp("bait")
    question = _hostile_pack(folder / "packs")
    with pytest.MonkeyPatch.context() as monkeypatch:
        support_settings.clean_environment(monkeypatch)
        async with api_servers(lambda _: folder / "api.db") as factory:
            yield await factory(provider=HEURISTIC, scenarios_dir=folder / "packs"), question


async def _run_polling_health(api: Api, question: str) -> tuple[float, list[float], list[str], bool]:
    """One run over the pack, health checked every 50 ms meanwhile: (seconds, latencies, failed checks, answered)."""
    health = health_pb2_grpc.HealthStub(api.channel)
    request = pb.DiagnoseRequest(question=question, context=pb.RequestContext(scenario="ledger-bait"))
    latencies: list[float] = []
    missed: list[str] = []
    started = time.monotonic()

    async def diagnose() -> list[pb.DiagnoseResponse]:
        return [m async for m in api.diagnosis.Diagnose(request, timeout=RUN_BOUND_S * 2)]

    task = asyncio.create_task(diagnose())
    while not task.done():
        sent = time.monotonic()
        try:
            await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=RUN_BOUND_S)
        except grpc.aio.AioRpcError as exc:  # a missed check is what the caller pins
            missed.append(exc.code().name)
        latencies.append(time.monotonic() - sent)
        await asyncio.sleep(0.05)
    responses = await task
    return time.monotonic() - started, latencies, missed, bool(responses)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_run_over_hostile_lines_ends_within_bounds(bait_server: tuple[Api, str]) -> None:
    api, question = bait_server
    elapsed, _, missed, answered = await _run_polling_health(api, question)
    assert answered, "the run answered"
    assert elapsed < RUN_BOUND_S, f"the run took {elapsed:.1f} s"
    assert not missed, f"health checks failed during the run: {missed}"


# ------------------------------------------------------------------ the loop answers while runs compute

CAPPED_RUNS = 4  # at once, at the server's cap: the CPU of four bait runs held the loop 1.3-3.6 s on main
ANSWER_BOUND_S = 1.0  # issue 33: health checks and other RPCs answer within 1 s while any run computes


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def capped_bait_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Api, str]]:
    """A real server over the pack of hostile lines that runs at most ``CAPPED_RUNS`` runs at once."""
    folder = tmp_path_factory.mktemp("capped")
    question = _hostile_pack(folder / "packs")
    with pytest.MonkeyPatch.context() as monkeypatch:
        support_settings.clean_environment(monkeypatch)
        async with api_servers(lambda _: folder / "api.db") as factory:
            api = await factory(
                provider=HEURISTIC, scenarios_dir=folder / "packs", max_concurrent_runs=CAPPED_RUNS, log_level="warning"
            )
            yield api, question


@pytest.mark.asyncio(loop_scope="module")
async def test_health_and_refusals_answer_within_a_second_while_runs_compute(
    capped_bait_server: tuple[Api, str],
) -> None:
    """While the cap's runs compute over hostile lines, every health check answers SERVING and every further
    Diagnose is refused RESOURCE_EXHAUSTED, each within a second (their CPU is off the event loop)."""
    api, question = capped_bait_server
    health = health_pb2_grpc.HealthStub(api.channel)
    runs = api.running.runs
    request = pb.DiagnoseRequest(question=question, context=pb.RequestContext(scenario="ledger-bait"))

    started: list[str] = []
    all_started = asyncio.Event()

    async def diagnose() -> list[pb.DiagnoseResponse]:
        responses: list[pb.DiagnoseResponse] = []
        async for message in api.diagnosis.Diagnose(request, timeout=RUN_BOUND_S * 4):
            if not responses:  # the first message: the run exists
                started.append(message.run_id)
                if len(started) >= CAPPED_RUNS:
                    all_started.set()
            responses.append(message)
        return responses

    tasks = [asyncio.create_task(diagnose()) for _ in range(CAPPED_RUNS)]
    await asyncio.wait_for(all_started.wait(), timeout=RUN_BOUND_S)
    checks: list[float] = []
    refusals: list[float] = []
    statuses: set[int] = set()
    codes: set[grpc.StatusCode] = set()
    while len(runs.active_run_ids) >= CAPPED_RUNS:
        sent = time.monotonic()
        reply = await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=RUN_BOUND_S)
        checks.append(time.monotonic() - sent)
        statuses.add(reply.status)
        sent = time.monotonic()
        try:
            await diagnose()  # accepted only if a capped run ended meanwhile: it then runs to its end here
        except grpc.aio.AioRpcError as exc:
            refusals.append(time.monotonic() - sent)
            codes.add(exc.code())
        await asyncio.sleep(0.05)
    finished = await asyncio.gather(*tasks)
    assert all(finished), "every capped run answered"
    slow = [f"{s:.2f}" for s in checks if s >= ANSWER_BOUND_S]
    assert not slow, f"health checks over {ANSWER_BOUND_S} s of {len(checks)}: {slow}"
    slow = [f"{s:.2f}" for s in refusals if s >= ANSWER_BOUND_S]
    assert not slow, f"refusals over {ANSWER_BOUND_S} s of {len(refusals)}: {slow}"
    assert len(checks) >= 3 and refusals, f"too few calls while the runs computed: {len(checks)}, {len(refusals)}"
    assert statuses == {health_pb2.HealthCheckResponse.SERVING}
    assert codes == {grpc.StatusCode.RESOURCE_EXHAUSTED}, codes
