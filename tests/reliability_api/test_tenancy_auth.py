"""Hostile callers: missing, malformed and wrong tokens on every RPC; other tenants' runs invisible
(R-S-4: a run is its owner's alone); constant-time token comparison; no secret in the server's logs."""

from __future__ import annotations

import asyncio
import base64
import hmac
import io
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import gatekeeper_service_pb2 as gpb
from diagnosis_server.agents.prompts import default_catalog
from diagnosis_server.api import TokenAuthenticator
from diagnosis_server.api.server import SERVICE_NAMES
from tests.support.fakes import PassProvider
from tests.support.rpc import (
    collect,
    error_reason,
    eventually,
    next_message,
    raw_unary_unary,
    read_rest,
    violation_fields,
)
from tests.support.server_log import server_log_buffer

from .conftest import Api, ApiFactory
from .helpers import store_snapshot

ACME = "acme-7f3e9c1d5b2a4e60"
GLOBEX = "globex-52ab8e04c9d14f7a"
TOKENS = f"acme:{ACME},globex:{GLOBEX}"
Metadata = tuple[tuple[str, str], ...]


def bearer(token: str) -> Metadata:
    return (("authorization", f"Bearer {token}"),)


def _calls(api: Api, run_id: str) -> dict[str, Callable[[Metadata], Awaitable[Any]]]:
    """One call of every RPC of both services, taking the call's metadata."""
    d, g = api.diagnosis, api.gatekeeper
    check = gpb.CheckEvidenceRequest(
        executor_output_text=json.dumps({"contract": "executor_evidence_v2", "claims": []})
    )
    return {
        "Diagnose": lambda m: collect(d.Diagnose(pb.DiagnoseRequest(question="why?"), metadata=m)),
        "GetRun": lambda m: d.GetRun(pb.GetRunRequest(run_id=run_id), metadata=m),
        "ListRuns": lambda m: d.ListRuns(pb.ListRunsRequest(), metadata=m),
        "WatchRun": lambda m: collect(d.WatchRun(pb.WatchRunRequest(run_id=run_id), metadata=m)),
        "ListScenarios": lambda m: d.ListScenarios(pb.ListScenariosRequest(), metadata=m),
        "CheckEvidence": lambda m: g.CheckEvidence(check, metadata=m),
    }


REFUSED: dict[str, Metadata] = {
    "none": (),
    "empty-value": (("authorization", ""),),
    "scheme-only": (("authorization", "Bearer"),),
    "scheme-blank": (("authorization", "Bearer    "),),
    "no-scheme": (("authorization", ACME),),
    "basic": (("authorization", "Basic " + base64.b64encode(f"acme:{ACME}".encode()).decode()),),
    "other-scheme": (("authorization", f"Token {ACME}"),),
    "wrong": bearer("not-a-token"),
    "prefix": bearer(ACME[:-1]),
    "longer": bearer(ACME + "0"),
    "upper-case": bearer(ACME.upper()),
    "two-words": bearer(f"{ACME} {ACME}"),
    "tenant-name": bearer("acme"),
    "tenant-and-token": bearer(f"acme:{ACME}"),
    "other-key": (("x-authorization", f"Bearer {ACME}"),),
    "wrong-then-right": (("authorization", "Bearer nope"), ("authorization", f"Bearer {ACME}")),
}


@pytest.mark.parametrize("metadata", list(REFUSED.values()), ids=list(REFUSED))
async def test_every_rpc_refuses_a_missing_malformed_or_wrong_token(
    api_factory: ApiFactory, metadata: Metadata
) -> None:
    api = await api_factory(auth_tokens=TOKENS)
    run = (await api.diagnose(metadata=bearer(ACME)))[-1].run
    before = store_snapshot(api.database)
    for name, call in _calls(api, run.run_id).items():
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(metadata)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED, (name, caught.value.details())
        assert error_reason(caught.value) == "UNAUTHENTICATED", name
        assert ACME not in (caught.value.details() or ""), name
    assert store_snapshot(api.database) == before


async def test_a_token_checked_before_the_request_is_read(api_factory: ApiFactory) -> None:
    """Without a token even a corrupt or invalid request is UNAUTHENTICATED: nothing about the request
    (which field is wrong, whether a run exists) is told to an unauthenticated caller."""
    api = await api_factory(auth_tokens=TOKENS)
    calls: list[Awaitable[object]] = [
        raw_unary_unary(api.channel, "/diagnosis.v1.DiagnosisService/GetRun")(b"\x0a\x02\xff\xfe"),
        api.diagnosis.GetRun(pb.GetRunRequest(run_id="bad id")),
        api.diagnosis.GetRun(pb.GetRunRequest(run_id="run-" + "0" * 32)),
        collect(api.diagnosis.Diagnose(pb.DiagnoseRequest(question=""))),
    ]
    for call in calls:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.requirement("R-S-4")
