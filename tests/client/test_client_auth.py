"""Bearer tokens: the client sends ``authorization: Bearer <token>``; missing or wrong tokens are UNAUTHENTICATED."""

from __future__ import annotations

import grpc
import pytest

from diagnosis import (
    AsyncDiagnosisClient,
    ConnectionConfig,
    DiagnosisClient,
    NotFoundError,
    UnauthenticatedError,
)
from diagnosis.v1 import run_pb2
from diagnosis_server.cli import main
from tests.support.serve import ServeProcess

from .live_server import AUTH_TOKENS


def connect(server: ServeProcess, token: str | None) -> DiagnosisClient:
    return DiagnosisClient(ConnectionConfig(target=server.target, token=token, default_timeout=30))


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_missing_or_wrong_token_is_unauthenticated(auth_server: ServeProcess, token: str | None) -> None:
    with connect(auth_server, token) as client, pytest.raises(UnauthenticatedError) as caught:
        client.list_scenarios()
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED


def test_streams_are_authenticated_too(auth_server: ServeProcess) -> None:
    with connect(auth_server, None) as client, pytest.raises(UnauthenticatedError):
        list(client.diagnose("why is checkout failing?"))


def test_a_valid_token_names_the_tenant_and_runs_stay_with_it(auth_server: ServeProcess) -> None:
    with connect(auth_server, AUTH_TOKENS["acme"]) as acme:
        run = acme.ask("why is checkout failing?")
        assert run.status == run_pb2.RUN_STATUS_SUCCESS
        assert run.tenant == "acme"
        assert acme.get_run(run.run_id).run_id == run.run_id
    with connect(auth_server, AUTH_TOKENS["zenith"]) as zenith:
        with pytest.raises(NotFoundError):
            zenith.get_run(run.run_id)
        assert run.run_id not in {r.run_id for r in zenith.iter_runs()}


async def test_async_client_sends_the_token(auth_server: ServeProcess) -> None:
    config = ConnectionConfig(target=auth_server.target, token=AUTH_TOKENS["zenith"], default_timeout=30)
    async with AsyncDiagnosisClient(config) as client:
        assert await client.list_scenarios()
    async with AsyncDiagnosisClient(ConnectionConfig(target=auth_server.target)) as anonymous:
        with pytest.raises(UnauthenticatedError):
            await anonymous.list_scenarios()


def test_cli_token_from_flag_or_environment(
    auth_server: ServeProcess, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DIAGNOSIS_TOKEN", raising=False)
    assert main(["runs", "list", "--target", auth_server.target]) == 1
    assert capsys.readouterr().err.startswith("diagnosis: error: UNAUTHENTICATED: ")
    assert main(["runs", "list", "--target", auth_server.target, "--token", AUTH_TOKENS["acme"]]) == 0
    monkeypatch.setenv("DIAGNOSIS_TOKEN", AUTH_TOKENS["acme"])
    assert main(["runs", "list", "--json", "--target", auth_server.target]) == 0
    capsys.readouterr()
