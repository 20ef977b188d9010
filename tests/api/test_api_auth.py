"""Bearer tokens, tenants, the loopback-only rule without tokens, and TLS (R-S-4: a run is its owner's alone)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from structlog.testing import capture_logs

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, gatekeeper_service_pb2
from diagnosis_server.api import StartupError, TokenAuthenticator, check_bind_policy, start_server
from tests.support.fakes import PassProvider, tools_for
from tests.support.rpc import error_reason, eventually

from .conftest import Api, ApiFactory, make_settings

ACME = "acme-token-7f3e9c1d"
GLOBEX = "globex-token-52ab8e04"
TOKENS = f"acme:{ACME},globex:{GLOBEX}"


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _calls(api: Api) -> dict[str, Any]:
    """One call of every method of both services, as a coroutine factory taking call metadata."""
    d, g = api.diagnosis, api.gatekeeper

    async def diagnose(metadata: Any) -> None:
        _ = [m async for m in d.Diagnose(pb.DiagnoseRequest(question="why?"), metadata=metadata)]

    async def watch(metadata: Any) -> None:
        _ = [m async for m in d.WatchRun(pb.WatchRunRequest(run_id="run-1"), metadata=metadata)]

    return {
        "Diagnose": diagnose,
        "WatchRun": watch,
        "GetRun": lambda m: d.GetRun(pb.GetRunRequest(run_id="run-1"), metadata=m),
        "ListRuns": lambda m: d.ListRuns(pb.ListRunsRequest(), metadata=m),
        "ListScenarios": lambda m: d.ListScenarios(pb.ListScenariosRequest(), metadata=m),
        "CheckEvidence": lambda m: g.CheckEvidence(gatekeeper_service_pb2.CheckEvidenceRequest(), metadata=m),
    }


@pytest.mark.parametrize(
    "metadata",
    [(), bearer("not-a-token"), bearer(ACME[:-1]), (("authorization", ACME),), (("authorization", "Basic x"),)],
    ids=["none", "wrong", "prefix", "no-scheme", "basic"],
)
async def test_every_method_refuses_a_missing_or_wrong_token(api_factory: ApiFactory, metadata: Any) -> None:
    api = await api_factory(auth_tokens=TOKENS)
    for name, call in _calls(api).items():
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(metadata)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED, name
        assert error_reason(caught.value) == "UNAUTHENTICATED"
    assert await api.running.repository.count_runs() == 0


@pytest.mark.requirement("R-S-4")
async def test_another_tenants_run_is_not_found_and_not_listed(api_factory: ApiFactory) -> None:
    api = await api_factory(auth_tokens=TOKENS)
    d = api.diagnosis
    messages = [m async for m in d.Diagnose(pb.DiagnoseRequest(question="why?"), metadata=bearer(ACME))]
    run = messages[-1].run
    assert run.tenant == "acme"

    assert (await d.GetRun(pb.GetRunRequest(run_id=run.run_id), metadata=bearer(ACME))).run == run
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await d.GetRun(pb.GetRunRequest(run_id=run.run_id), metadata=bearer(GLOBEX))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        _ = [m async for m in d.WatchRun(pb.WatchRunRequest(run_id=run.run_id), metadata=bearer(GLOBEX))]
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND

    assert [r.run_id for r in (await d.ListRuns(pb.ListRunsRequest(), metadata=bearer(ACME))).runs] == [run.run_id]
    assert list((await d.ListRuns(pb.ListRunsRequest(), metadata=bearer(GLOBEX))).runs) == []


async def test_tokens_file_names_tenants(api_factory: ApiFactory, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"# tenants\n\nacme:{ACME}\n  globex : {GLOBEX}  \n", encoding="utf-8")
    api = await api_factory(auth_tokens_file=str(tokens))
    messages = [m async for m in api.diagnosis.Diagnose(pb.DiagnoseRequest(question="why?"), metadata=bearer(GLOBEX))]
    assert messages[-1].run.tenant == "globex"


async def test_health_and_reflection_stay_open_without_a_token(api_factory: ApiFactory) -> None:
    api = await api_factory(auth_tokens=TOKENS)
    health = health_pb2_grpc.HealthStub(api.channel)
    response = await health.Check(health_pb2.HealthCheckRequest(service=""))
    assert response.status == health_pb2.HealthCheckResponse.SERVING


async def test_tokens_and_questions_never_reach_the_logs(api_factory: ApiFactory) -> None:
    api = await api_factory(auth_tokens=TOKENS)
    question = "why is the secret-project-zebra failing?"
    with capture_logs() as logs:
        _ = [m async for m in api.diagnosis.Diagnose(pb.DiagnoseRequest(question=question), metadata=bearer(ACME))]
        with pytest.raises(grpc.aio.AioRpcError):
            await api.diagnosis.ListRuns(pb.ListRunsRequest(), metadata=bearer(GLOBEX + "x"))
        # The server writes an RPC's line once the RPC is over, which may be after the caller has its answer.
        await eventually(lambda: sum(entry["event"] == "rpc" for entry in logs) == 2)
    text = repr(logs)
    rpc_lines = [entry for entry in logs if entry["event"] == "rpc"]
    assert {entry["method"] for entry in rpc_lines} == {
        "diagnosis.v1.DiagnosisService/Diagnose",
        "diagnosis.v1.DiagnosisService/ListRuns",
    }
    assert {entry["code"] for entry in rpc_lines} == {"OK", "UNAUTHENTICATED"}
    assert all({"peer", "duration_ms"} <= set(entry) for entry in rpc_lines)
    assert any(entry.get("tenant") == "acme" and entry.get("run_id") for entry in rpc_lines)
    for secret in (ACME, GLOBEX, "secret-project-zebra", "Return exactly one JSON object"):
        assert secret not in text


def test_token_comparison_finds_the_tenant_of_each_token() -> None:
    auth = TokenAuthenticator([("acme", ACME), ("globex", GLOBEX)])
    assert auth.tenant_for(bearer(ACME)) == "acme"
    assert auth.tenant_for((("Authorization", f"bearer {GLOBEX}"),)) == "globex"
    assert TokenAuthenticator([]).tenant_for(None) == "default"


@pytest.mark.parametrize("address", ["127.0.0.1:0", "127.8.9.10:50051", "[::1]:0", "localhost:0", "LOCALHOST:1"])
def test_loopback_binds_need_no_tokens(address: str) -> None:
    check_bind_policy(address, authenticated=False)


@pytest.mark.parametrize("address", ["0.0.0.0:50051", "[::]:50051", "10.1.2.3:50051", "example.com:443"])
async def test_non_loopback_bind_without_tokens_is_refused(tmp_path: Path, address: str) -> None:
    check_bind_policy(address, authenticated=True)
    with pytest.raises(StartupError, match="without authentication"):
        await start_server(make_settings(tmp_path, address=address), provider=PassProvider(), tools_for=tools_for)
    assert not (tmp_path / "api.db").exists()  # refused before anything was opened


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed: no self-signed certificate for the TLS test")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_tls_serves_secure_channels_only(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    settings = make_settings(tmp_path, tls_cert_file=str(cert), tls_key_file=str(key))
    running = await start_server(settings, provider=PassProvider(), tools_for=tools_for)
    try:
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        async with grpc.aio.secure_channel(f"localhost:{running.port}", credentials) as channel:
            stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
            scenarios = await stub.ListScenarios(pb.ListScenariosRequest(), timeout=10)
            assert scenarios.scenarios
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as plain:
            stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(plain)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.ListScenarios(pb.ListScenariosRequest(), timeout=2)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await running.stop(grace=0)
