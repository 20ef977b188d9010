"""CheckEvidence: parse an executor output and run the Gatekeeper over given invocations.

The core of ``GatekeeperService.CheckEvidence`` and of ``diagnosis check``, for callers with
executors of their own. An output that does not parse is reported as ``PARSE_STATUS_INVALID_OUTPUT``
with no Gatekeeper result and no ceiling: a parse failure is not a Gatekeeper verdict.
"""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2
from diagnosis_server.conversions import MAX_JSON_DEPTH, from_struct, value_depth
from diagnosis_server.gatekeeper import run_gatekeeper
from diagnosis_server.limits import DEFAULT_LIMITS, Limits
from diagnosis_server.protocols.executor import parse_executor_output
from diagnosis_server.verification.verdict import verdict_ceiling
from diagnosis_server.verification.verified_input import verified_projection


class CheckInputError(ValueError):
    """The request itself is unusable; the message starts with the offending field."""


def check_evidence(
    request: gatekeeper_service_pb2.CheckEvidenceRequest, limits: Limits = DEFAULT_LIMITS
) -> gatekeeper_service_pb2.CheckEvidenceResponse:
    """The Gatekeeper over a request; CheckInputError (naming the field and the limit) for unusable input."""
    _check_bounds(request, limits)
    run_id = _run_id(request)
    which = request.WhichOneof("executor_output")
    if which == "executor_output_text":
        parsed = parse_executor_output(request.executor_output_text)
    elif which == "executor_output_json":
        parsed = parse_executor_output(from_struct(request.executor_output_json))
    else:
        raise CheckInputError("executor_output: missing; set executor_output_text or executor_output_json")

    response = gatekeeper_service_pb2.CheckEvidenceResponse(parse_status=parsed.status)
    if not parsed.ok or parsed.output is None:
        response.parse_error = parsed.error
        return response
    _check_claims(parsed.output, limits)
    result = run_gatekeeper(parsed, request.tool_invocations, run_id=run_id)
    ceiling = verdict_ceiling(result)
    response.gatekeeper_result.CopyFrom(result)
    response.verdict_ceiling = ceiling
    if ceiling != contracts_pb2.VERDICT_REJECT:
        projected, evidence = verified_projection(parsed.output, result)
        response.verified_executor_output.CopyFrom(projected)
        response.verified_evidence.extend(evidence)
    size = response.ByteSize()
    if size > limits.check_max_response_bytes:
        raise CheckInputError(
            f"request: the response would be {size} bytes, over the limit of {limits.check_max_response_bytes}; "
            "check fewer claims or shorter matched texts per request"
        )
    return response


def _check_bounds(request: gatekeeper_service_pb2.CheckEvidenceRequest, limits: Limits) -> None:
    """Counts and depths, checked before anything is parsed or matched."""
    _at_most("tool_invocations", "invocations", len(request.tool_invocations), limits.check_max_invocations)
    for position, invocation in enumerate(request.tool_invocations):
        for name, value in (("output", invocation.output), ("arguments", invocation.arguments)):
            if value_depth(value) > MAX_JSON_DEPTH:
                raise CheckInputError(f"tool_invocations[{position}].{name}: nested deeper than {MAX_JSON_DEPTH}")
    if request.HasField("executor_output_json") and value_depth(request.executor_output_json) > MAX_JSON_DEPTH:
        raise CheckInputError(f"executor_output_json: nested deeper than {MAX_JSON_DEPTH}")


def _check_claims(output: contracts_pb2.ExecutorEvidenceV2, limits: Limits) -> None:
    _at_most("executor_output", "claims", len(output.claims), limits.check_max_claims)
    bindings = sum(len(claim.evidence_bindings) for claim in output.claims)
    _at_most("executor_output", "evidence bindings", bindings, limits.check_max_bindings)
    source_ids = sum(len(b.source_invocation_ids) for claim in output.claims for b in claim.evidence_bindings)
    _at_most("executor_output", "source invocation ids", source_ids, limits.check_max_source_ids)


def _at_most(field: str, what: str, count: int, limit: int) -> None:
    if count > limit:
        raise CheckInputError(f"{field}: {count} {what}, over the limit of {limit}")


def _run_id(request: gatekeeper_service_pb2.CheckEvidenceRequest) -> str:
    seen: set[str] = set()
    run_ids: set[str] = set()
    for position, invocation in enumerate(request.tool_invocations):
        invocation_id = invocation.invocation_id
        if not invocation_id:
            raise CheckInputError(f"tool_invocations[{position}].invocation_id: empty")
        if invocation_id in seen:
            raise CheckInputError(f"tool_invocations[{position}].invocation_id: duplicate id {invocation_id!r}")
        seen.add(invocation_id)
        if invocation.run_id:
            run_ids.add(invocation.run_id)
    if request.run_id:
        return request.run_id
    if len(run_ids) > 1:
        raise CheckInputError("tool_invocations: invocations belong to different runs; set run_id")
    return next(iter(run_ids), "")
