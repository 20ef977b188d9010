"""Bad input over gRPC, for every RPC: a clear INVALID_ARGUMENT (BadRequest naming the field) or
NOT_FOUND, RESOURCE_EXHAUSTED over the size limit, and the store exactly as it was (R-T-2)."""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import gatekeeper_service_pb2 as gpb
from diagnosis_server.api.errors import MAX_TEXT_BYTES, clip, invalid_argument
from tests.support.bad_input import BAD_DIAGNOSE_INPUTS
from tests.support.fakes import PassProvider
from tests.support.rpc import collect, error_reason, next_message, raw_unary_stream, raw_unary_unary, violation_fields

from .conftest import Api, ApiFactory
from .helpers import store_snapshot

Call = Callable[[], Awaitable[Any]]
EXECUTOR_OUTPUT = json.dumps({"contract": "executor_evidence_v2", "claims": []})
UNKNOWN_RUN = "run-" + "0" * 32
BAD_RUN_IDS = {
    "empty": "",
    "space": "run 1",
    "slash": "run/../1",
    "newline": "run-1\n",
    "nul": "run-\x00",
    "non-ascii": "run-é",
    "quote": "run-'1'",
    "too-long": "r" * 129,
    "huge": "r" * 200_000,
}


async def _finished_run(api: Api) -> run_pb2.DiagnosisRun:
    run: run_pb2.DiagnosisRun = (await api.diagnose())[-1].run
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    return run


async def _expect_invalid(call: Call, field: str, case: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call()
    error = caught.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (case, error.code(), error.details())
    assert violation_fields(error) == [field], case
    assert (error.details() or "").startswith(f"{field}: "), case
    # Whatever the caller sent, the status fits the trailers whole (details decoded above).
    assert len((error.details() or "").encode()) <= MAX_TEXT_BYTES, case


def _diagnose(api: Api, question: str, scenario: str = "") -> Call:
    request = pb.DiagnoseRequest(question=question, context=pb.RequestContext(scenario=scenario))
    return lambda: collect(api.diagnosis.Diagnose(request))


def _watch(api: Api, run_id: str, after: int = 0) -> Call:
    return lambda: collect(api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run_id, after_sequence=after)))


@pytest.mark.requirement("R-T-2")
@pytest.mark.parametrize(("question", "scenario", "field"), BAD_DIAGNOSE_INPUTS)
async def test_bad_diagnose_input_names_the_field_and_stores_nothing(
    api: Api, question: str, scenario: str, field: str
) -> None:
    """An oversized value is refused without being echoed whole: the details still reach the caller."""
    await _finished_run(api)
    before = store_snapshot(api.database)
    await _expect_invalid(_diagnose(api, question, scenario), field, field)
    assert store_snapshot(api.database) == before
    assert api.running.runs.active_run_ids == []


async def test_bad_run_ids_are_invalid_argument_for_get_and_watch(api: Api) -> None:
    await _finished_run(api)
    before = store_snapshot(api.database)
    for case, run_id in BAD_RUN_IDS.items():
        await _expect_invalid(functools.partial(api.diagnosis.GetRun, pb.GetRunRequest(run_id=run_id)), "run_id", case)
        await _expect_invalid(_watch(api, run_id), "run_id", case)
        assert api.running.hub.subscriber_count(run_id) == 0, case
    assert store_snapshot(api.database) == before


async def test_a_well_formed_unknown_run_id_is_not_found(api: Api) -> None:
    for call in (lambda: api.diagnosis.GetRun(pb.GetRunRequest(run_id=UNKNOWN_RUN)), _watch(api, UNKNOWN_RUN)):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call()
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
        assert error_reason(caught.value) == "RUN_NOT_FOUND"
    assert await api.running.repository.count_runs() == 0


async def test_watch_after_sequence_must_not_be_negative(api: Api) -> None:
    run = await _finished_run(api)
    before = store_snapshot(api.database)
    for after in (-1, -(2**63)):
        await _expect_invalid(_watch(api, run.run_id, after), "after_sequence", str(after))
    assert store_snapshot(api.database) == before


@pytest.mark.parametrize("after", [6, 7, 1000, 2**63 - 1])
async def test_watch_after_the_last_sequence_replays_nothing_and_ends(api: Api, after: int) -> None:
    """A finished run watched from at or beyond its last event: no event, then ``ended`` with the real last
    sequence (never the caller's number), so a client can tell where the run actually stopped."""
    run = await _finished_run(api)
    messages = await _watch(api, run.run_id, after)()
    assert [m.WhichOneof("kind") for m in messages] == ["ended"]
    assert messages[0].ended.status == run_pb2.RUN_STATUS_SUCCESS
    assert messages[0].ended.last_sequence == run.orchestration_trace.event_count == 6


