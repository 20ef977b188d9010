"""Round 3, class 4: new crafted long texts end a run or a call within bounds, and health answers meanwhile.

Why: every expression that reads untrusted text must match in linear time, and a run's CPU work must neither stall
the server nor exceed its bound. The texts (none used by an earlier suite): 100 KB of nested parentheses, "pid="
without digits, runs of "=", of backslashes, of "Bearer ", of PEM openings, of JWT-like dots, of ANSI escapes,
alternating letters and digits of other scripts, a 100 KB JSON key, deep JSON nesting, a duration key before a run
of spaces, 20 000 short error lines; in log lines, events, annotations, labels, questions, claim statements,
CheckEvidence inputs and the query of a pack's Prometheus or Loki tool. The bounds and the measuring are
``test_hangs.py``'s.
"""

from __future__ import annotations

import asyncio
import copy
import json
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.conversions import JsonObject, to_value
from diagnosis_server.tools.scenario import load_user_scenarios
from tests.attacks import world
from tests.attacks.harness import run_all
from tests.sources.helpers import call
from tests.support import settings as support_settings
from tests.support.api import HEURISTIC, Api, api_servers

from .common import Pack, load_pack, vector
from .test_hangs import HEALTH_BOUND_S, RUN_BOUND_S, _measure, run_bound

ASYNC = pytest.mark.asyncio(loop_scope="module")
# Lines of "took" and a run of spaces, each as long as a line is read (4 KB): the slow-call expression's
# "\s*[=: ]\s*" splits the run in every way before it finds no number.
DURATION_LINES = 24


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _cart(mutate: Callable[[Pack], None]) -> Pack:
    pack = load_pack("cart-pods-restarting")
    mutate(pack)
    return pack


def _log_lines(*lines: str) -> Callable[[Pack], None]:
    def mutate(pack: Pack) -> None:
        pack["kubernetes"]["pod_logs"][0]["lines"].extend(lines)

    return mutate


def _backoff_message(tail: str) -> Callable[[Pack], None]:
    def mutate(pack: Pack) -> None:
        for event in pack["kubernetes"]["events"]:
            if event["reason"] == "BackOff":
                event["message"] += " " + tail

    return mutate


def _annotation(key: str, value: str) -> Callable[[Pack], None]:
    def mutate(pack: Pack) -> None:
        pack["kubernetes"]["pods"][0]["metadata"].setdefault("annotations", {})[key] = value

    return mutate


def _label(value: str) -> Callable[[Pack], None]:
    def mutate(pack: Pack) -> None:
        pack["kubernetes"]["pods"][0]["metadata"]["labels"]["ops.example/bait"] = value

    return mutate


_ERROR_LINES = [
    json.dumps({"level": "error", "msg": f"dial tcp 10.0.{i // 250}.{i % 250}:6379: connect: connection refused"})
    for i in range(20_000)
]

BAIT_PACKS: dict[str, Callable[[], Pack]] = {
    "nested-parentheses-100kb-log-line": lambda: _cart(_log_lines("(" * 50_000 + ")" * 50_000)),
    "pid-without-digits-100kb-event": lambda: _cart(_backoff_message(_fill("pid= ", 100_000) + " SIGKILL")),
    "equals-run-100kb-annotation": lambda: _cart(_annotation("ops.example/bait", "=" * 100_000)),
    "backslash-run-unterminated-json-line": lambda: _cart(_log_lines('{"msg": "' + "\\" * 100_001)),
    "alternating-letters-digits-other-scripts": lambda: _cart(_log_lines(_fill("ж7é٣ß9", 100_000))),
    "json-key-100kb-log-line": lambda: _cart(
        _log_lines(json.dumps({"k" * 100_000: "v", "level": "error", "msg": "boom"}))
    ),
    "annotation-key-60kb": lambda: _cart(_annotation("a" * 60_000, "v")),
    "deep-json-nesting-log-line": lambda: _cart(_log_lines("[" * 50_000 + "]" * 50_000, '{"a":' * 20_000 + "1")),
    "userinfo-colon-at-run-log-line": lambda: _cart(_log_lines("x://" + _fill("a:@", 100_000))),
    "bearer-run-event": lambda: _cart(_backoff_message(_fill("Bearer ", 100_000))),
    "pem-openings-run-log-line": lambda: _cart(_log_lines(_fill("-----BEGIN PRIVATE KEY-----", 100_000))),
    "jwt-dots-run-log-line": lambda: _cart(_log_lines(_fill("eyJab.", 100_000))),
    "ansi-escape-run-event": lambda: _cart(_backoff_message(_fill("\x1b[", 100_000))),
    "hyphenated-label-value-60kb": lambda: _cart(_label(_fill("a-", 60_000) + "a")),
    "twenty-thousand-error-lines": lambda: _cart(_log_lines(*_ERROR_LINES)),
    "duration-key-then-spaces-log-lines": lambda: _cart(
        _log_lines(*(f"{i} took" + " " * 4090 + "x" for i in range(DURATION_LINES)))
    ),
}
LEAKS: dict[str, str] = {}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bait_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Api]:
    folder = tmp_path_factory.mktemp("r3-hangs")
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