async def test_another_tenants_runs_are_not_found_and_never_listed(api_factory: ApiFactory) -> None:
    gate = asyncio.Event()
    provider = PassProvider(gate=gate)
    api = await api_factory(provider=provider, auth_tokens=TOKENS)
    d = api.diagnosis
    # acme: one live run (held in its Planner) and, once released, finished ones.
    live = d.Diagnose(pb.DiagnoseRequest(question="live"), metadata=bearer(ACME))
    live_id = (await next_message(live)).run_id
    await provider.entered.acquire()
    unknown_id = "run-" + "0" * 32

    for run_id in (live_id, unknown_id):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await d.GetRun(pb.GetRunRequest(run_id=run_id), metadata=bearer(GLOBEX))
        # Exactly what a run that does not exist gets: the caller cannot tell the two apart.
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
        assert error_reason(caught.value) == "RUN_NOT_FOUND"
        assert caught.value.details() == f"run {run_id!r} not found"
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await collect(d.WatchRun(pb.WatchRunRequest(run_id=run_id), metadata=bearer(GLOBEX)))
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
        assert caught.value.details() == f"run {run_id!r} not found"
    # The refused watch left no subscription on the live run (only acme's own Diagnose stream).
    await eventually(lambda: api.running.hub.subscriber_count(live_id) == 1)

    gate.set()
    await read_rest(live)
    acme_ids = {live_id} | {(await api.diagnose(metadata=bearer(ACME)))[-1].run.run_id for _ in range(2)}
    globex_id = (await api.diagnose(metadata=bearer(GLOBEX)))[-1].run.run_id

    statuses = list(run_pb2.RunStatus.values())
    verdicts = list(contracts_pb2.Verdict.values())
    for status in statuses:
        for verdict in verdicts:
            seen: list[str] = []
            token = ""
            while True:
                request = pb.ListRunsRequest(page_size=1, page_token=token, status=status, verdict=verdict)
                page = await d.ListRuns(request, metadata=bearer(GLOBEX))
                seen += [r.run_id for r in page.runs]
                assert all(r.tenant == "globex" for r in page.runs)
                if not (token := page.next_page_token):
                    break
            assert not acme_ids & set(seen), (status, verdict)
            assert set(seen) <= {globex_id}

    # A page token of acme's listing is refused to globex (it names acme's position and tenant).
    acme_page = await d.ListRuns(pb.ListRunsRequest(page_size=1), metadata=bearer(ACME))
    assert acme_page.next_page_token
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await d.ListRuns(pb.ListRunsRequest(page_size=1, page_token=acme_page.next_page_token), metadata=bearer(GLOBEX))
    assert violation_fields(caught.value) == ["page_token"]
    listed = await d.ListRuns(pb.ListRunsRequest(page_size=100), metadata=bearer(ACME))
    assert {r.run_id for r in listed.runs} == acme_ids


async def test_health_and_reflection_are_open_without_a_token(api_factory: ApiFactory) -> None:
    api = await api_factory(auth_tokens=TOKENS)
    health = health_pb2_grpc.HealthStub(api.channel)
    for service in ("", "diagnosis.v1.DiagnosisService", "diagnosis.v1.GatekeeperService"):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(api.channel)
    replies = [
        r
        async for r in reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    ]
    assert {s.name for s in replies[0].list_services_response.service} == set(SERVICE_NAMES)


@pytest.fixture
def compare_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bytes, bytes]]:
    """Every ``hmac.compare_digest`` call the authenticator makes, recorded (the real one still answers)."""
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def counting(a: Any, b: Any) -> bool:
        calls.append((bytes(a), bytes(b)))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    return calls


def test_every_configured_token_is_compared_whichever_matches(compare_calls: list[tuple[bytes, bytes]]) -> None:
    """Constant-time: compare_digest for each configured token, no early exit on a match, so the time taken
    does not say which token (or whether any) matched."""
    pairs = [(f"tenant{n}", f"token-{n}-{'x' * n}") for n in range(5)]
    configured = {token.encode() for _, token in pairs}
    auth = TokenAuthenticator(pairs)
    presented = [token for _, token in pairs] + ["token-9-nope", "t", "token-0-"]
    for token in presented:
        compare_calls.clear()
        try:
            tenant = auth.tenant_for(bearer(token))
        except Exception:
            tenant = None
        assert tenant == dict((t, n) for n, t in pairs).get(token)
        assert len(compare_calls) == len(pairs), token
        assert {stored for _, stored in compare_calls} == configured, token
        assert all(given == token.encode() for given, _ in compare_calls)


