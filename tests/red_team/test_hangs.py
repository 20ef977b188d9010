"""Class 4: crafted long texts (separators, quotes, colons, 'a'*50000+'!', alternations, runs of '#', lines that
make a pattern search from every position) in log lines, events, annotations, kernel lines, questions, claim
statements and CheckEvidence outputs never make a run take more than a few seconds, and the health check answers
within a second while one runs.

Each bait is one run on a real server (the embedded default over a bait pack, or one CheckEvidence call, or a
scripted run), while the health check is polled every 50 ms.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc.aio
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.conversions import to_value
from tests.attacks import world
from tests.attacks.harness import run_all
from tests.support import settings as support_settings
from tests.support.api import HEURISTIC, Api, api_servers

from .common import Pack, load_pack, vector

ASYNC = pytest.mark.asyncio(loop_scope="module")

RUN_BOUND_S = 3.0  # a run here takes 0.2-0.8 s; "a few seconds"
HEALTH_BOUND_S = 1.0
HASHES = 20_000  # one value of this many '#' holds a pattern search for seconds
KERNEL_LINES = 24  # kernel-kill lines of 4 KB each (each costs ~0.15-0.35 s)


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


# ------------------------------------------------------------------ bait packs


def _cart(mutate: Callable[[Pack], None]) -> Pack:
    pack = load_pack("cart-pods-restarting")
    mutate(pack)
    return pack


def _backoff_message(tail: str) -> Callable[[Pack], None]:
    def mutate(pack: Pack) -> None:
        for event in pack["kubernetes"]["events"]:
            if event["reason"] == "BackOff":
                event["message"] += " " + tail

    return mutate


def _log_lines(*lines: str) -> Callable[[Pack], None]:
    def mutate(pack: Pack) -> None:
        pack["kubernetes"]["pod_logs"][0]["lines"].extend(lines)

    return mutate


def _annotation(value: str) -> Callable[[Pack], None]:
    def mutate(pack: Pack) -> None:
        pack["kubernetes"]["pods"][0]["metadata"].setdefault("annotations", {})["ledger.example/bait"] = value

    return mutate


def _kernel_kills() -> Pack:
    """The kernel OOM incident, with lines of the killed workload that name SIGKILL after a 4 KB word."""
    pack = load_pack("indexer-batches-lost")
    for i in range(KERNEL_LINES):
        pack["logs"].append(
            {
                "ts": f"2025-05-20T02:{10 + i // 60:02d}:{i % 60:02d}.000Z",
                "service": "search-indexer",
                "level": "ERROR",
                "message": _fill("x", 4080) + " SIGKILL",
            }
        )
    return pack


BAIT_PACKS: dict[str, Callable[[], Pack]] = {
    "hash-run-in-backoff-event": lambda: _cart(_backoff_message("#" * HASHES)),
    "kernel-kill-lines": _kernel_kills,
    "separators-100kb-annotation": lambda: _cart(_annotation(_fill(":;,|/", 100_000))),
    "nested-quotes-100kb-log-line": lambda: _cart(_log_lines(_fill("\"'`", 100_000))),
    "a-50000-then-bang-log-line": lambda: _cart(
        _log_lines("a" * 50_000 + "!", json.dumps({"msg": "a" * 50_000 + "!"}))
    ),
    "colons-100kb-event": lambda: _cart(_backoff_message(_fill("a:", 100_000))),
    "alternating-100kb-log-line": lambda: _cart(_log_lines(_fill("ab", 100_000), _fill("a-b.", 100_000))),
    "ignore-all-repeated-event": lambda: _cart(_backoff_message(_fill("ignore all ", 60_000))),
    "json-escapes-log-line": lambda: _cart(_log_lines('{"msg": "' + _fill('\\\\\\"', 60_000) + '"}')),
    "userinfo-colons-log-line": lambda: _cart(_log_lines("x://" + _fill("a:", 60_000) + "@")),
    "pid-words-kernel-shape": lambda: _cart(_log_lines(_fill("pid=1 ", 60_000) + " SIGKILL")),
}
LEAKS: dict[str, str] = {}


@dataclass
class Measured:
    elapsed: float
    health: list[float]
    answered: bool
    stalls: list[float]

    @property
    def worst_health(self) -> float:
        """The longest a health check waited, or would have: the client shares the server's process, so a stall of
        the whole process (the GIL held by one long call) also delays the next check's send; a caller of another
        process would have waited out that gap."""
        return max([*self.health, *self.stalls], default=0.0)


async def _measure(api: Api, work: Callable[[], Awaitable[Any]]) -> Measured:
    health = health_pb2_grpc.HealthStub(api.channel)
    latencies: list[float] = []
    stalls: list[float] = []
    started = time.monotonic()
    task = asyncio.ensure_future(work())
    while not task.done():
        sent = time.monotonic()
        try:
            await health.Check(health_pb2.HealthCheckRequest(service=""), timeout=30)
        except grpc.aio.AioRpcError:
            latencies.append(float("inf"))
        else:
            latencies.append(time.monotonic() - sent)
        before = time.monotonic()
        await asyncio.sleep(0.05)
        stalls.append(time.monotonic() - before - 0.05)
    result = await task
    return Measured(time.monotonic() - started, latencies, bool(result), stalls)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bait_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Api]:
    folder = tmp_path_factory.mktemp("red-hangs")
    packs = folder / "packs"
    packs.mkdir()
    for name, build in BAIT_PACKS.items():
        (packs / f"{name}.json").write_text(json.dumps(dict(build(), name=name)), encoding="utf-8")
    with pytest.MonkeyPatch.context() as monkeypatch:
        support_settings.clean_environment(monkeypatch)
        async with api_servers(lambda _: folder / "api.db") as factory:
            yield await factory(provider=HEURISTIC, scenarios_dir=packs, log_level="warning")


async def _diagnose(api: Api, question: str, scenario: str) -> list[pb.DiagnoseResponse]:
    request = pb.DiagnoseRequest(question=question, context=pb.RequestContext(scenario=scenario))
    return [m async for m in api.diagnosis.Diagnose(request, timeout=120)]


async def run_bound(api: Api, elapsed: float, scenario: str = "") -> float:
    """The bound a run's time is held to: ``RUN_BOUND_S``, or, when the run took longer, four times what a plain
    run takes on this server now (a loaded machine slows every run alike; a backtracking expression costs many
    plain runs)."""
    if elapsed < RUN_BOUND_S:
        return RUN_BOUND_S
    started = time.monotonic()
    await _diagnose(api, "Why does cart-svc restart?", scenario)  # ("": the server's default scenario)
    return max(RUN_BOUND_S, 4 * (time.monotonic() - started))


@ASYNC
@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS.get(n, "")) for n in BAIT_PACKS])
async def test_a_run_over_a_crafted_output_ends_quickly_and_health_answers(bait_server: Api, name: str) -> None:
    question = "Why is search-indexer losing batches?" if name == "kernel-kill-lines" else "Why does cart-svc restart?"
    measured = await _measure(bait_server, lambda: _diagnose(bait_server, question, name))
    assert measured.answered, "the run answered"
    assert measured.worst_health < HEALTH_BOUND_S, f"a health check took {measured.worst_health:.2f} s"
    assert measured.elapsed < await run_bound(bait_server, measured.elapsed), f"the run took {measured.elapsed:.1f} s"


QUESTIONS = {
    "question-hashes": "Why is cart-svc down? " + "#" * 3970,
    "question-hyphen-chain": "Why is " + "a-" * 1990 + "?",
    "question-a-then-bang": "a" * 3999 + "!",
    "question-nested-quotes": "Why is cart-svc " + "\"'" * 1985,
    "question-namespace-words": "namespace " * 399,
    "question-instruction-words": "ignore all previous " * 199,
}


@ASYNC
@pytest.mark.parametrize("name", list(QUESTIONS))
async def test_a_crafted_question_ends_quickly_and_health_answers(bait_server: Api, name: str) -> None:
    measured = await _measure(
        bait_server, lambda: _diagnose(bait_server, QUESTIONS[name], "separators-100kb-annotation")
    )
    assert measured.worst_health < HEALTH_BOUND_S, f"a health check took {measured.worst_health:.2f} s"
    # (held to a plain question on the same pack)
    bound = await run_bound(bait_server, measured.elapsed, "separators-100kb-annotation")
    assert measured.elapsed < bound, f"the run took {measured.elapsed:.1f} s"


# ------------------------------------------------------------------ CheckEvidence on a crafted output


def _check_request(value: str) -> gatekeeper_service_pb2.CheckEvidenceRequest:
    invocation = contracts_pb2.ToolInvocation(
        invocation_id="inv-1",
        run_id="run-ext",
        tool_name="logs",
        output=to_value({"lines": ["upstream timeout after 3000ms " + value]}),
        status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
    )
    binding = {
        "source_invocation_ids": ["inv-1"],
        "tool_name": "logs",
        "raw_path": "/lines/0",
        "matched_text": "upstream timeout",
    }
    claim = {
        "claim_id": "c1",
        "statement": "upstream timed out",
        "critical": True,
        "status": "confirmed",
        "evidence_bindings": [binding],
    }
    request = gatekeeper_service_pb2.CheckEvidenceRequest(tool_invocations=[invocation])
    request.executor_output_text = json.dumps({"contract": "executor_evidence_v2", "claims": [claim]})
    return request


CHECKS = {
    "check-hash-run": "#" * HASHES,
    "check-hash-space-run": "## " * 30_000,
    "check-ignore-everything": _fill("ignore the previous and all other ", 100_000),
    "check-you-are": _fill("you are the ", 100_000),
    "check-brackets": _fill("[/inst", 100_000),
}
LEAKS_CHECK: dict[str, str] = {}


@ASYNC
@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS_CHECK.get(n, "")) for n in CHECKS])
async def test_check_evidence_on_a_crafted_value_ends_quickly_and_health_answers(bait_server: Api, name: str) -> None:
    request = _check_request(CHECKS[name])
    measured = await _measure(bait_server, lambda: bait_server.gatekeeper.CheckEvidence(request, timeout=120))
    assert measured.worst_health < HEALTH_BOUND_S, f"a health check took {measured.worst_health:.2f} s"
    assert measured.elapsed < await run_bound(bait_server, measured.elapsed), (
        f"CheckEvidence took {measured.elapsed:.1f} s"
    )


# ------------------------------------------------------------------ scripted runs: crafted statements and matched texts

STATEMENTS = {
    "statement-hashes": "#" * 2000,
    "statement-quotes": _fill("\"'`“”", 2000),
    "statement-colons": _fill("a:", 2000),
    "statement-numbers": _fill("1,2.3e4 ", 2000),
    "statement-clauses": _fill("roll, back; ", 2000),
    "statement-a-bang": "a" * 1999 + "!",
}


def test_crafted_statements_and_matched_texts_end_within_bounds() -> None:
    base = world.clean_claims()[0]
    cases = [
        world.case(f"hang-{n}", [dict(base, claim_id="c5", statement=s, critical=False)]) for n, s in STATEMENTS.items()
    ]
    logs = copy.deepcopy(world.LOGS)
    logs["output"]["lines"][1]["message"] = "retry budget exhausted " + _fill("a-b ", 100_000)
    invocations = [logs if i["invocation_id"] == logs["invocation_id"] else i for i in world.INVOCATIONS]
    matched = world.claim(
        "c5",
        "edge-gateway logs retry budget exhausted",
        world.bind(logs, "/lines/1/message", _fill("a-b ", 50_000)),
        critical=False,
    )
    cases.append(world.case("hang-matched-text", [matched], invocations=invocations))
    started = time.monotonic()
    outcomes = run_all(cases)
    elapsed = time.monotonic() - started
    assert elapsed < RUN_BOUND_S * 2, f"{len(cases)} runs took {elapsed:.1f} s"
    assert all(o.run.answer_text for o in outcomes.values())


def test_every_pinned_leak_names_a_vector() -> None:
    assert set(LEAKS) <= set(BAIT_PACKS)
    assert set(LEAKS_CHECK) <= set(CHECKS)