async def test_watch_of_a_live_run_after_a_huge_sequence_follows_it_to_its_end(api_factory: ApiFactory) -> None:
    """On a running run, a number above any event skips every event, live ones too, and still ends with it."""
    gate = asyncio.Event()
    provider = PassProvider(gate=gate)
    api = await api_factory(provider=provider)
    diagnose = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    run_id = (await next_message(diagnose)).run_id
    await provider.entered.acquire()
    watch = asyncio.ensure_future(_watch(api, run_id, 2**63 - 1)())
    await asyncio.sleep(0.05)
    assert not watch.done()  # it follows the run: it does not end before the run does
    gate.set()
    messages = await asyncio.wait_for(watch, timeout=10)
    assert [m.WhichOneof("kind") for m in messages] == ["ended"]
    assert messages[0].ended.status == run_pb2.RUN_STATUS_SUCCESS
    assert messages[0].ended.last_sequence == 6


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (pb.ListRunsRequest(status=99), "status"),  # type: ignore[arg-type]
        (pb.ListRunsRequest(status=-1), "status"),  # type: ignore[arg-type]
        (pb.ListRunsRequest(status=2**31 - 1), "status"),  # type: ignore[arg-type]
        (pb.ListRunsRequest(verdict=99), "verdict"),  # type: ignore[arg-type]
        (pb.ListRunsRequest(verdict=-(2**31)), "verdict"),  # type: ignore[arg-type]
        (pb.ListRunsRequest(page_size=-1), "page_size"),
        (pb.ListRunsRequest(page_size=-(2**31)), "page_size"),
    ],
    ids=["status-99", "status-neg", "status-max", "verdict-99", "verdict-min", "size-neg", "size-min"],
)
async def test_unknown_enum_numbers_and_bad_sizes_in_list_runs(
    api: Api, request_: pb.ListRunsRequest, field: str
) -> None:
    """Filters sent as raw numbers no enum value has are refused, never read as "any" (fail closed)."""
    await _finished_run(api)
    before = store_snapshot(api.database)
    await _expect_invalid(lambda: api.diagnosis.ListRuns(request_), field, field)
    assert store_snapshot(api.database) == before


async def test_a_huge_page_size_is_capped_not_refused(api: Api) -> None:
    run = await _finished_run(api)
    page = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=2**31 - 1))
    assert [r.run_id for r in page.runs] == [run.run_id]


def _forged(document: dict[str, Any]) -> str:
    """A token with a correct checksum around ``document`` (the checksum is no secret)."""
    body = json.dumps(document, separators=(",", ":"), sort_keys=True)
    envelope = json.dumps({"b": body, "h": hashlib.sha256(body.encode()).hexdigest()[:16]})
    return base64.urlsafe_b64encode(envelope.encode()).decode().rstrip("=")


def _tampered(token: str) -> str:
    raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    raw[len(raw) // 2] ^= 0x01
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


async def test_bad_page_tokens_are_invalid_argument(api: Api) -> None:
    for _ in range(3):
        await _finished_run(api)
    first = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=1))
    token = first.next_page_token
    assert token
    good = {"v": 1, "c": 1, "r": "run-x", "t": "default", "s": 0, "d": 0}
    cases = {
        "garbage": "!!not a token!!",
        "non-ascii": "tökén",
        "truncated": token[: len(token) // 2],
        "tampered": _tampered(token),
        "oversized": "A" * 100_000,
        "nested": base64.urlsafe_b64encode(("[" * 760 + "]" * 760).encode()).decode(),
        "other-filter": token,  # sent below with a status filter it was not made for
        "other-tenant": _forged(good | {"t": "globex"}),
        "any-tenant": _forged(good | {"t": None}),
        "wrong-version": _forged(good | {"v": 2}),
        "bool-position": _forged(good | {"c": True}),
        "string-position": _forged(good | {"c": "1"}),
        "overflowing-position": _forged(good | {"c": 10**30}),
        "negative-overflow": _forged(good | {"c": -(10**30)}),
    }
    before = store_snapshot(api.database)
    for case, page_token in cases.items():
        status = run_pb2.RUN_STATUS_SUCCESS if case == "other-filter" else run_pb2.RUN_STATUS_UNSPECIFIED
        request = pb.ListRunsRequest(page_size=1, page_token=page_token, status=status)
        await _expect_invalid(functools.partial(api.diagnosis.ListRuns, request), "page_token", case)
    assert store_snapshot(api.database) == before
    # The real token still works, and only with its own filters.
    second = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=1, page_token=token))
    assert [r.run_id for r in second.runs] != [r.run_id for r in first.runs]