async def test_the_server_compares_every_token_on_every_call(
    api_factory: ApiFactory, compare_calls: list[tuple[bytes, bytes]]
) -> None:
    api = await api_factory(auth_tokens=TOKENS)
    for metadata, ok in ((bearer(ACME), True), (bearer(GLOBEX), True), (bearer("nope"), False)):
        compare_calls.clear()
        try:
            await api.diagnosis.ListScenarios(pb.ListScenariosRequest(), metadata=metadata)
            succeeded = True
        except grpc.aio.AioRpcError:
            succeeded = False
        assert succeeded is ok
        assert {stored for _, stored in compare_calls} == {ACME.encode(), GLOBEX.encode()}
        assert len(compare_calls) == 2


@pytest.fixture
def server_log() -> Iterator[io.StringIO]:
    """The server's structured log (every structlog line, at debug) and stdlib warnings, into one buffer."""
    with server_log_buffer(logging.WARNING) as buffer:
        yield buffer


def _prompt_lines() -> list[str]:
    """Distinctive lines of every prompt of the catalog (long enough to be nobody else's words)."""
    lines: list[str] = []
    for prompt in default_catalog().prompts.values():
        lines += [line.strip() for line in prompt.text.splitlines() if len(line.strip()) >= 30]
    assert lines
    return lines


async def test_tokens_prompts_and_questions_never_reach_the_logs(
    api_factory: ApiFactory, server_log: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full run with auth on the embedded provider, an unauthenticated call, a bad request, a run that
    crashes inside the graph and an RPC that fails unexpectedly (both logged with a traceback)."""
    api = await api_factory(provider="heuristic", auth_tokens=TOKENS)
    marker = "zebra-project-7731"
    question = f"Why is checkout-api returning 503s since the {marker} release?"
    messages = await api.diagnose(question, "checkout-oom", metadata=bearer(ACME))
    run = messages[-1].run
    assert run.status == run_pb2.RUN_STATUS_SUCCESS and run.question == question
    await api.diagnosis.GetRun(pb.GetRunRequest(run_id=run.run_id), metadata=bearer(ACME))
    await collect(api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run.run_id), metadata=bearer(ACME)))
    await api.diagnosis.ListRuns(pb.ListRunsRequest(), metadata=bearer(GLOBEX))
    wrong = "wrong-token-with-secret-shape-0042"
    with pytest.raises(grpc.aio.AioRpcError):
        await api.diagnose(question, metadata=bearer(wrong))
    with pytest.raises(grpc.aio.AioRpcError):
        await api.diagnose(question + "x" * 5000, metadata=bearer(ACME))

    repository = api.running.repository
    real_commit, real_get = repository.commit_node, repository.get_run
    commits = 0

    async def commit_fails_once(*args: Any, **kwargs: Any) -> None:
        nonlocal commits
        commits += 1
        if commits == 2:
            raise RuntimeError("disk on fire")
        await real_commit(*args, **kwargs)

    monkeypatch.setattr(repository, "commit_node", commit_fails_once)
    crashed = (await api.diagnose(question, "checkout-oom", metadata=bearer(ACME)))[-1].run
    assert crashed.status == run_pb2.RUN_STATUS_FAILED

    async def get_run_fails(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("store unreachable")

    monkeypatch.setattr(repository, "commit_node", real_commit)
    monkeypatch.setattr(repository, "get_run", get_run_fails)
    # A Diagnose stream ends with the record its run stored (it reads nothing back); WatchRun reads the run.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=crashed.run_id), metadata=bearer(GLOBEX)):
            pass
    assert caught.value.code() == grpc.StatusCode.INTERNAL
    monkeypatch.setattr(repository, "get_run", real_get)
    await api.running.runs.wait_idle()
    await api.running.stop(grace=1.0)

    text = server_log.getvalue()
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    events = [line["event"] for line in lines]
    assert events.count("rpc") >= 8 and "run_failed" in events and "rpc_failed" in events
    assert any("exception" in line for line in lines)  # the tracebacks were rendered
    assert any(line.get("tenant") == "acme" and line.get("run_id") == run.run_id for line in lines)
    for secret in (ACME, GLOBEX, wrong, marker, "Bearer"):
        assert secret not in text, secret
    for prompt_line in _prompt_lines():
        assert prompt_line not in text, prompt_line
