"""Gatekeeper throughput: checked bindings per second on generated outputs of 10, 100 and 1,000 bindings.

The baseline is the same check at 10 bindings: ``growth`` is cost per binding at size N over cost per
binding at 10 (1.0 = linear).
"""

from __future__ import annotations

import json

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import to_struct, to_value
from diagnosis_server.gatekeeper import run_gatekeeper
from diagnosis_server.protocols.executor import parse_executor_output

from bench.timing import per_op

RUN_ID = "run-bench"


def generated(bindings: int) -> tuple[object, list[contracts_pb2.ToolInvocation]]:
    """An executor output with ``bindings`` bindings over bindings/10 invocations, as a real run has."""
    invocations = []
    per_invocation = 10
    for i in range(max(1, bindings // per_invocation)):
        output = {
            "service": f"svc-{i}",
            "lines": [{"ts": f"2026-11-30T10:{j:02d}:00Z", "message": f"error {i}-{j} status=503"} for j in range(10)],
            "summary": {"max": 0.25 + i, "baseline_mean": 0.01},
        }
        invocations.append(
            contracts_pb2.ToolInvocation(
                invocation_id=f"inv-{i}",
                run_id=RUN_ID,
                tool_name="logs.search",
                arguments=to_struct({"service": f"svc-{i}"}),
                output=to_value(output),
                status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
            )
        )
    claims = []
    for k in range(bindings):
        i, j = divmod(k, per_invocation)
        i %= len(invocations)
        claims.append(
            {
                "claim_id": f"c{k}",
                "statement": f"svc-{i} logged error {i}-{j}",
                "critical": k == 0,
                "status": "confirmed",
                "evidence_bindings": [
                    {
                        "source_invocation_ids": [f"inv-{i}"],
                        "tool_name": "logs.search",
                        "raw_path": f"/lines/{j}/message",
                        "matched_text": f"error {i}-{j}",
                    }
                ],
            }
        )
    parsed = parse_executor_output(json.dumps({"contract": "executor_evidence_v2", "claims": claims}))
    assert parsed.ok, parsed.error
    return parsed, invocations


def measure() -> dict[str, object]:
    per_binding: dict[str, float] = {}
    rates: dict[str, float] = {}
    for size in (10, 100, 1000):
        parsed, invocations = generated(size)
        result = run_gatekeeper(parsed, invocations, run_id=RUN_ID)  # type: ignore[arg-type]
        assert len(result.checked_bindings) == size
        assert result.status == contracts_pb2.GATEKEEPER_STATUS_PASS
        seconds = per_op(lambda: run_gatekeeper(parsed, invocations, run_id=RUN_ID), ops=max(3, 3000 // size))  # type: ignore[arg-type]
        per_binding[str(size)] = seconds / size
        rates[str(size)] = size / seconds
    base = per_binding["10"]
    return {
        "gatekeeper_bindings_per_s": rates,
        "gatekeeper_growth_vs_10": {size: cost / base for size, cost in per_binding.items()},
    }


if __name__ == "__main__":
    print(measure())
