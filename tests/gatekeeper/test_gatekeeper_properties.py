"""Property tests of the Gatekeeper: deterministic (R-GK-*, R-VI-4) and internally consistent (R-C-3)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import to_value
from diagnosis_server.gatekeeper import RULES, SCHEMA, run_gatekeeper
from diagnosis_server.protocols.executor import parse_executor_output
from diagnosis_server.verification.verdict import verdict_ceiling

G = contracts_pb2
RUN = "run-1"
OUTPUTS: list[Any] = [
    {"events": [{"reason": "OOMKilled", "code": 137}], "status": 503},
    {"rate": 0.231, "ok": True, "msg": "Connection  Refused"},
    ["a", "b", {"c": "d"}],
    "plain text output",
]
IDS = ["inv-0", "inv-1", "inv-2", "inv-3"]
TOOLS = ["logs", "metrics"]
PATHS = [
    "",
    "/events/0/reason",
    "/events/0/code",
    "/status",
    "/rate",
    "/ok",
    "/msg",
    "/2/c",
    "/0",
    "/nope",
    "bad",
    "/~2",
]
TEXTS = ["OOMKilled", "137", "503", "0.231", "true", "connection refused", "d", "a", "plain", "zzz", "", "Refused"]

invocations = st.lists(
    st.builds(
        lambda i, tool, run, out, status: contracts_pb2.ToolInvocation(
            invocation_id=i, run_id=run, tool_name=tool, output=to_value(OUTPUTS[out]), status=status
        ),
        st.sampled_from(IDS),
        st.sampled_from(TOOLS),
        st.sampled_from([RUN, RUN, "", "run-2"]),
        st.integers(0, len(OUTPUTS) - 1),
        st.sampled_from([G.TOOL_INVOCATION_STATUS_OK] * 4 + [G.TOOL_INVOCATION_STATUS_ERROR]),
    ),
    max_size=5,
)
bindings = st.fixed_dictionaries(
    {
        "source_invocation_ids": st.lists(st.sampled_from([*IDS, "inv-x"]), max_size=3),
        "tool_name": st.sampled_from(TOOLS),
        "raw_path": st.sampled_from(PATHS),
        "matched_text": st.sampled_from(TEXTS),
    }
)
claims = st.fixed_dictionaries(
    {
        "claim_id": st.sampled_from(["c1", "c2", "c3", "c4"]),
        "statement": st.sampled_from(["s", ""]),
        "critical": st.booleans(),
        "status": st.sampled_from(["confirmed", "hypothesis"]),
        "evidence_bindings": st.lists(bindings, max_size=3),
    }
)
outputs = st.fixed_dictionaries(
    {"contract": st.just("executor_evidence_v2"), "claims": st.lists(claims, max_size=5)},
    optional={"user_facing_answer": st.just("answer")},
)


@settings(max_examples=150, deadline=None)
@given(outputs, invocations)
def test_run_gatekeeper_is_deterministic(doc: dict[str, Any], invs: list[contracts_pb2.ToolInvocation]) -> None:
    parsed = parse_executor_output(doc)
    assert parsed.ok
    first = run_gatekeeper(parsed, invs, run_id=RUN)
    copies = []
    for invocation in reversed(invs):  # the order of the invocations does not matter either
        copy = contracts_pb2.ToolInvocation()
        copy.CopyFrom(invocation)
        copies.append(copy)
    again = run_gatekeeper(parse_executor_output(doc), copies, run_id=RUN)
    assert first == again
    assert first.SerializeToString(deterministic=True) == again.SerializeToString(deterministic=True)


@pytest.mark.requirement("R-C-3")
@settings(max_examples=150, deadline=None)
@given(outputs, invocations)
def test_result_is_consistent(doc: dict[str, Any], invs: list[contracts_pb2.ToolInvocation]) -> None:
    parsed = parse_executor_output(doc)
    result = run_gatekeeper(parsed, invs, run_id=RUN)
    assert parsed.output is not None
    expected_pairs = [
        (claim.claim_id, b_index, sid)
        for claim in parsed.output.claims
        for b_index, binding in enumerate(claim.evidence_bindings)
        for sid in binding.source_invocation_ids
    ]
    assert [(cb.claim_id, cb.binding_index, cb.source_invocation_id) for cb in result.checked_bindings] == (
        expected_pairs
    )
    for cb in result.checked_bindings:
        assert cb.passed == (not cb.failed_rules)
        assert len(cb.failed_rules) <= 1  # a pair stops at its first failed rule
        assert set(cb.failed_rules) <= set(RULES)
    error_counts = Counter(e.rule for e in result.errors)
    warning_counts = Counter(w.rule for w in result.warnings)
    assert [r.rule for r in result.rules] == list(RULES)
    for rule in result.rules:
        assert rule.failures == error_counts[rule.rule]
        assert rule.warnings == warning_counts[rule.rule]
    assert list(result.failed_rules) == sorted(error_counts)
    assert (result.status == G.GATEKEEPER_STATUS_FAIL) == bool(result.errors)
    passed = sum(cb.passed for cb in result.checked_bindings)
    if parsed.forbidden_fields:
        assert SCHEMA in result.failed_rules  # R-GK-1
    if SCHEMA in result.failed_rules or passed == 0:
        assert result.severity == G.GATEKEEPER_SEVERITY_REJECT  # R-GK-6
    elif result.errors or result.warnings:
        assert result.severity == G.GATEKEEPER_SEVERITY_LOW_CONFID  # R-GK-7
    else:
        assert result.severity == G.GATEKEEPER_SEVERITY_PASS  # R-GK-5
        assert verdict_ceiling(result) == G.VERDICT_PASS
