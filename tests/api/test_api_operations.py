"""What an operator relies on at start-up: exclusive bind, metrics behind the same loopback rule, a warning
for tokens in the clear, and exactly one authorization header."""

from __future__ import annotations

from pathlib import Path

import grpc
import grpc.aio
import pytest
from structlog.testing import capture_logs

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.api import StartupError, start_server
from diagnosis_server.api.server import warn_plaintext_tokens
from tests.support.fakes import PassProvider, tools_for
from tests.support.rpc import error_reason

from .conftest import ApiFactory, make_settings

ACME = "acme-token-7f3e9c1d"


async def test_a_second_server_on_a_served_port_fails_to_bind(api_factory: ApiFactory, tmp_path: Path) -> None:
    """gRPC sets SO_REUSEPORT by default: two servers would share the port and split its traffic."""
    first = await api_factory()
    with pytest.raises(StartupError, match=f"cannot bind {first.running.target}"):
        await start_server(
            make_settings(
                tmp_path, address=first.running.target, database_url=f"sqlite+aiosqlite:///{tmp_path / 'b.db'}"
            ),
            provider=PassProvider(),
            tools_for=tools_for,
        )
    # The first one still answers alone.
    reply = await first.diagnosis.ListScenarios(pb.ListScenariosRequest())
    assert reply.scenarios


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0", "10.1.2.3:9464"])
async def test_metrics_on_a_non_loopback_address_without_tokens_is_refused(tmp_path: Path, address: str) -> None:
    with pytest.raises(StartupError, match="refusing to serve metrics"):
        await start_server(
            make_settings(tmp_path, metrics_address=address), provider=PassProvider(), tools_for=tools_for
        )


async def test_metrics_on_a_non_loopback_address_with_tokens_is_allowed(api_factory: ApiFactory) -> None:
    api = await api_factory(auth_tokens=f"acme:{ACME}", metrics_address="0.0.0.0:0")
    assert api.running.metrics_port


def test_tokens_without_tls_on_a_non_loopback_address_warn() -> None:
    with capture_logs() as logs:
        assert warn_plaintext_tokens("0.0.0.0:50051", authenticated=True, tls=False)
        assert not warn_plaintext_tokens("0.0.0.0:50051", authenticated=True, tls=True)
        assert not warn_plaintext_tokens("127.0.0.1:50051", authenticated=True, tls=False)
    warnings = [entry for entry in logs if entry["event"] == "plaintext_tokens"]
    assert len(warnings) == 1 and warnings[0]["log_level"] == "warning"


async def test_start_up_warns_for_tokens_in_the_clear(tmp_path: Path) -> None:
    with capture_logs() as logs:
        running = await start_server(
            make_settings(tmp_path, address="0.0.0.0:0", auth_tokens=f"acme:{ACME}"),
            provider=PassProvider(),
            tools_for=tools_for,
        )
        await running.stop(grace=0)
    assert any(entry["event"] == "plaintext_tokens" for entry in logs)


@pytest.mark.parametrize("second", [f"Bearer {ACME}", "Bearer wrong-token"], ids=["same", "different"])
async def test_two_authorization_headers_are_unauthenticated(api_factory: ApiFactory, second: str) -> None:
    api = await api_factory(auth_tokens=f"acme:{ACME}")
    metadata = (("authorization", f"Bearer {ACME}"), ("authorization", second))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnosis.ListRuns(pb.ListRunsRequest(), metadata=metadata)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_reason(caught.value) == "UNAUTHENTICATED"
    assert "more than one" in (caught.value.details() or "")
    # One header still works.
    await api.diagnosis.ListRuns(pb.ListRunsRequest(), metadata=(("authorization", f"Bearer {ACME}"),))
