"""The Gatekeeper: (legal executor output, this run's invocations) -> ``gatekeeper_result`` (R-C-3).

Pure and deterministic: the same inputs give the same result, in a stable order (claims in order,
bindings in order, source invocation ids in order). Each (binding, source invocation id) pair is one
checked binding. The cost is linear in the number of pairs.
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis.v1 import contracts_pb2
from diagnosis_server.gatekeeper.rules import (
    INSTRUCTION_TEXT,
    INVOCATION_REF,
    MATCHED_TEXT,
    RAW_PATH,
    RULES,
    SCHEMA,
    EvidenceIndex,
)
from diagnosis_server.protocols.executor import ExecutorParse, SchemaIssue

__all__ = ["INVOCATION_REF", "MATCHED_TEXT", "RAW_PATH", "RULES", "SCHEMA", "run_gatekeeper"]

_CLAIM_STATUSES = frozenset({contracts_pb2.CLAIM_STATUS_CONFIRMED, contracts_pb2.CLAIM_STATUS_HYPOTHESIS})


def run_gatekeeper(
    parsed: ExecutorParse,
    invocations: Sequence[contracts_pb2.ToolInvocation],
    *,
    run_id: str,
) -> contracts_pb2.GatekeeperResult:
    """Checks every binding of a legal parse against this run's invocations (R-GK-1..5).

    Invocations recorded under another (non-empty) run id than ``run_id`` are foreign: bindings to
    them fail ``evidence.invocation_ref``.
    """
    output = parsed.output
    if not parsed.ok or output is None:
        raise ValueError(
            "run_gatekeeper needs a legal executor_evidence_v2 parse: INVALID_OUTPUT is a parse status, "
            "not a Gatekeeper verdict"
        )
    check = EvidenceIndex(invocations, run_id=run_id).check
    result = contracts_pb2.GatekeeperResult()
    checked = result.checked_bindings
    errors = result.errors
    warnings = result.warnings
    failures = dict.fromkeys(RULES, 0)
    warned = dict.fromkeys(RULES, 0)
    passed = failed_pairs = 0

    for name in parsed.forbidden_fields:
        errors.add(rule=SCHEMA, binding_index=-1, message=f"{name} is a removed field of executor_evidence_v2")
        failures[SCHEMA] += 1
    claim_issues, binding_issues = _place_issues(parsed.schema_issues, output)
    for issue in claim_issues.get(-1, ()):
        errors.add(rule=SCHEMA, claim_id=issue.claim_id, binding_index=-1, message=issue.message)
        failures[SCHEMA] += 1

    for claim_index, claim in enumerate(output.claims):
        claim_id = claim.claim_id
        claim_status = claim.status
        for issue in claim_issues.get(claim_index, ()) if claim_issues else ():
            errors.add(rule=SCHEMA, claim_id=claim_id, binding_index=-1, message=issue.message)
            failures[SCHEMA] += 1
        if claim_status not in _CLAIM_STATUSES:
            errors.add(rule=SCHEMA, claim_id=claim_id, binding_index=-1, message="claim status is unspecified")
            failures[SCHEMA] += 1
        bindings = claim.evidence_bindings
        if not bindings and claim_status == contracts_pb2.CLAIM_STATUS_CONFIRMED:
            errors.add(
                rule=SCHEMA, claim_id=claim_id, binding_index=-1, message="confirmed claim has no evidence_bindings"
            )
            failures[SCHEMA] += 1
        for binding_index, binding in enumerate(bindings):
            tool_name = binding.tool_name
            raw_path = binding.raw_path
            matched_text = binding.matched_text
            source_ids = binding.source_invocation_ids
            problems = binding_issues.get((claim_index, binding_index)) if binding_issues else None
            # A binding with schema problems fails SCHEMA for each of its pairs, without a look at the evidence.
            schema_message = "; ".join(problems) if problems else None
            if schema_message is not None and not source_ids:
                errors.add(rule=SCHEMA, claim_id=claim_id, binding_index=binding_index, message=schema_message)
                failures[SCHEMA] += 1
            for source_id in source_ids:
                if schema_message is None:
                    failed_rule, warning_rule, message = check(source_id, tool_name, raw_path, matched_text)
                else:
                    failed_rule, warning_rule, message = SCHEMA, None, schema_message
                # Field by field: about 2.5 times cheaper than add(**fields) (empty repeated fields are not set).
                pair = checked.add()
                pair.claim_id = claim_id
                pair.binding_index = binding_index
                pair.source_invocation_id = source_id
                pair.tool_name = tool_name
                pair.raw_path = raw_path
                pair.matched_text = matched_text
                # A failed pair is an error of its failed rule; a passed one may be a warning of its warning rule.
                if failed_rule is None:
                    pair.passed = True
                    passed += 1
                    if warning_rule is None:
                        continue
                    rule, issues, counts = warning_rule, warnings, warned
                else:
                    pair.failed_rules.append(failed_rule)
                    failed_pairs += 1
                    rule, issues, counts = failed_rule, errors, failures
                if warning_rule is not None:
                    pair.warning_rules.append(warning_rule)
                issues.add(
                    rule=rule,
                    claim_id=claim_id,
                    binding_index=binding_index,
                    source_invocation_id=source_id,
                    message=message,
                )
                counts[rule] += 1

    for rule in RULES:
        if failures[rule]:
            status = contracts_pb2.GATEKEEPER_STATUS_FAIL
        elif warned[rule]:
            status = contracts_pb2.GATEKEEPER_STATUS_WARN
        else:
            status = contracts_pb2.GATEKEEPER_STATUS_PASS
        result.rules.add(rule=rule, status=status, failures=failures[rule], warnings=warned[rule])
    result.failed_rules.extend(sorted(rule for rule in RULES if failures[rule]))
    if result.failed_rules:
        result.status = contracts_pb2.GATEKEEPER_STATUS_FAIL
    elif result.warnings:
        result.status = contracts_pb2.GATEKEEPER_STATUS_WARN
    else:
        result.status = contracts_pb2.GATEKEEPER_STATUS_PASS
    if failures[SCHEMA] or passed == 0:
        result.severity = contracts_pb2.GATEKEEPER_SEVERITY_REJECT
    elif failed_pairs or any(w.rule != INSTRUCTION_TEXT for w in result.warnings):
        # An instruction-like value lowers only the claims bound to it (the guarded Verifier caps them at
        # unsupported), never the run's ceiling: a cause found elsewhere keeps its verdict.
        result.severity = contracts_pb2.GATEKEEPER_SEVERITY_LOW_CONFID
    else:
        result.severity = contracts_pb2.GATEKEEPER_SEVERITY_PASS
    return result


def _place_issues(
    issues: Sequence[SchemaIssue], output: contracts_pb2.ExecutorEvidenceV2
) -> tuple[dict[int, list[SchemaIssue]], dict[tuple[int, int], list[str]]]:
    """Schema issues by claim index (claim-level; -1: no such claim) and by (claim index, binding index)."""
    claim_level: dict[int, list[SchemaIssue]] = {}
    binding_level: dict[tuple[int, int], list[str]] = {}
    first_by_id: dict[str, int] | None = None
    for issue in issues:
        claim_index = issue.claim_index
        if not 0 <= claim_index < len(output.claims):
            # An issue that does not say where its claim is: the first claim with its id.
            if first_by_id is None:
                first_by_id = {}
                for i, claim in enumerate(output.claims):
                    first_by_id.setdefault(claim.claim_id, i)
            claim_index = first_by_id.get(issue.claim_id, -1)
        bindings = output.claims[claim_index].evidence_bindings if claim_index >= 0 else ()
        if claim_index >= 0 and 0 <= issue.binding_index < len(bindings):
            binding_level.setdefault((claim_index, issue.binding_index), []).append(issue.message)
        else:
            claim_level.setdefault(claim_index, []).append(issue)
    return claim_level, binding_level