@ASYNC
@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS.get(n, "")) for n in BAIT_PACKS])
async def test_a_run_over_a_new_crafted_output_ends_quickly_and_health_answers(bait_server: Api, name: str) -> None:
    measured = await _measure(bait_server, lambda: _diagnose(bait_server, "Why does cart-svc restart?", name))
    assert measured.answered, "the run answered"
    assert measured.worst_health < HEALTH_BOUND_S, f"a health check took {measured.worst_health:.2f} s"
    assert measured.elapsed < await run_bound(bait_server, measured.elapsed), f"the run took {measured.elapsed:.1f} s"


QUESTIONS = {
    "question-nested-parentheses": "Why " + "(" * 1990 + ")" * 1990,
    "question-equals-run": "Why is cart-svc down " + "=" * 3970,
    "question-alternating-letters-digits": _fill("ж7", 3990) + "?",
    "question-duration-key-then-spaces": "took" + " " * 3990 + "x?",
}


@ASYNC
@pytest.mark.parametrize("name", list(QUESTIONS))
async def test_a_new_crafted_question_ends_quickly_and_health_answers(bait_server: Api, name: str) -> None:
    measured = await _measure(
        bait_server, lambda: _diagnose(bait_server, QUESTIONS[name], "equals-run-100kb-annotation")
    )
    assert measured.worst_health < HEALTH_BOUND_S, f"a health check took {measured.worst_health:.2f} s"
    # (held to a plain question on the same pack)
    bound = await run_bound(bait_server, measured.elapsed, "equals-run-100kb-annotation")
    assert measured.elapsed < bound, f"the run took {measured.elapsed:.1f} s"


# ------------------------------------------------------------------ CheckEvidence on a crafted output


def _check_request(value: str, *, key: str = "lines", matched: str = "upstream timeout") -> (
    gatekeeper_service_pb2.CheckEvidenceRequest
):  # fmt: skip
    invocation = contracts_pb2.ToolInvocation(
        invocation_id="inv-1",
        run_id="run-ext",
        tool_name="logs",
        output=to_value({key: ["upstream timeout after 3000ms " + value]}),
        status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
    )
    pointer = "/" + key.replace("~", "~0").replace("/", "~1") + "/0"
    binding = {"source_invocation_ids": ["inv-1"], "tool_name": "logs", "raw_path": pointer, "matched_text": matched}
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


_PARENS = "(" * 50_000 + ")" * 50_000
CHECKS = {
    "check-nested-parentheses": _check_request(_PARENS),
    "check-equals-run": _check_request("=" * 100_000),
    "check-backslash-run": _check_request("\\" * 100_000),
    "check-alternating-letters-digits": _check_request(_fill("ж7", 100_000)),
    "check-password-pairs": _check_request(_fill("password=", 100_000)),
    "check-userinfo-colon-at-run": _check_request("x://" + _fill("a:@", 100_000)),
    "check-key-100kb": _check_request("x", key="k" * 100_000),
    "check-matched-text-50kb-parentheses": _check_request(_PARENS, matched="(" * 50_000),
}
LEAKS_CHECK: dict[str, str] = {}


@ASYNC
@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS_CHECK.get(n, "")) for n in CHECKS])
async def test_check_evidence_on_a_new_crafted_value_ends_quickly_and_health_answers(
    bait_server: Api, name: str
) -> None:
    request = CHECKS[name]
    measured = await _measure(bait_server, lambda: bait_server.gatekeeper.CheckEvidence(request, timeout=120))
    assert measured.worst_health < HEALTH_BOUND_S, f"a health check took {measured.worst_health:.2f} s"
    assert measured.elapsed < await run_bound(bait_server, measured.elapsed), (
        f"CheckEvidence took {measured.elapsed:.1f} s"
    )


# ------------------------------------------------------------------ a pack tool called with a crafted query