async def test_a_forged_token_of_the_callers_own_tenant_only_moves_within_its_runs(api: Api) -> None:
    """The checksum catches accidents, not forgers: a forged position is harmless since the tenant and
    filters of the listing come from the call, never from the token."""
    run = await _finished_run(api)
    far_future = 221_845_392_000_000_000  # 9000-01-01 in microseconds since the epoch
    page = await api.diagnosis.ListRuns(
        pb.ListRunsRequest(page_token=_forged({"v": 1, "c": far_future, "r": "~", "t": "default", "s": 0, "d": 0}))
    )
    assert [r.run_id for r in page.runs] == [run.run_id]


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (gpb.CheckEvidenceRequest(), "executor_output"),
        (gpb.CheckEvidenceRequest(run_id="run 1", executor_output_text=EXECUTOR_OUTPUT), "run_id"),
        (gpb.CheckEvidenceRequest(run_id="r" * 129, executor_output_text=EXECUTOR_OUTPUT), "run_id"),
        (gpb.CheckEvidenceRequest(run_id="r" * 100_000, executor_output_text=EXECUTOR_OUTPUT), "run_id"),
        (
            gpb.CheckEvidenceRequest(
                executor_output_text=EXECUTOR_OUTPUT,
                tool_invocations=[contracts_pb2.ToolInvocation(invocation_id="i1", run_id="run/../x")],
            ),
            "tool_invocations[0].run_id",
        ),
        (
            gpb.CheckEvidenceRequest(
                executor_output_text=EXECUTOR_OUTPUT, tool_invocations=[contracts_pb2.ToolInvocation(invocation_id="")]
            ),
            "tool_invocations[0].invocation_id",
        ),
        (
            gpb.CheckEvidenceRequest(
                executor_output_text=EXECUTOR_OUTPUT,
                tool_invocations=[contracts_pb2.ToolInvocation(invocation_id="i" * 100_000)] * 2,
            ),
            "tool_invocations[1].invocation_id",
        ),
    ],
    ids=[
        "no-output",
        "run-id-space",
        "run-id-long",
        "run-id-huge",
        "invocation-run-id",
        "empty-invocation",
        "dup-huge",
    ],
)
async def test_bad_check_evidence_input_names_the_field(
    api: Api, request_: gpb.CheckEvidenceRequest, field: str
) -> None:
    await _expect_invalid(lambda: api.gatekeeper.CheckEvidence(request_), field, field)
    assert await api.running.repository.count_runs() == 0


@pytest.mark.requirement("R-C-1")
@pytest.mark.parametrize(
    "text", ["", "\x00" * 1000, "[" * 100_000, '{"contract": "executor_evidence_v2", "claims": "x"}', "é" * 200_000]
)
async def test_unparseable_executor_output_is_a_parse_status_not_an_error(api: Api, text: str) -> None:
    """Garbage in the executor output is the caller's data, reported as INVALID_OUTPUT with no ceiling."""
    response = await api.gatekeeper.CheckEvidence(gpb.CheckEvidenceRequest(executor_output_text=text))
    assert response.parse_status == contracts_pb2.PARSE_STATUS_INVALID_OUTPUT
    assert response.parse_error
    assert not response.HasField("gatekeeper_result")
    assert response.verdict_ceiling == contracts_pb2.VERDICT_UNSPECIFIED


def _raw(api: Api, path: str, streaming: bool, data: bytes) -> Awaitable[Any]:
    """Sends ``data`` as the request bytes of the method at ``path`` (no client-side serialization)."""
    if streaming:
        return collect(raw_unary_stream(api.channel, path)(data))
    return raw_unary_unary(api.channel, path)(data)


