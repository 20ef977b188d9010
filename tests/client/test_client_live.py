"""Every client method, sync and async, against the real server (`diagnosis serve` in a subprocess).

The verdict a run reaches depends on the agent provider; these tests depend only on the shapes: stream order,
one run id throughout, the terminal message, status SUCCESS (R-A-6), one event per node attempt in sequence (R-S-3).
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from diagnosis import (
    AsyncDiagnosisClient,
    DeadlineExceededError,
    DiagnosisClient,
    InvalidArgumentError,
    NotFoundError,
)
from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2, gatekeeper_service_pb2, run_pb2

from .live_server import FinishedRun

BUNDLED = {
    "checkout-oom",
    "payments-bad-deploy",
    "orders-db-pool",
    "search-disk-full",
    "gateway-tls-expired",
    "catalog-upstream-latency",
    "healthy-noisy",
    "inventory-ambiguous",
}
QUESTION = "why is checkout returning 500s?"


def assert_diagnose_shape(responses: list[diagnosis_service_pb2.DiagnoseResponse]) -> run_pb2.DiagnosisRun:
    """started first, then events in sequence (and tool call progress, under the Executor's sequence), then
    exactly one run, last; one run id on every message."""
    kinds = [r.WhichOneof("kind") for r in responses]
    assert kinds[0] == "started"
    assert kinds[-1] == "run"
    assert set(kinds[1:-1]) <= {"event", "tool_call"}
    executor = [r.event.sequence for r in responses if r.WhichOneof("kind") == "event" and r.event.node == 2]
    assert {r.tool_call.sequence for r in responses if r.WhichOneof("kind") == "tool_call"} <= set(executor)
    assert kinds.count("run") == 1 and kinds.count("started") == 1
    run_id = responses[0].started.run_id
    assert run_id
    assert {r.run_id for r in responses} == {run_id}
    events = [r.event for r in responses if r.WhichOneof("kind") == "event"]
    assert events, "a run has at least one node attempt"
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert all(e.run_id == run_id and e.node != run_pb2.NODE_NAME_UNSPECIFIED and e.attempt >= 1 for e in events)
    run = responses[-1].run
    assert run.run_id == run_id
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert run.question == QUESTION
    return run


def check_evidence_kwargs() -> dict[str, Any]:
    invocation = {
        "invocation_id": "inv-1",
        "run_id": "run-check-1",
        "tool_name": "logs",
        "output": {"lines": ["ERROR checkout-api OOMKilled"]},
        "status": "TOOL_INVOCATION_STATUS_OK",
    }
    binding = {
        "source_invocation_ids": ["inv-1"],
        "tool_name": "logs",
        "raw_path": "/lines/0",
        "matched_text": "OOMKilled",
    }
    claim = {"claim_id": "c1", "statement": "OOMKilled", "critical": True, "status": "confirmed"}
    output = {"contract": "executor_evidence_v2", "claims": [{**claim, "evidence_bindings": [binding]}]}
    return {"tool_invocations": [invocation], "executor_output": output}


# ---------------------------------------------------------------------- sync


@pytest.mark.requirement("R-A-6")
def test_diagnose_streams_started_events_then_the_successful_run(client: DiagnosisClient) -> None:
    run = assert_diagnose_shape(list(client.diagnose(QUESTION, scenario="payments-bad-deploy")))
    assert run.scenario == "payments-bad-deploy"


def test_ask_returns_the_final_run_and_reports_progress(client: DiagnosisClient) -> None:
    started: list[str] = []
    events: list[run_pb2.OrchestrationEvent] = []
    run = client.ask(QUESTION, on_started=lambda s: started.append(s.run_id), on_event=events.append)
    assert started == [run.run_id]
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert run.scenario == "checkout-oom"  # the server's default scenario


def test_get_run_returns_the_stored_run(client: DiagnosisClient, finished_run: FinishedRun) -> None:
    stored = client.get_run(finished_run.run.run_id)
    assert stored.run_id == finished_run.run.run_id
    assert stored.status == run_pb2.RUN_STATUS_SUCCESS
    assert stored.verdict == finished_run.run.verdict
    assert stored.answer_text == finished_run.run.answer_text


def test_get_run_of_an_unknown_run_is_not_found(client: DiagnosisClient) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.get_run("run-does-not-exist")
    assert caught.value.code == grpc.StatusCode.NOT_FOUND
    assert "run-does-not-exist" in caught.value.message


def test_bad_input_is_invalid_argument_with_bad_request_details(client: DiagnosisClient) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        list(client.diagnose("   "))
    assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [field for field, _ in caught.value.field_violations()] == ["question"]
    with pytest.raises(InvalidArgumentError) as unknown:
        client.ask(QUESTION, scenario="no-such-scenario")
    assert any("scenario" in field for field, _ in unknown.value.field_violations())
    with pytest.raises(InvalidArgumentError):
        client.list_runs(page_token="not-a-token")


def test_iter_runs_follows_page_tokens_newest_first(client: DiagnosisClient, finished_run: FinishedRun) -> None:
    created = [client.ask(f"{QUESTION} #{n}").run_id for n in range(3)]
    first = client.list_runs(page_size=2)
    assert len(first.runs) == 2
    assert first.next_page_token
    everything = [r.run_id for r in client.list_runs(page_size=100).runs]
    runs = list(client.iter_runs(page_size=2))
    paged = [r.run_id for r in runs]
    assert paged == everything  # same order, nothing twice, nothing lost
    assert len(set(paged)) == len(paged)
    assert set(paged[:3]) == set(created)  # newest first
    stamps = [r.created_at.ToNanoseconds() for r in runs]
    assert stamps == sorted(stamps, reverse=True)
    assert finished_run.run.run_id in paged


def test_list_runs_filters_by_status_and_verdict(client: DiagnosisClient, finished_run: FinishedRun) -> None:
    successes = list(client.iter_runs(status="success"))
    assert successes and all(r.status == run_pb2.RUN_STATUS_SUCCESS for r in successes)
    assert list(client.iter_runs(status=run_pb2.RUN_STATUS_FAILED)) == []
    verdict = finished_run.run.verdict
    same = [r for r in client.iter_runs(verdict=verdict)]
    assert finished_run.run.run_id in {r.run_id for r in same}
    assert all(r.verdict == verdict for r in same)


def test_watch_run_replays_the_events_then_says_how_it_ended(
    client: DiagnosisClient, finished_run: FinishedRun
) -> None:
    streamed = [r.event for r in finished_run.responses if r.WhichOneof("kind") == "event"]
    responses = list(client.watch_run(finished_run.run.run_id))
    assert [r.event for r in responses[:-1] if r.WhichOneof("kind") == "event"] == streamed
    # The replayed tool calls are the ones the Diagnose stream carried: the same ends, the same starts.
    replayed = [r.tool_call for r in responses if r.WhichOneof("kind") == "tool_call"]
    live = [r.tool_call for r in finished_run.responses if r.WhichOneof("kind") == "tool_call"]
    assert sorted(t.SerializeToString(deterministic=True) for t in replayed if t.phase == 2) == sorted(
        t.SerializeToString(deterministic=True) for t in live if t.phase == 2
    )
    assert {t.invocation_id for t in replayed} == {t.invocation_id for t in live}
    assert responses[-1].WhichOneof("kind") == "ended"
    ended = responses[-1].ended
    assert ended.status == run_pb2.RUN_STATUS_SUCCESS
    assert ended.verdict == finished_run.run.verdict
    assert ended.last_sequence == streamed[-1].sequence


def test_watch_run_follows_a_live_run_to_its_end(client: DiagnosisClient) -> None:
    stream = client.diagnose(QUESTION, scenario="search-disk-full")
    started = next(stream)
    assert started.WhichOneof("kind") == "started"
    watched = list(client.watch_run(started.run_id))  # the run is live: replay, then follow
    rest = list(stream)
    assert [r.event for r in watched[:-1] if r.WhichOneof("kind") == "event"] == [
        r.event for r in rest if r.WhichOneof("kind") == "event"
    ]
    calls = {(r.tool_call.invocation_id, r.tool_call.phase) for r in watched if r.WhichOneof("kind") == "tool_call"}
    assert calls == {
        (r.tool_call.invocation_id, r.tool_call.phase) for r in rest if r.WhichOneof("kind") == "tool_call"
    }
    assert watched[-1].ended.status == rest[-1].run.status == run_pb2.RUN_STATUS_SUCCESS


def test_watch_run_after_a_sequence_sends_only_later_events(client: DiagnosisClient, finished_run: FinishedRun) -> None:
    responses = list(client.watch_run(finished_run.run.run_id, after_sequence=2))
    sequences = [r.event.sequence for r in responses if r.WhichOneof("kind") == "event"]
    assert sequences and min(sequences) == 3
    assert responses[-1].WhichOneof("kind") == "ended"


def test_watch_run_of_an_unknown_run_is_not_found(client: DiagnosisClient) -> None:
    with pytest.raises(NotFoundError):
        list(client.watch_run("run-does-not-exist"))


def test_list_scenarios_names_the_bundled_ones_and_the_default(client: DiagnosisClient) -> None:
    scenarios = client.list_scenarios()
    assert {s.name for s in scenarios} == BUNDLED
    assert [s.name for s in scenarios if s.is_default] == ["checkout-oom"]
    assert all(s.title and s.services for s in scenarios)


@pytest.mark.requirement("R-GK-5")
def test_check_evidence_from_keywords_and_from_a_request(client: DiagnosisClient) -> None:
    response = client.check_evidence(**check_evidence_kwargs())
    assert response.parse_status == contracts_pb2.PARSE_STATUS_OK
    assert response.gatekeeper_result.status == contracts_pb2.GATEKEEPER_STATUS_PASS
    assert response.verdict_ceiling == contracts_pb2.VERDICT_PASS
    assert [e.claim_id for e in response.verified_evidence] == ["c1"]
    request = gatekeeper_service_pb2.CheckEvidenceRequest(executor_output_text="the database is down")
    request.tool_invocations.add(invocation_id="inv-1", run_id="run-check-1", tool_name="logs")
    assert client.check_evidence(request).parse_status == contracts_pb2.PARSE_STATUS_INVALID_OUTPUT
    with pytest.raises(TypeError, match="not both"):
        client.check_evidence(request, run_id="run-check-1")


def test_a_short_timeout_is_deadline_exceeded(client: DiagnosisClient) -> None:
    with pytest.raises(DeadlineExceededError):
        list(client.diagnose(QUESTION, timeout=0.001))


def test_closing_the_diagnose_iterator_early_cancels_cleanly(client: DiagnosisClient) -> None:
    stream = client.diagnose(QUESTION)
    first = next(stream)
    assert first.WhichOneof("kind") == "started"
    stream.close()  # the call is cancelled; the client stays usable
    assert client.list_scenarios()


# ---------------------------------------------------------------------- async


async def test_async_diagnose_and_ask(aclient: AsyncDiagnosisClient) -> None:
    responses = [r async for r in aclient.diagnose(QUESTION, scenario="orders-db-pool")]
    assert assert_diagnose_shape(responses).scenario == "orders-db-pool"
    events: list[run_pb2.OrchestrationEvent] = []
    run = await aclient.ask(QUESTION, on_event=events.append)
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))


async def test_async_get_list_iter_and_watch(aclient: AsyncDiagnosisClient, finished_run: FinishedRun) -> None:
    run_id = finished_run.run.run_id
    assert (await aclient.get_run(run_id)).run_id == run_id
    page = await aclient.list_runs(page_size=1)
    assert len(page.runs) == 1 and page.next_page_token
    paged = [r.run_id async for r in aclient.iter_runs(page_size=1, status="success")]
    assert run_id in paged and len(paged) == len(set(paged))
    watched = [r async for r in aclient.watch_run(run_id)]
    assert watched[-1].ended.status == run_pb2.RUN_STATUS_SUCCESS
    assert len(watched) - 1 == len([r for r in finished_run.responses if r.WhichOneof("kind") != "started"]) - 1


async def test_async_scenarios_check_evidence_and_errors(aclient: AsyncDiagnosisClient) -> None:
    assert {s.name for s in await aclient.list_scenarios()} == BUNDLED
    response = await aclient.check_evidence(**check_evidence_kwargs())
    assert response.gatekeeper_result.status == contracts_pb2.GATEKEEPER_STATUS_PASS
    with pytest.raises(NotFoundError):
        await aclient.get_run("run-does-not-exist")
    with pytest.raises(NotFoundError):
        [r async for r in aclient.watch_run("run-does-not-exist")]
    with pytest.raises(InvalidArgumentError) as caught:
        await aclient.ask("")
    assert [field for field, _ in caught.value.field_violations()] == ["question"]