# The query an agent passes to a pack's Prometheus or Loki tool (an Executor moved by a hostile output, or the
# ``tools call`` command): the tool runner calls the tool on the event loop.
TOOL_CALLS: dict[str, tuple[str, JsonObject]] = {
    "promql-name-then-spaces": ("prometheus.query", {"query": "up" + " " * 25_000 + "x"}),
    "promql-range-name-then-tabs": (
        "prometheus.query_range",
        {"query": "up" + "\t" * 25_000 + "x", "start": "2025-11-20T06:00:00Z", "end": "2025-11-20T06:30:00Z"},
    ),
    "logql-spaces-before-a-filter": ("loki.query_range", {"query": '{app="catalog-web"}' + " " * 25_000 + "x"}),
    "logql-many-filters": ("loki.query_range", {"query": '{app="catalog-web"}' + ' |= "a"' * 5_000}),
}
LEAKS_TOOL: dict[str, str] = {}


async def _timed_tool_call(tool: str, arguments: JsonObject) -> tuple[float, float]:
    """The call's duration and the longest the event loop was held meanwhile (a ticker every 50 ms)."""
    with tempfile.TemporaryDirectory(prefix="r3-tool-") as folder:
        packs = Path(folder)
        (packs / "catalog.json").write_text(
            json.dumps(dict(load_pack("catalog-mysql-refused"), name="catalog")), encoding="utf-8"
        )
        (packs / "payments.json").write_text(
            json.dumps(dict(load_pack("healthy-payments-metrics"), name="payments")), encoding="utf-8"
        )
        tools_for = pack_tools_for(load_user_scenarios(packs))
        toolset = tools_for("catalog" if tool.startswith("loki") else "payments").toolset
        stalls: list[float] = []

        async def ticker() -> None:
            while True:
                before = time.monotonic()
                await asyncio.sleep(0.05)
                stalls.append(time.monotonic() - before - 0.05)

        ticking = asyncio.ensure_future(ticker())
        await asyncio.sleep(0.06)
        started = time.monotonic()
        await call(toolset, tool, arguments, timeout_s=RUN_BOUND_S)
        elapsed = time.monotonic() - started
        await asyncio.sleep(0.06)
        ticking.cancel()
        return elapsed, max(stalls, default=0.0)


@pytest.mark.parametrize("name", [vector(n, n, leak=LEAKS_TOOL.get(n, "")) for n in TOOL_CALLS])
def test_a_pack_tool_called_with_a_crafted_query_ends_quickly_and_frees_the_loop(name: str) -> None:
    tool, arguments = TOOL_CALLS[name]
    elapsed, stall = asyncio.run(_timed_tool_call(tool, arguments))
    assert stall < HEALTH_BOUND_S, f"the event loop was held {stall:.2f} s"
    assert elapsed < RUN_BOUND_S, f"the call took {elapsed:.1f} s"


# ------------------------------------------------------------------ scripted runs: crafted statements and matched texts

STATEMENTS = {
    "statement-nested-parentheses": "(" * 1000 + ")" * 1000,
    "statement-equals": "=" * 2000,
    "statement-backslashes": "\\" * 2000,
    "statement-alternating-letters-digits": _fill("ж7", 2000),
    "statement-pid-without-digits": _fill("pid= ", 2000),
    "statement-one-letter-words": _fill("a ", 2000),
    "statement-unterminated-quote": '"' + "a" * 1999,
    "statement-many-short-quotes": _fill('"ab" ', 2000),
    "statement-duration-key-then-spaces": "took" + " " * 1996,
}


def test_new_crafted_statements_and_matched_texts_end_within_bounds() -> None:
    base = world.clean_claims()[0]
    cases = [
        world.case(f"r3-hang-{n}", [dict(base, claim_id="c5", statement=s, critical=False)])
        for n, s in STATEMENTS.items()
    ]
    logs = copy.deepcopy(world.LOGS)
    logs["output"]["lines"][1]["message"] = "retry budget exhausted " + _PARENS
    invocations = [logs if i["invocation_id"] == logs["invocation_id"] else i for i in world.INVOCATIONS]
    matched = world.claim(
        "c5",
        "edge-gateway logs retry budget exhausted",
        world.bind(logs, "/lines/1/message", "(" * 50_000),
        critical=False,
    )
    cases.append(world.case("r3-hang-matched-parentheses", [matched], invocations=invocations))
    started = time.monotonic()
    outcomes = run_all(cases)
    elapsed = time.monotonic() - started
    assert elapsed < RUN_BOUND_S * 2, f"{len(cases)} runs took {elapsed:.1f} s"
    assert all(o.run.answer_text for o in outcomes.values())


def test_every_pinned_leak_names_a_vector() -> None:
    assert set(LEAKS) <= set(BAIT_PACKS)
    assert set(LEAKS_CHECK) <= set(CHECKS)
    assert set(LEAKS_TOOL) <= set(TOOL_CALLS)
