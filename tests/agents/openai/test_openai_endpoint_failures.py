"""A model endpoint that fails is visible: in the node step, the failure reason, the log, the metrics and
the answer. It used to read "the investigation could not be planned" with nothing saying why."""

from __future__ import annotations

import socket
import time

from pydantic import SecretStr
from structlog.testing import capture_logs

from diagnosis.v1 import run_pb2
from diagnosis_server.agents.base import AgentRetryableError
from diagnosis_server.agents.openai import OpenAIProvider, OpenAISettings
from diagnosis_server.agents.openai.errors import redact
from diagnosis_server.api.metrics import Metrics
from diagnosis_server.graph.context import Limits
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import Repository

from .openai_e2e import SCENARIO, diagnose, provider_for, scenario_tools
from .openai_fake_endpoint import FakeOpenAI, error

SECRET_KEY = "sk-live-0123456789abcdef"


def _closed_port() -> int:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_an_unreachable_endpoint_is_named_in_the_step_the_failure_reason_the_log_and_the_answer(
    repository: Repository,
) -> None:
    settings = OpenAISettings(
        base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="m", timeout_s=2, api_key=SecretStr(SECRET_KEY)
    )
    metrics = Metrics()
    orchestrator = Orchestrator(
        store=repository,
        provider=OpenAIProvider(settings),
        tools_for=scenario_tools,
        on_endpoint_failure=metrics.observe_endpoint_failure,
    )
    with capture_logs() as logs:
        run = await orchestrator.run(question="Why is checkout-api returning 503s?", scenario=SCENARIO)
    await orchestrator.provider.aclose()  # type: ignore[attr-defined]

    assert run.status == run_pb2.RUN_STATUS_SUCCESS  # a safe, degraded answer (R-A-6)
    assert "model endpoint failed" in run.answer_text
    reason = run.self_evaluation.verifier_evaluation.failure_reason
    assert reason.startswith("MODEL_ENDPOINT_FAILED: planner connection_refused:")
    assert "refused" in reason.lower()
    steps = await repository.list_node_steps(run.run_id)
    planner = [s for s in steps if s.node == run_pb2.NODE_NAME_PLANNER]
    assert len(planner) == 2  # the technical retry
    assert all(s.failure_class == "connection_refused" and "refused" in s.failure.lower() for s in planner)
    failed = [e for e in logs if e["event"] == "model_endpoint_failed"]
    assert failed and failed[0]["failure_class"] == "connection_refused" and failed[0]["run_id"] == run.run_id
    counted = metrics.endpoint_failures.labels(node="planner", failure_class="connection_refused")._value.get()
    assert counted == 2
    everything = f"{run}{steps}{logs}"
    assert SECRET_KEY not in everything


async def test_an_http_error_keeps_the_endpoints_message_and_never_the_key(
    fake: FakeOpenAI, repository: Repository
) -> None:
    fake.script("planner", error(503, f"overloaded (key {SECRET_KEY} over quota)"), error(503, "still overloaded"))
    run = await diagnose(repository, provider_for(fake, api_key=SECRET_KEY))
    steps = await repository.list_node_steps(run.run_id)
    assert [s.failure_class for s in steps if s.node == run_pb2.NODE_NAME_PLANNER] == ["http_503", "http_503"]
    assert "overloaded" in steps[0].failure
    assert SECRET_KEY not in f"{run}{steps}"
    assert "MODEL_ENDPOINT_FAILED: planner http_503" in run.self_evaluation.verifier_evaluation.failure_reason


async def test_retry_after_is_honoured_before_the_technical_retry(fake: FakeOpenAI, repository: Repository) -> None:
    limited = error(429, "slow down")
    limited.headers["Retry-After"] = "1"
    fake.script("planner", limited)
    started = time.monotonic()
    run = await diagnose(repository, provider_for(fake), limits=Limits(retry_backoff_s=0.01))
    steps = await repository.list_node_steps(run.run_id)
    first, second = [s for s in steps if s.node == run_pb2.NODE_NAME_PLANNER][:2]
    assert first.failure_class == "rate_limited" and first.retry_after_ms == 1000
    gap_ms = (second.started_at.ToNanoseconds() - first.started_at.ToNanoseconds()) / 1e6 - first.latency_ms
    assert gap_ms >= 950
    assert time.monotonic() - started < 30


def test_redaction_removes_keys_and_url_credentials() -> None:
    text = f"POST http://user:pw@host/v1 failed with key {SECRET_KEY} and token-abcdefgh123"
    clean = redact(text, secrets=(SECRET_KEY,))
    assert SECRET_KEY not in clean and "user:pw" not in clean and "abcdefgh123" not in clean
    assert "host/v1" in clean


def test_an_endpoint_error_carries_its_class() -> None:
    assert AgentRetryableError("x", failure_class="timeout", endpoint=True).endpoint
    assert not AgentRetryableError("scripted").endpoint


async def test_an_executor_whose_endpoint_fails_says_so_too(fake: FakeOpenAI, repository: Repository) -> None:
    fake.script("executor", error(502, "bad gateway"))
    run = await diagnose(repository, provider_for(fake))
    assert "model endpoint failed" in run.answer_text
    assert run.self_evaluation.verifier_evaluation.failure_reason.startswith("MODEL_ENDPOINT_FAILED: executor http_502")