DIAGNOSE = "/diagnosis.v1.DiagnosisService/Diagnose"
GET_RUN = "/diagnosis.v1.DiagnosisService/GetRun"
LIST_RUNS = "/diagnosis.v1.DiagnosisService/ListRuns"
WATCH_RUN = "/diagnosis.v1.DiagnosisService/WatchRun"
LIST_SCENARIOS = "/diagnosis.v1.DiagnosisService/ListScenarios"
CHECK_EVIDENCE = "/diagnosis.v1.GatekeeperService/CheckEvidence"

# Each RPC with a request that encodes to more than the server's limit (1 KiB in these tests).
OVERSIZED: dict[str, tuple[str, bool, bytes]] = {
    "Diagnose": (DIAGNOSE, True, pb.DiagnoseRequest(question="x" * 2048).SerializeToString()),
    "GetRun": (GET_RUN, False, pb.GetRunRequest(run_id="r" * 2048).SerializeToString()),
    "ListRuns": (LIST_RUNS, False, pb.ListRunsRequest(page_token="t" * 2048).SerializeToString()),
    "WatchRun": (WATCH_RUN, True, pb.WatchRunRequest(run_id="r" * 2048).SerializeToString()),
    # No fields at all: an unknown field (number 1000, length-delimited) carries the bulk.
    "ListScenarios": (LIST_SCENARIOS, False, b"\xc2\x3e\x80\x10" + b"u" * 2048),
    "CheckEvidence": (
        CHECK_EVIDENCE,
        False,
        gpb.CheckEvidenceRequest(executor_output_text="x" * 2048).SerializeToString(),
    ),
}


async def test_every_rpc_refuses_a_message_over_the_size_limit(api_factory: ApiFactory) -> None:
    api = await api_factory(max_message_bytes=1024)
    await _finished_run(api)
    before = store_snapshot(api.database)
    for name, (path, streaming, data) in OVERSIZED.items():
        assert len(data) > 1024
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _raw(api, path, streaming, data)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, (name, caught.value.details())
    assert store_snapshot(api.database) == before
    # The same server still serves requests under the limit.
    assert (await api.diagnosis.ListScenarios(pb.ListScenariosRequest())).scenarios


# Bytes no request message decodes from, and the tag of a string field of each method's request
# (for a string that is not UTF-8); ListScenariosRequest has no field at all.
CORRUPT = {"truncated-length": b"\x0a\x10ab", "unterminated-varint": b"\x08\xff\xff\xff"}
METHODS: dict[str, tuple[str, bool, bytes]] = {
    "Diagnose": (DIAGNOSE, True, b"\x0a"),
    "GetRun": (GET_RUN, False, b"\x0a"),
    "ListRuns": (LIST_RUNS, False, b"\x12"),
    "WatchRun": (WATCH_RUN, True, b"\x0a"),
    "ListScenarios": (LIST_SCENARIOS, False, b""),
    "CheckEvidence": (CHECK_EVIDENCE, False, b"\x0a"),
}


async def test_bytes_that_do_not_decode_are_invalid_argument_not_unknown(api: Api) -> None:
    """A corrupt request is the caller's error, with BadRequest details, and no internal exception text."""
    await _finished_run(api)
    before = store_snapshot(api.database)
    for name, (path, streaming, string_tag) in METHODS.items():
        cases = dict(CORRUPT) | ({"string-not-utf8": string_tag + b"\x02\xff\xfe"} if string_tag else {})
        for case, data in cases.items():
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await _raw(api, path, streaming, data)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (name, case, caught.value.details())
            assert violation_fields(caught.value) == ["request"], (name, case)
            assert "DecodeError" not in (caught.value.details() or "")
    assert store_snapshot(api.database) == before


@pytest.mark.parametrize("text", ["x" * 5000, "é" * 5000, "€" * 5000, "a" + "😀" * 2000])
def test_error_texts_are_clipped_to_whole_characters_within_the_trailer_budget(text: str) -> None:
    clipped = clip(text)
    assert len(clipped.encode()) <= MAX_TEXT_BYTES
    assert clipped.endswith("...") and text.startswith(clipped[:-3])
    assert clip("short") == "short"
    error = invalid_argument("question", text)
    assert len(error.message.encode()) <= MAX_TEXT_BYTES
    # On the wire: the details base64-encoded, the message percent-encoded (at worst 3 bytes a byte); both
    # fit the default client's soft metadata limit (8 KiB) with room for the rest of the trailers.
    details = dict(error.to_status().trailing_metadata)["grpc-status-details-bin"]
    assert len(details) * 4 / 3 + 3 * len(error.message.encode()) < 7 * 1024
