"""The pure safety core over the golden and adversarial cases, step by step, as one JSON record a case.

``tests/golden/test_core_snapshot.py`` compares each case's record with ``snapshots/core.jsonl``: the
characterization of what the Gatekeeper, the verified-input builder, the Verifier protocol parser and guard,
the effective verdict and retry eligibility, the allowed material, the Composer protocol and guard, the
renderings and the fallback notes do with each case's agent outputs. Every step is pure and deterministic, so
any change of behaviour in the core changes a record: review the diff, then rewrite the snapshot with
``.venv/bin/python -m tests.golden.core_pipeline --write``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.composer_rules import composer_output_violations
from diagnosis_server.composition.material import allowed_material, excluded_statements
from diagnosis_server.composition.notes import RunRecord, post_verification_notes, pre_verification_notes
from diagnosis_server.composition.render import (
    answer_text,
    render_answer,
    render_pre_verification_fallback,
    render_verified,
)
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.conversions import message_to_dict, to_struct, to_value
from diagnosis_server.evaluation import EvalCase, read_cases
from diagnosis_server.gatekeeper import run_gatekeeper
from diagnosis_server.graph.nodes.gatekeeper import bound_values
from diagnosis_server.protocols.composer import parse_composer_output
from diagnosis_server.protocols.executor import parse_executor_output
from diagnosis_server.protocols.planner import parse_planner_output
from diagnosis_server.protocols.verifier import parse_verifier_output
from diagnosis_server.tools import TOOL_NAMES
from diagnosis_server.verification.classification_ceiling import guard_claim_checks
from diagnosis_server.verification.verdict import (
    effective_verdict,
    evidence_retry_eligible,
    lowest_verdict,
    retry_context_for,
    verdict_ceiling,
)
from diagnosis_server.verification.verified_input import build_verifier_input, serialize_verifier_input

HERE = Path(__file__).resolve().parent
SNAPSHOT = HERE / "snapshots" / "core.jsonl"
RUN_ID = "run-core"
OTHER_RUN_ID = "run-core-other"


def cases() -> list[EvalCase]:
    return [case for path in sorted(HERE.glob("*.jsonl")) for case in read_cases(path)]


def _invocations(case: EvalCase) -> list[contracts_pb2.ToolInvocation]:
    return [
        contracts_pb2.ToolInvocation(
            invocation_id=inv.invocation_id,
            run_id=OTHER_RUN_ID if inv.foreign else RUN_ID,
            tool_name=inv.tool_name,
            arguments=to_struct(inv.arguments),
            output=to_value(inv.output),
            status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
            cycle=inv.cycle,
        )
        for inv in case.tool_invocations
    ]


def _d(message: Any) -> Any:
    return message_to_dict(message) if message is not None else None


def _material(
    case: EvalCase,
    verifier_input: contracts_pb2.VerifierInput,
    raw: str,
    values: dict[tuple[str, str], str],
    calls: list[RecordedCall],
    tools: list[str],
) -> Iterator[tuple[str, Any]]:
    parsed = parse_verifier_output(raw, verifier_input)
    yield "verifier_parse", {"ok": parsed.ok, "error": parsed.error, "output": _d(parsed.output)}
    if not parsed.ok or parsed.output is None:
        return
    guarded, fabricated = guard_claim_checks(parsed.output, verifier_input, values)
    ceiling = verifier_input.verdict_ceiling
    effective = effective_verdict(
        model_verdict=guarded.verdict,
        checks=guarded.claim_checks,
        groundedness_score=guarded.groundedness_score,
        ceiling=ceiling,
    )
    if fabricated:
        effective = lowest_verdict(effective, contracts_pb2.VERDICT_REJECT)
    retry = evidence_retry_eligible(
        effective=effective,
        ceiling=ceiling,
        gaps=guarded.evidence_gaps,
        verified_output=verifier_input.verified_executor_output,
        evidence_retry_count=0,
    )
    context = retry_context_for(guarded.evidence_gaps, verifier_input.verified_executor_output, evidence_retry_count=1)
    yield "guarded", _d(guarded)
    yield "fabricated", sorted(fabricated)
    yield "verdict", {"effective": effective, "retry": retry, "retry_context": _d(context)}
    material = allowed_material(
        verifier_input=verifier_input,
        verifier_output=guarded,
        effective=effective,
        recorded_calls=calls,
        known_values=[case.question, "checkout-api"],
        tool_names=tools,
    )
    excluded = excluded_statements(verifier_input=verifier_input, material=material)
    yield "material", {"json": material.to_json(), "excluded": list(excluded), "labels": dict(material.labels)}
    fallback = render_verified(material, notes=post_verification_notes(RunRecord(reason_code="COMPOSER_FAILED")))
    yield "post_fallback", answer_text(fallback)
    for index, text in enumerate(case.agent_outputs.composer):
        composed = parse_composer_output(text)
        violations = composer_output_violations(composed, material, excluded_statements=excluded, tool_names=tools)
        record: dict[str, Any] = {
            "ok": composed.ok,
            "error": composed.error,
            "headline": composed.headline,
            "refs": sorted(f"{name}[{i}]={ref}" for (name, i), ref in composed.refs.items()),
            "violations": [f"{v.rule}: {v.message}" for v in violations],
        }
        if composed.ok and not violations:
            record["answer"] = answer_text(render_answer(material, composed))
        yield f"composer[{index}]", record
    refused = RunRecord(reason_code="COMPOSER_FAILED", composer_refusal=("composer.citation",))
    yield "post_notes", post_verification_notes(refused)
    yield "pre_fallback_known", answer_text(render_pre_verification_fallback(["n"], known=material))


def record(case: EvalCase) -> dict[str, Any]:
    """What the pure core does with one case's agent outputs, step by step."""
    invocations = _invocations(case)
    own = [i for i in invocations if i.run_id == RUN_ID]
    tools = list(dict.fromkeys([*TOOL_NAMES, *(i.tool_name for i in invocations)]))
    calls = [RecordedCall.of(i) for i in own]
    out: dict[str, Any] = {"case_id": case.case_id}
    out["planner"] = [
        [parsed.ok, parsed.error, [(s.tool_name, s.arguments, s.purpose) for s in parsed.steps]]
        for parsed in (parse_planner_output(text, allowed_tools=tools) for text in case.agent_outputs.planner)
    ]
    for index, raw in enumerate(case.agent_outputs.executor):
        step: dict[str, Any] = {}
        parsed = parse_executor_output(raw)
        step["parse"] = {
            "status": parsed.status,
            "error": parsed.error,
            "forbidden": list(parsed.forbidden_fields),
            "issues": [[i.claim_id, i.binding_index, i.claim_index, i.message] for i in parsed.schema_issues],
            "output": _d(parsed.output),
        }
        if parsed.ok and parsed.output is not None:
            result = run_gatekeeper(parsed, invocations, run_id=RUN_ID)
            values = bound_values(result, own)
            gatekeeper_notes = RunRecord(
                reason_code="GATEKEEPER_REJECT",
                executor_parse_status=parsed.status,
                claims=len(parsed.output.claims),
                gatekeeper=result,
                calls=tuple(calls),
                calls_known=True,
            )
            step["gatekeeper"] = _d(result)
            step["ceiling"] = verdict_ceiling(result)
            step["bound_values"] = sorted(f"{k[0]} {k[1]} = {v}" for k, v in values.items())
            step["pre_notes"] = pre_verification_notes(gatekeeper_notes)
            step["pre_fallback"] = answer_text(
                render_pre_verification_fallback(pre_verification_notes(gatekeeper_notes))
            )
            context = contracts_pb2.DiagnosisContext(question=case.question, scenario=case.scenario, cycle=index + 1)
            verifier_input = build_verifier_input(output=parsed.output, result=result, context=context)
            step["verifier_input"] = (
                serialize_verifier_input(verifier_input).decode("utf-8") if verifier_input is not None else None
            )
            if verifier_input is not None:
                for v_index, text in enumerate(case.agent_outputs.verifier):
                    step[f"verifier[{v_index}]"] = dict(_material(case, verifier_input, text, values, calls, tools))
        else:
            reason = RunRecord(reason_code="EXECUTOR_INVALID_OUTPUT", executor_parse_status=parsed.status)
            step["pre_notes"] = pre_verification_notes(reason)
        out[f"executor[{index}]"] = step
    return out


def line(case: EvalCase) -> str:
    return json.dumps(record(case), sort_keys=True, ensure_ascii=False)


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print("usage: python -m tests.golden.core_pipeline --write", file=sys.stderr)
        return 2
    SNAPSHOT.write_text("".join(line(case) + "\n" for case in cases()), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
