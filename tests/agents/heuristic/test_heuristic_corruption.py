"""A recorded tool output that differs from what the Executor saw is caught by the Gatekeeper, and the
answer degrades safely: not PASS, and the claim resting on the altered output is not in it (R-GK-5,
R-GK-7, R-VI-1, R-A-2)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.heuristic import create_provider
from diagnosis_server.conversions import JsonValue, from_value, to_value
from diagnosis_server.gatekeeper.rules import MATCHED_TEXT
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import Repository

from ._support import SCENARIOS, cited, environment


def _replace_strings(value: JsonValue, old: str, new: str) -> JsonValue:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace_strings(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _replace_strings(v, old, new) for k, v in value.items()}
    return value


def _events_oom_renamed(output: JsonValue) -> JsonValue:
    return _replace_strings(output, "OOMKilled", "Evicted")


def _error_peak_lowered(output: JsonValue) -> JsonValue:
    assert isinstance(output, dict)
    summary = output.get("summary")
    assert isinstance(summary, dict)
    return {**output, "summary": {**summary, "max": 0.0016}}


class CorruptingStore:
    """The repository, except that the persisted output of the first matching invocation is altered."""

    def __init__(
        self,
        repository: Repository,
        matches: Callable[[contracts_pb2.ToolInvocation], bool],
        alter: Callable[[JsonValue], JsonValue],
    ) -> None:
        self._repository = repository
        self._matches = matches
        self._alter = alter
        self.altered: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repository, name)

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        if not self.altered and self._matches(invocation):
            changed = contracts_pb2.ToolInvocation()
            changed.CopyFrom(invocation)
            changed.output.CopyFrom(to_value(self._alter(from_value(invocation.output))))
            self.altered.append(invocation.invocation_id)
            invocation = changed
        await self._repository.add_tool_invocation(invocation)


def _is(tool: str, **arguments: str) -> Callable[[contracts_pb2.ToolInvocation], bool]:
    def matches(invocation: contracts_pb2.ToolInvocation) -> bool:
        given = {k: v.string_value for k, v in invocation.arguments.fields.items()}
        return invocation.tool_name == tool and all(given.get(k) == v for k, v in arguments.items())

    return matches


CASES = [
    pytest.param(_is("k8s.events", service="checkout-api"), _events_oom_renamed, "OOMKilled", id="events-reason"),
    pytest.param(
        _is("metrics.query", service="checkout-api", metric="http_requests_error_rate"),
        _error_peak_lowered,
        "0.2457",
        id="metric-peak",
    ),
]


@pytest.mark.requirement("R-GK-5")
@pytest.mark.parametrize(("matches", "alter", "vanished"), CASES)
async def test_altered_recorded_output_is_caught_and_the_answer_degrades(
    repository: Repository,
    matches: Callable[[contracts_pb2.ToolInvocation], bool],
    alter: Callable[[JsonValue], JsonValue],
    vanished: str,
) -> None:
    store = CorruptingStore(repository, matches, alter)
    orchestrator = Orchestrator(store=store, provider=create_provider(), tools_for=environment)
    run = await orchestrator.run(question=SCENARIOS["checkout-oom"].question, scenario="checkout-oom")
    stored = await repository.get_run(run.run_id)
    assert stored is not None and store.altered

    evaluation = stored.self_evaluation.verifier_evaluation
    result = evaluation.gatekeeper_result
    assert MATCHED_TEXT in result.failed_rules
    failed = [b for b in result.checked_bindings if not b.passed]
    assert failed and all(b.source_invocation_id == store.altered[0] for b in failed)
    assert all(b.failed_rules == [MATCHED_TEXT] for b in failed)
    damaged = {b.claim_id for b in failed}

    # Degraded, safely: a successful run whose verdict is capped below PASS.
    assert stored.status == run_pb2.RUN_STATUS_SUCCESS
    assert result.severity == contracts_pb2.GATEKEEPER_SEVERITY_LOW_CONFID
    assert stored.verdict != contracts_pb2.VERDICT_PASS
    assert stored.orchestration_trace.degraded
    assert stored.orchestration_trace.evidence_retry_count == 0

    # The claims resting on the altered output are neither cited nor stated.
    checks = {c.claim_id: c.classification for c in evaluation.claim_checks}
    for claim_id in damaged:
        assert claim_id not in cited(stored)
        assert checks.get(claim_id) in (
            None,
            contracts_pb2.CLAIM_CLASSIFICATION_UNSUPPORTED,
            contracts_pb2.CLAIM_CLASSIFICATION_CONTRADICTED,
        )
    # The altered value is stated only where another call recorded it unaltered (the same series read from
    # Prometheus, say).
    if vanished in stored.answer_text:
        others = [i for i in await repository.list_tool_invocations(run.run_id) if i.invocation_id != store.altered[0]]
        assert any(vanished in json.dumps(MessageToDict(i.output)) for i in others)
    # Facts are direct observations; a direction may be an inference resting on them.
    facts = {cid for item in stored.answer.confirmed_facts for cid in item.claim_ids}
    assert facts <= {cid for cid, c in checks.items() if c == contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION}
    assert cited(stored) <= {
        cid
        for cid, c in checks.items()
        if c
        in (
            contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION,
            contracts_pb2.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE,
        )
    }
