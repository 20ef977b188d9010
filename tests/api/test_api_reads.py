"""GetRun, ListRuns (AIP-158), ListScenarios and CheckEvidence over the wire (R-T-2 API controller)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import grpc
import grpc.aio
import pytest

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.conversions import to_value
from diagnosis_server.store import RunStore
from tests.support.rpc import error_reason, field_violations

from .conftest import Api, ApiFactory


async def _store_runs(
    repository: RunStore,
    count: int,
    *,
    tenant: str = "default",
    status: run_pb2.RunStatus.ValueType = run_pb2.RUN_STATUS_UNSPECIFIED,
    verdict: contracts_pb2.Verdict.ValueType = contracts_pb2.VERDICT_UNSPECIFIED,
    start: int = 0,
) -> list[str]:
    """``count`` finished runs, created one second apart (newest last); their ids."""
    ids: list[str] = []
    for n in range(start, start + count):
        run = run_pb2.DiagnosisRun(run_id=f"run-{n:032x}", tenant=tenant, question=f"q{n}", scenario="checkout-oom")
        run.created_at.FromSeconds(1_700_000_000 + n)
        await repository.create_run(run)
        run.status = status or run_pb2.RUN_STATUS_SUCCESS
        run.verdict = verdict
        await repository.finish_run(run)
        ids.append(run.run_id)
    return ids


async def test_get_run_returns_the_stored_run(api: Api) -> None:
    run = (await api.diagnose())[-1].run
    response = await api.diagnosis.GetRun(pb.GetRunRequest(run_id=run.run_id))
    assert response.run == run


@pytest.mark.parametrize("run_id", ["run-" + "0" * 32, "job:2026-01-01.batch_7-a"])
async def test_get_run_of_an_unknown_id_is_not_found_naming_it(api: Api, run_id: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnosis.GetRun(pb.GetRunRequest(run_id=run_id))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert run_id in (caught.value.details() or "")
    assert error_reason(caught.value) == "RUN_NOT_FOUND"


@pytest.mark.parametrize("run_id", ["", "has space", "a/b", "x" * 129, "run-é"])
async def test_get_run_of_a_malformed_id_is_invalid_argument(api: Api, run_id: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnosis.GetRun(pb.GetRunRequest(run_id=run_id))
    assert [f for f, _ in field_violations(caught.value)] == ["run_id"]


async def test_list_runs_pages_newest_first_across_pages(api: Api) -> None:
    ids = await _store_runs(api.running.repository, 25)
    first = await api.diagnosis.ListRuns(pb.ListRunsRequest())
    assert len(first.runs) == 20  # page_size 0 means 20
    assert first.next_page_token
    second = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_token=first.next_page_token))
    assert second.next_page_token == ""
    listed = [r.run_id for r in (*first.runs, *second.runs)]
    assert listed == list(reversed(ids))

    pages: list[str] = []
    token = ""
    while True:
        page = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=7, page_token=token))
        assert len(page.runs) <= 7
        pages += [r.run_id for r in page.runs]
        token = page.next_page_token
        if not token:
            break
    assert pages == list(reversed(ids))


async def test_list_runs_page_size_above_100_is_coerced_to_100(api: Api) -> None:
    await _store_runs(api.running.repository, 101)
    page = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=5000))
    assert len(page.runs) == 100
    assert page.next_page_token


async def test_list_runs_filters_by_status_and_verdict(api: Api) -> None:
    repository = api.running.repository
    passed = await _store_runs(repository, 2, verdict=contracts_pb2.VERDICT_PASS)
    rejected = await _store_runs(repository, 2, verdict=contracts_pb2.VERDICT_REJECT, start=10)
    failed = await _store_runs(repository, 1, status=run_pb2.RUN_STATUS_FAILED, start=20)

    by_status = await api.diagnosis.ListRuns(pb.ListRunsRequest(status=run_pb2.RUN_STATUS_FAILED))
    assert [r.run_id for r in by_status.runs] == failed
    by_verdict = await api.diagnosis.ListRuns(pb.ListRunsRequest(verdict=contracts_pb2.VERDICT_REJECT))
    assert [r.run_id for r in by_verdict.runs] == list(reversed(rejected))
    both = await api.diagnosis.ListRuns(
        pb.ListRunsRequest(status=run_pb2.RUN_STATUS_SUCCESS, verdict=contracts_pb2.VERDICT_PASS)
    )
    assert [r.run_id for r in both.runs] == list(reversed(passed))


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (pb.ListRunsRequest(page_size=-1), "page_size"),
        (pb.ListRunsRequest(page_token="not-a-token"), "page_token"),
        (pb.ListRunsRequest(status=99), "status"),  # type: ignore[arg-type]
        (pb.ListRunsRequest(verdict=42), "verdict"),  # type: ignore[arg-type]
    ],
    ids=["negative-page-size", "garbage-token", "unknown-status", "unknown-verdict"],
)
async def test_bad_list_runs_request_is_invalid_argument(api: Api, request_: pb.ListRunsRequest, field: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnosis.ListRuns(request_)
    assert [f for f, _ in field_violations(caught.value)] == [field]


async def test_a_page_token_is_valid_only_with_its_own_filters(api: Api) -> None:
    await _store_runs(api.running.repository, 3)
    page = await api.diagnosis.ListRuns(pb.ListRunsRequest(page_size=1))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnosis.ListRuns(
            pb.ListRunsRequest(page_size=1, page_token=page.next_page_token, status=run_pb2.RUN_STATUS_SUCCESS)
        )
    assert [f for f, _ in field_violations(caught.value)] == ["page_token"]


async def test_list_scenarios_names_the_bundled_packs_and_the_default(api_factory: ApiFactory) -> None:
    api = await api_factory()
    scenarios = (await api.diagnosis.ListScenarios(pb.ListScenariosRequest())).scenarios
    names = [s.name for s in scenarios]
    assert names == sorted(names)
    assert {"checkout-oom", "orders-db-pool", "healthy-noisy"} <= set(names)
    assert [s.name for s in scenarios if s.is_default] == ["checkout-oom"]
    checkout = next(s for s in scenarios if s.name == "checkout-oom")
    assert checkout.title and "checkout-api" in checkout.services

    other = await api_factory(default_scenario="orders-db-pool")
    scenarios = (await other.diagnosis.ListScenarios(pb.ListScenariosRequest())).scenarios
    assert [s.name for s in scenarios if s.is_default] == ["orders-db-pool"]


def _check_request(executor_output: Mapping[str, object] | None) -> gatekeeper_service_pb2.CheckEvidenceRequest:
    invocation = contracts_pb2.ToolInvocation(
        invocation_id="inv-1",
        run_id="run-ext",
        tool_name="logs",
        output=to_value({"lines": ["ERROR upstream timeout after 3000ms"]}),
        status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
    )
    request = gatekeeper_service_pb2.CheckEvidenceRequest(tool_invocations=[invocation])
    if executor_output is not None:
        request.executor_output_text = json.dumps(executor_output)
    return request


def _claim(invocation_id: str) -> dict[str, object]:
    binding = {
        "source_invocation_ids": [invocation_id],
        "tool_name": "logs",
        "raw_path": "/lines/0",
        "matched_text": "upstream timeout",
    }
    return {"claim_id": "c1", "statement": "upstream timed out", "critical": True, "status": "confirmed",
            "evidence_bindings": [binding]}  # fmt: skip


@pytest.mark.requirement("R-GK-5")
async def test_check_evidence_passes_bindings_to_given_invocations(api: Api) -> None:
    output = {"contract": "executor_evidence_v2", "claims": [_claim("inv-1")]}
    response = await api.gatekeeper.CheckEvidence(_check_request(output))
    assert response.parse_status == contracts_pb2.PARSE_STATUS_OK
    assert response.verdict_ceiling == contracts_pb2.VERDICT_PASS
    assert not response.gatekeeper_result.failed_rules
    assert [e.source_invocation_id for e in response.verified_evidence] == ["inv-1"]


@pytest.mark.requirement("R-GK-3")
async def test_check_evidence_fails_a_binding_to_an_unknown_invocation(api: Api) -> None:
    output = {"contract": "executor_evidence_v2", "claims": [_claim("inv-404")]}
    response = await api.gatekeeper.CheckEvidence(_check_request(output))
    assert "evidence.invocation_ref" in response.gatekeeper_result.failed_rules
    assert response.verdict_ceiling == contracts_pb2.VERDICT_REJECT


async def test_check_evidence_without_an_output_is_invalid_argument(api: Api) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.gatekeeper.CheckEvidence(_check_request(None))
    assert [f for f, _ in field_violations(caught.value)] == ["executor_output"]


async def test_check_evidence_with_duplicate_invocation_ids_names_the_field(api: Api) -> None:
    request = _check_request({"contract": "executor_evidence_v2", "claims": []})
    request.tool_invocations.append(request.tool_invocations[0])
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.gatekeeper.CheckEvidence(request)
    assert [f for f, _ in field_violations(caught.value)] == ["tool_invocations[1].invocation_id"]
