"""Odd tool outputs never crash the detectors: whatever a tool returns, the Executor still answers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis_server.agents.heuristic.diagnosis import assess
from diagnosis_server.agents.heuristic.observations import Observation
from diagnosis_server.conversions import JsonValue

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["checkout-api", "OOMKilled", "2024-05-01T10:00:00Z", "ERROR", "x509: certificate has expired"]),
    st.text(max_size=20),
)
_JSON: st.SearchStrategy[JsonValue] = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "service",
                    "metric",
                    "points",
                    "summary",
                    "labels",
                    "lines",
                    "events",
                    "deploys",
                    "message",
                    "reason",
                    "ts",
                    "max",
                    "baseline_mean",
                    "limit",
                    "version",
                    "level",
                ]
            ),
            inner,
            max_size=6,
        ),
    ),
    max_leaves=30,
)
_TOOLS = st.sampled_from(["logs.search", "metrics.query", "deploys.list", "k8s.events", "topology.dependencies"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_TOOLS, st.dictionaries(st.sampled_from(["service", "metric"]), _JSON, max_size=6)), max_size=5)
)
def test_assess_never_raises_and_every_claim_keeps_its_bindings(
    outputs: list[tuple[str, dict[str, JsonValue]]],
) -> None:
    observations = [
        Observation(index, tool, {}, f"inv-{index}", output) for index, (tool, output) in enumerate(outputs)
    ]
    assessment = assess(observations)
    for claim in assessment.claims:
        assert claim.bindings and claim.statement
        assert {b.invocation_id for b in claim.bindings} <= {o.invocation_id for o in observations}


_TEXT = st.one_of(
    st.sampled_from(
        [
            "Connection is not available, request timed out after 30000ms",
            "upstream=pricing-svc context deadline exceeded",
            "ENOSPC (No space left on device)",
            "x509: certificate has expired or is not yet valid partner-auth",
            '"GET /x HTTP/1.1" 503 0 checkout-api',
            "Back-off restarting failed container checkout-api",
        ]
    ),
    st.text(max_size=30),
)
_SHAPED = st.one_of(
    st.fixed_dictionaries(
        {
            "tool": st.just("logs.search"),
            "service": st.sampled_from(["checkout-api", "pricing-svc", "partner-auth"]),
            "lines": st.lists(
                st.fixed_dictionaries(
                    {"ts": _SCALARS, "level": st.sampled_from(["WARN", "ERROR", "INFO"]), "message": _TEXT}
                ),
                max_size=4,
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "tool": st.just("metrics.query"),
            "metric": st.sampled_from(
                [
                    "http_requests_error_rate",
                    "disk_used_ratio",
                    "tls_certificate_expiry_seconds",
                    "db_connections_in_use",
                    "db_connections_max",
                    "container_memory_working_set_bytes",
                ]
            ),
            "service": st.sampled_from(["checkout-api", "orders-db"]),
            "unit": _SCALARS,
            "labels": st.dictionaries(st.sampled_from(["limit", "upstream", "desired", "not_after"]), _SCALARS),
            "points": st.lists(
                st.tuples(st.sampled_from(["2024-05-01T10:00:00Z", "2024-05-01T10:01:00Z", "bad"]), _SCALARS).map(list),
                max_size=6,
            ),
            "summary": st.dictionaries(st.sampled_from(["max", "min", "first", "baseline_mean"]), _SCALARS),
        }
    ),
    st.fixed_dictionaries(
        {
            "tool": st.sampled_from(["k8s.events", "deploys.list"]),
            "events": st.lists(
                st.fixed_dictionaries(
                    {
                        "ts": _SCALARS,
                        "service": _SCALARS,
                        "reason": st.sampled_from(["OOMKilled", "BackOff", "FailedMount", "SuccessfulRescale"]),
                        "message": _TEXT,
                        "object": _SCALARS,
                        "kind": _SCALARS,
                    }
                ),
                max_size=3,
            ),
            "deploys": st.lists(
                st.fixed_dictionaries({"ts": _SCALARS, "service": _SCALARS, "version": _SCALARS, "summary": _SCALARS}),
                max_size=2,
            ),
        }
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_SHAPED, max_size=6))
def test_tool_shaped_outputs_with_odd_values_never_crash(outputs: list[dict[str, JsonValue]]) -> None:
    observations = [Observation(i, str(output.pop("tool")), {}, f"inv-{i}", output) for i, output in enumerate(outputs)]
    assessment = assess(observations)
    assert all(claim.bindings for claim in assessment.claims)
