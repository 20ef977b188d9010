"""ConnectionConfig: validation, environment, channel arguments (retry service config), metadata; retries in effect."""

from __future__ import annotations

import json

import grpc
import pytest

from diagnosis import (
    ConnectionConfig,
    DiagnosisClient,
    ReconnectPolicy,
    RetryPolicy,
    TLSConfig,
    UnavailableError,
)
from diagnosis.v1 import diagnosis_service_pb2

from .client_fakes import FakeServer


def options(config: ConnectionConfig) -> dict[str, str | int]:
    return dict(config.channel_arguments())


def test_defaults_target_loopback_with_retries_and_message_limits() -> None:
    config = ConnectionConfig()
    opts = options(config)
    assert config.target == "127.0.0.1:50051"
    assert config.tls_config is None
    assert opts["grpc.enable_retries"] == 1
    assert opts["grpc.max_send_message_length"] == opts["grpc.max_receive_message_length"] == 16 * 1024 * 1024


def test_retry_service_config_covers_only_the_unary_rpcs_on_unavailable() -> None:
    policy = RetryPolicy(max_attempts=3, initial_backoff=0.25, max_backoff=1.5, backoff_multiplier=3)
    document = json.loads(str(options(ConnectionConfig(retry=policy))["grpc.service_config"]))
    (method_config,) = document["methodConfig"]
    names = {(n["service"], n["method"]) for n in method_config["name"]}
    assert names == {
        ("diagnosis.v1.DiagnosisService", "GetRun"),
        ("diagnosis.v1.DiagnosisService", "ListRuns"),
        ("diagnosis.v1.DiagnosisService", "ListScenarios"),
        ("diagnosis.v1.GatekeeperService", "CheckEvidence"),
    }
    assert method_config["retryPolicy"] == {
        "maxAttempts": 3,
        "initialBackoff": "0.25s",
        "maxBackoff": "1.5s",
        "backoffMultiplier": 3,
        "retryableStatusCodes": ["UNAVAILABLE"],
    }


def test_retry_none_disables_grpc_retries() -> None:
    opts = options(ConnectionConfig(retry=None))
    assert opts["grpc.enable_retries"] == 0
    assert "grpc.service_config" not in opts


def test_max_message_bytes_and_extra_channel_options() -> None:
    config = ConnectionConfig(max_message_bytes=1024, channel_options=(("grpc.max_receive_message_length", 2048),))
    opts = options(config)
    assert opts["grpc.max_send_message_length"] == 1024
    assert opts["grpc.max_receive_message_length"] == 2048  # explicit channel options win


def test_tls_true_and_tls_config() -> None:
    assert ConnectionConfig(tls=True).tls_config == TLSConfig()
    custom = TLSConfig(root_certificates=b"PEM", server_name_override="diagnosis.internal")
    config = ConnectionConfig(tls=custom)
    assert config.tls_config is custom
    assert options(config)["grpc.ssl_target_name_override"] == "diagnosis.internal"
    with pytest.raises(ValueError, match="mutual TLS"):
        TLSConfig(private_key=b"key")


