"""CheckEvidence: parse an executor output and run the Gatekeeper over given invocations.

The core of ``GatekeeperService.CheckEvidence`` and of ``diagnosis check``, for callers with
executors of their own. An output that does not parse is reported as ``PARSE_STATUS_INVALID_OUTPUT``
with no Gatekeeper result and no ceiling: a parse failure is not a Gatekeeper verdict.
"""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2
from diagnosis_server.conversions import from_struct
from diagnosis_server.gatekeeper.check import run_gatekeeper, verdict_ceiling
from diagnosis_server.protocols.executor import parse_executor_output
from diagnosis_server.verification import builder


class CheckInputError(ValueError):
    """The request itself is unusable; the message starts with the offending field."""


def check_evidence(
    request: gatekeeper_service_pb2.CheckEvidenceRequest,
) -> gatekeeper_service_pb2.CheckEvidenceResponse:
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
    result = run_gatekeeper(parsed, request.tool_invocations, run_id=run_id)
    ceiling = verdict_ceiling(result)
    response.gatekeeper_result.CopyFrom(result)
    response.verdict_ceiling = ceiling
    if ceiling != contracts_pb2.VERDICT_REJECT:
        projected, evidence = builder.verified_projection(parsed.output, result)
        response.verified_executor_output.CopyFrom(projected)
        response.verified_evidence.extend(evidence)
    return response


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
