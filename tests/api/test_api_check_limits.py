"""CheckEvidence is bounded per request and per tenant, and runs off the event loop (it used to have no
bound but the 4 MiB message: 3 MB cost 1.8 s of CPU, answered 17.6 MB, and 8 in parallel stalled Diagnose)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf import json_format, struct_pb2

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2
from diagnosis_server import evidence_check
from diagnosis_server.api.gatekeeper_servicer import GatekeeperServicer
from diagnosis_server.conversions import to_value
from diagnosis_server.limits import Limits
from tests.support.rpc import error_reason, field_violations, retry_delay_s

from .conftest import Api, ApiFactory


def _invocation(n: int, output: Any = None) -> contracts_pb2.ToolInvocation:
    value = to_value({"lines": ["ERROR upstream timeout"]})
    if output is not None:  # protobuf's own parser: it allows deeper values than the service takes
        value = json_format.ParseDict(output, struct_pb2.Value())
    return contracts_pb2.ToolInvocation(invocation_id=f"inv-{n}", run_id="run-1", tool_name="logs", output=value)


def _claims(count: int, *, bindings: int = 1, ids: int = 1, text: str = "upstream timeout") -> str:
    claims = [
        {
            "claim_id": f"c{n}",
            "statement": "upstream timed out",
            "critical": False,
            "status": "confirmed",
            "evidence_bindings": [
                {
                    "source_invocation_ids": [f"inv-{i}" for i in range(ids)],
                    "tool_name": "logs",
                    "raw_path": "/lines/0",
                    "matched_text": text,
                }
                for _ in range(bindings)
            ],
        }
        for n in range(count)
    ]
    return json.dumps({"contract": "executor_evidence_v2", "claims": claims})


def _request(text: str, invocations: int = 1) -> gatekeeper_service_pb2.CheckEvidenceRequest:
    return gatekeeper_service_pb2.CheckEvidenceRequest(
        tool_invocations=[_invocation(n) for n in range(invocations)], executor_output_text=text
    )


async def _refused(api: Api, request: gatekeeper_service_pb2.CheckEvidenceRequest) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.gatekeeper.CheckEvidence(request)
    return caught.value


@pytest.mark.parametrize(
    ("request_", "field", "words"),
    [
        (_request(_claims(1), invocations=257), "tool_invocations", "over the limit of 256"),
        (_request(_claims(257)), "executor_output", "257 claims, over the limit of 256"),
        (_request(_claims(100, bindings=11)), "executor_output", "1100 evidence bindings, over the limit of 1024"),
        (_request(_claims(200, ids=11), invocations=11), "executor_output", "source invocation ids, over the limit"),
    ],
    ids=["invocations", "claims", "bindings", "source-ids"],
)
async def test_counts_over_the_limits_are_invalid_argument_naming_the_limit(
    api: Api, request_: gatekeeper_service_pb2.CheckEvidenceRequest, field: str, words: str
) -> None:
    error = await _refused(api, request_)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    violations = field_violations(error)
    assert violations[0][0] == field and words in violations[0][1]


async def test_at_the_limits_the_check_runs(api: Api) -> None:
    reply = await api.gatekeeper.CheckEvidence(_request(_claims(256), invocations=256))
    assert len(reply.gatekeeper_result.checked_bindings) == 256


async def test_a_tool_output_nested_too_deep_is_refused_first(api: Api) -> None:
    deep: Any = "x"
    for _ in range(33):
        deep = [deep]
    request = gatekeeper_service_pb2.CheckEvidenceRequest(
        tool_invocations=[_invocation(0), _invocation(1, deep)], executor_output_text=_claims(1)
    )
    error = await _refused(api, request)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field_violations(error)[0] == ("tool_invocations[1].output", "nested deeper than 32")


def test_a_response_over_its_bound_is_refused() -> None:
    request = _request(_claims(50, text="upstream timeout"))
    with pytest.raises(evidence_check.CheckInputError, match=r"the response would be .* bytes, over the limit of 2000"):
        evidence_check.check_evidence(request, Limits(check_max_response_bytes=2000))
    assert evidence_check.check_evidence(request).ByteSize() > 2000  # the default bound takes it


async def test_a_tenant_gets_at_most_its_share_of_concurrent_checks(
    api_factory: ApiFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    entered = threading.Semaphore(0)
    real = evidence_check.check_evidence

    def slow(request: Any, limits: Any) -> Any:
        entered.release()
        release.wait(10)
        return real(request, limits)

    monkeypatch.setattr("diagnosis_server.api.gatekeeper_servicer.check_evidence", slow)
    api = await api_factory(max_concurrent_checks_per_tenant=2)
    running = [asyncio.ensure_future(api.gatekeeper.CheckEvidence(_request(_claims(1)))) for _ in range(2)]
    for _ in range(2):
        await asyncio.to_thread(entered.acquire, True, 10)
    error = await _refused(api, _request(_claims(1)))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error_reason(error) == "TOO_MANY_CHECKS"
    assert retry_delay_s(error) > 0
    # The event loop is free while checks run: other calls are answered at once.
    started = time.monotonic()
    await api.diagnose()
    assert time.monotonic() - started < 5
    release.set()
    replies = await asyncio.gather(*running)
    assert all(r.parse_status == contracts_pb2.PARSE_STATUS_OK for r in replies)
    await api.gatekeeper.CheckEvidence(_request(_claims(1)))  # the slots are free again


def test_the_check_pool_is_its_own() -> None:
    servicer = GatekeeperServicer(threads=1)
    try:
        assert servicer._pool._max_workers == 1
    finally:
        servicer.close()