def test_token_is_sent_as_bearer_metadata_and_never_shown_in_repr() -> None:
    config = ConnectionConfig(token="s3cret", metadata=(("x-team", "ops"),))
    assert config.call_metadata((("x-request-id", "r1"),)) == (
        ("x-team", "ops"),
        ("authorization", "Bearer s3cret"),
        ("x-request-id", "r1"),
    )
    assert "s3cret" not in repr(config)
    # A per-call authorization replaces the configured token.
    assert config.call_metadata((("authorization", "Bearer other"),)) == (
        ("x-team", "ops"),
        ("authorization", "Bearer other"),
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target": " "}, "target"),
        ({"token": "has space"}, "token"),
        ({"token": ""}, "token"),
        ({"token": "caf\u00e9"}, "token"),
        ({"default_timeout": 0}, "default_timeout"),
        ({"default_timeout": -1.0}, "default_timeout"),
        ({"max_message_bytes": 0}, "max_message_bytes"),
        ({"metadata": (("X-Upper", "v"),)}, "metadata"),
        ({"metadata": (("grpc-timeout", "v"),)}, "metadata"),
    ],
)
def test_bad_config_values_are_rejected_with_the_setting_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ConnectionConfig(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 1},
        {"max_attempts": 6},
        {"initial_backoff": 0},
        {"initial_backoff": 2.0, "max_backoff": 1.0},
        {"backoff_multiplier": 0.5},
        {"retryable_status_codes": ()},
        {"retryable_status_codes": (grpc.StatusCode.OK,)},
    ],
)
def test_bad_retry_policies_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="retry"):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_reconnect_delay_grows_exponentially_up_to_the_cap_with_jitter() -> None:
    policy = ReconnectPolicy(initial_backoff=0.1, max_backoff=0.5, backoff_multiplier=2)
    for attempt, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.5), (9, 0.5)]:
        delays = [policy.delay(attempt) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
    with pytest.raises(ValueError, match="reconnect"):
        ReconnectPolicy(max_attempts=-1)


def test_from_env_reads_target_and_token_and_overrides_win() -> None:
    env = {"DIAGNOSIS_TARGET": "diag.example:443", "DIAGNOSIS_TOKEN": "tok-1"}
    config = ConnectionConfig.from_env(env)
    assert (config.target, config.token) == ("diag.example:443", "tok-1")
    assert ConnectionConfig.from_env(env, target="127.0.0.1:1").target == "127.0.0.1:1"
    empty = ConnectionConfig.from_env({"DIAGNOSIS_TARGET": "", "DIAGNOSIS_TOKEN": "  "})
    assert (empty.target, empty.token) == ("127.0.0.1:50051", None)


def test_from_env_uses_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSIS_TARGET", "127.0.0.1:4242")
    monkeypatch.delenv("DIAGNOSIS_TOKEN", raising=False)
    assert ConnectionConfig.from_env().target == "127.0.0.1:4242"
    with DiagnosisClient() as client:  # no config: the environment
        assert client.config.target == "127.0.0.1:4242"
    with DiagnosisClient("127.0.0.1:4343") as client:  # a string: the target
        assert client.config.target == "127.0.0.1:4343"


def test_timeout_for_prefers_the_call_timeout_and_rejects_non_positive() -> None:
    config = ConnectionConfig(default_timeout=5.0)
    assert config.timeout_for(None) == 5.0
    assert config.timeout_for(1.5) == 1.5
    with pytest.raises(ValueError, match="timeout"):
        config.timeout_for(0)


def test_unary_calls_are_retried_on_unavailable_by_the_service_config(fake: FakeServer) -> None:
    fake.service.get_run_failures = [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAVAILABLE]
    policy = RetryPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02)
    with DiagnosisClient(ConnectionConfig(target=fake.target, retry=policy, default_timeout=10)) as client:
        assert client.get_run("run-7").run_id == "run-7"
    assert fake.service.get_run_calls == 3


def test_without_retries_the_first_unavailable_is_raised(fake: FakeServer) -> None:
    fake.service.get_run_failures = [grpc.StatusCode.UNAVAILABLE]
    with (
        DiagnosisClient(ConnectionConfig(target=fake.target, retry=None, default_timeout=10)) as client,
        pytest.raises(UnavailableError),
    ):
        client.get_run("run-7")
    assert fake.service.get_run_calls == 1


def test_diagnose_is_not_retried_since_it_starts_a_run(fake: FakeServer) -> None:
    fake.service.diagnose_script = [grpc.StatusCode.UNAVAILABLE]
    policy = RetryPolicy(max_attempts=5, initial_backoff=0.01, max_backoff=0.02)
    with (
        DiagnosisClient(ConnectionConfig(target=fake.target, retry=policy, default_timeout=10)) as client,
        pytest.raises(UnavailableError),
    ):
        list(client.diagnose("q"))
    assert fake.service.diagnose_calls == 1


def test_token_and_call_metadata_reach_the_server(fake: FakeServer) -> None:
    config = ConnectionConfig(target=fake.target, token="tok-9", default_timeout=10)
    with DiagnosisClient(config) as client:
        client.get_run("r", metadata=[("x-request-id", "abc")])
    (seen,) = fake.service.metadata_seen
    assert ("authorization", "Bearer tok-9") in seen
    assert ("x-request-id", "abc") in seen


def test_list_runs_request_accepts_enum_names_numbers_and_rejects_unknown() -> None:
    from diagnosis import run_status, verdict
    from diagnosis.v1 import contracts_pb2, run_pb2

    assert run_status("success") == run_status("RUN_STATUS_SUCCESS") == run_pb2.RUN_STATUS_SUCCESS
    assert run_status(None) == run_pb2.RUN_STATUS_UNSPECIFIED
    assert verdict("low_confid") == verdict(contracts_pb2.VERDICT_LOW_CONFID) == contracts_pb2.VERDICT_LOW_CONFID
    with pytest.raises(ValueError, match="expected one of"):
        verdict("maybe")
    with pytest.raises(ValueError, match="unknown value"):
        run_status(99)
    with pytest.raises(ValueError, match="expected a name or number"):
        run_status(True)
    request = diagnosis_service_pb2.ListRunsRequest(status=run_status("failed"))
    assert request.status == run_pb2.RUN_STATUS_FAILED
