"""Gatekeeper throughput: checked bindings per second on generated outputs of 10, 100 and 1,000 bindings.

The baseline is the same check at 10 bindings: ``growth`` is cost per binding at size N over cost per
binding at 10 (1.0 = linear). The outputs are what a real run produces: bindings over bindings/10 tool
invocations of ten log lines each, every binding a verbatim substring of the line it points at.
"""

from __future__ import annotations

import functools
import gc
import json
import statistics
from collections.abc import Sequence

from bench.profiling import ProfileSummary, profile_sync
from bench.timing import per_op
from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonObject, to_struct, to_value
from diagnosis_server.gatekeeper import run_gatekeeper
from diagnosis_server.protocols.executor import ExecutorParse, parse_executor_output

RUN_ID = "run-bench"


def generated(bindings: int) -> tuple[ExecutorParse, list[contracts_pb2.ToolInvocation]]:
    """An executor output with ``bindings`` bindings over bindings/10 invocations, as a real run has."""
    invocations = []
    per_invocation = 10
    for i in range(max(1, bindings // per_invocation)):
        output: JsonObject = {
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


SIZES = (10, 100, 1000)


def floor_check(parsed: ExecutorParse, invocations: Sequence[contracts_pb2.ToolInvocation]) -> int:
    """The floor: a minimal pure-Python loop doing the Gatekeeper's lookups on the protobuf values, for each
    (binding, source id) pair: the invocation by id, its output walked along the binding's pointer, the
    matched text in the string found there. No rules, no findings, no result message."""
    by_id = {invocation.invocation_id: invocation for invocation in invocations}
    found = 0
    assert parsed.output is not None
    for claim in parsed.output.claims:
        for binding in claim.evidence_bindings:
            for source in binding.source_invocation_ids:
                value = by_id[source].output
                for part in binding.raw_path.split("/")[1:]:
                    if value.WhichOneof("kind") == "struct_value":
                        value = value.struct_value.fields[part]
                    else:
                        value = value.list_value.values[int(part)]
                if binding.matched_text in value.string_value:
                    found += 1
    return found


def measure(*, sizes: tuple[int, ...] = SIZES, bindings_per_round: int = 3000, rounds: int = 7) -> dict[str, object]:
    """Checked bindings/s at each output size, and cost per binding relative to the smallest size.

    Each round checks about ``bindings_per_round`` bindings at every size, sizes interleaved, so that
    noise on the machine falls on all of them; the best round of each size counts.
    """
    cases = {size: generated(size) for size in sizes}
    for size, (parsed, invocations) in cases.items():
        result = run_gatekeeper(parsed, invocations, run_id=RUN_ID)
        assert len(result.checked_bindings) == size
        assert result.status == contracts_pb2.GATEKEEPER_STATUS_PASS
        assert floor_check(parsed, invocations) == size
    best = dict.fromkeys(sizes, float("inf"))
    largest = max(sizes)
    ratios: list[float] = []
    floor_best = float("inf")
    for _ in range(rounds):
        for size, (parsed, invocations) in cases.items():
            gc.collect()
            check = functools.partial(run_gatekeeper, parsed, invocations, run_id=RUN_ID)
            seconds = per_op(check, ops=max(1, bindings_per_round // size), repeats=1)
            best[size] = min(best[size], seconds)
            if size == largest:
                floor = functools.partial(floor_check, parsed, invocations)
                floor_s = per_op(floor, ops=max(1, bindings_per_round // size), repeats=1)
                ratios.append(floor_s / seconds)  # bindings/s ours over the floor's
                floor_best = min(floor_best, floor_s)
    per_binding = {str(size): seconds / size for size, seconds in best.items()}
    base = per_binding[str(min(sizes))]
    return {
        "gatekeeper_bindings_per_s": {size: round(1 / cost) for size, cost in per_binding.items()},
        "gatekeeper_growth_vs_10": {size: round(cost / base, 3) for size, cost in per_binding.items()},
        "gatekeeper_vs_floor": round(statistics.median(ratios), 3),
        "gatekeeper_vs_floor_rounds": [round(r, 3) for r in ratios],
        "gatekeeper_floor_bindings": largest,
        "gatekeeper_floor_bindings_per_s": round(largest / floor_best),
        "gatekeeper_bindings_at_floor_size": round(largest / best[largest]),
    }


def profile(*, size: int = 1000, ops: int = 5) -> ProfileSummary:
    """A cProfile of the Gatekeeper checking an output of ``size`` bindings."""
    parsed, invocations = generated(size)
    return profile_sync(
        lambda: run_gatekeeper(parsed, invocations, run_id=RUN_ID), ops=ops, what=f"Gatekeeper, {size} bindings"
    )


if __name__ == "__main__":
    print(measure())
