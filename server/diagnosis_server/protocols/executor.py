"""Executor protocol: raw Executor text -> ``executor_evidence_v2`` (R-C-1).

The Executor's only legal output is one JSON object::

    {"contract": "executor_evidence_v2",
     "claims": [{"claim_id", "statement", "critical", "status",
                 "evidence_bindings": [{"source_invocation_ids", "tool_name", "raw_path", "matched_text"}]}],
     "evidence_gaps": [{"description", "critical", "next_calls"?: [{"tool_name", "arguments"}], "subject"?}]}

The shape is ``ExecutorReply`` (``protocols.shapes``). Three kinds of problems are told apart:

* an illegal shape (not JSON, wrong contract, wrong JSON types, unknown fields, too big or too deep, a
  claim id that is not an identifier (``protocols.fields.CLAIM_ID``): ``PARSE_STATUS_INVALID_OUTPUT``,
  with the path of the offending field in ``error``;
* the removed fields ``diagnosis_summary`` / ``user_facing_answer`` on a legal shape: the output parses
  and ``forbidden_fields`` names them, so that the Gatekeeper fails it (R-GK-1);
* semantic defects of a legal shape (duplicate ids, empty texts, a raw path that is not a JSON Pointer):
  ``schema_issues``, which the Gatekeeper turns into ``schema.executor_v2`` failures.

A top-level ``reasoning`` field is accepted and dropped: it never leaves this module (R-VI-2).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

from pydantic import Field

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import MAX_JSON_DEPTH, EnumType
from diagnosis_server.protocols import fields, shapes
from diagnosis_server.protocols.json_text import unpaired_surrogate
from diagnosis_server.protocols.shapes import Shape
from diagnosis_server.text.redaction import redact_text

CONTRACT = "executor_evidence_v2"
FORBIDDEN_FIELDS: tuple[str, ...] = ("diagnosis_summary", "user_facing_answer")
MAX_INPUT_BYTES = 1 << 20
# A claim states one finding: a longer statement is a schema issue, and only its first this many characters are
# kept, so no later step (fact extraction, duplicate-fact removal, redaction, rendering) works on more.
MAX_STATEMENT_CHARS = 2000
MAX_DEPTH = MAX_JSON_DEPTH  # the service's one JSON depth bound

_IGNORED_FIELDS = frozenset({"reasoning"})

_FENCE = re.compile(r"```(?:json)?[ \t]*\r?\n?(.*?)\r?\n?```", re.DOTALL | re.IGNORECASE)
# RFC 6901: "" or a sequence of "/" reference tokens in which "~" only appears as "~0" or "~1".
_POINTER = re.compile(r"(?:/(?:[^~/]|~[01])*)*")
_CLAIM_STATUS: EnumType = cast(Any, contracts_pb2.ClaimStatus)


@dataclass(frozen=True, slots=True)
class SchemaIssue:
    """A semantic defect of a legally shaped output; the Gatekeeper fails it as ``schema.executor_v2``."""

    claim_id: str
    binding_index: int  # -1 when the issue is about the claim, not one of its bindings
    message: str
    claim_index: int = -1  # position of the claim in ``claims`` (claim ids may be duplicated)


@dataclass(frozen=True, slots=True)
class ExecutorParse:
    status: contracts_pb2.ParseStatus.ValueType
    output: contracts_pb2.ExecutorEvidenceV2 | None
    forbidden_fields: tuple[str, ...] = ()
    schema_issues: tuple[SchemaIssue, ...] = ()
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == contracts_pb2.PARSE_STATUS_OK and self.output is not None


class _Invalid(Exception):
    """Raised inside the parser; becomes ``PARSE_STATUS_INVALID_OUTPUT``."""


def parse_executor_output(raw: str | Mapping[str, object]) -> ExecutorParse:
    """Parse raw Executor text, or an already-decoded JSON object, into ``executor_evidence_v2``."""
    try:
        document = _decode(raw) if isinstance(raw, str) else raw
        if not isinstance(document, Mapping):
            raise _Invalid(f"expected a JSON object, got {shapes.kind(document)}")
        _check_depth(document)
        return _parse_document(document)
    except _Invalid as exc:
        return ExecutorParse(status=contracts_pb2.PARSE_STATUS_INVALID_OUTPUT, output=None, error=str(exc))


# ---------------------------------------------------------------- text and bounds


def _decode(raw: str) -> object:
    if len(raw) > MAX_INPUT_BYTES or len(raw.encode("utf-8", "surrogatepass")) > MAX_INPUT_BYTES:
        raise _Invalid(f"output is over the {MAX_INPUT_BYTES} byte bound")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid("output is not valid Unicode text: it holds an unpaired surrogate") from None
    text = raw.strip()
    if not text:
        raise _Invalid("output is empty")
    if text.startswith("```"):
        fenced = _FENCE.fullmatch(text)
        if fenced is None:
            raise _Invalid("output is not JSON: a fenced block must be one ```json block and nothing else")
        text = fenced.group(1).strip()
    try:
        document = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except RecursionError:
        raise _Invalid(f"output is nested deeper than {MAX_DEPTH}") from None
    except json.JSONDecodeError as exc:
        raise _Invalid(f"output is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise _Invalid(f"output is not JSON: {exc}") from None
    if unpaired_surrogate(text, document):
        raise _Invalid("output is not valid Unicode text: it escapes an unpaired surrogate")
    return document


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return result


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _check_depth(document: object) -> None:
    # Iterative, so that neither deep nor cyclic input can exhaust the stack; a container shared by
    # several parents (possible in a decoded mapping, never in JSON text) is walked again only deeper.
    stack: list[tuple[object, int]] = [(document, 1)]
    deepest: dict[int, int] = {}
    while stack:
        value, depth = stack.pop()
        if deepest.get(id(value), 0) >= depth:
            continue
        if isinstance(value, Mapping):
            children: list[object] = list(value.values())
        elif isinstance(value, list | tuple):
            children = list(value)
        else:
            continue
        if depth > MAX_DEPTH:
            raise _Invalid(f"output is nested deeper than {MAX_DEPTH}")
        deepest[id(value)] = depth
        stack.extend((child, depth + 1) for child in children)


# ---------------------------------------------------------------- shape

ClaimStatusName = Annotated[int, shapes.ProtoEnum(_CLAIM_STATUS, lower=True)]


class EvidenceBinding(Shape):
    source_invocation_ids: list[str]
    tool_name: Annotated[str, Field(json_schema_extra={shapes.TOOL_NAMES: True})]
    raw_path: str
    matched_text: str


class ExecutorClaim(Shape):
    claim_id: shapes.ClaimId
    statement: str
    critical: bool
    status: ClaimStatusName
    evidence_bindings: list[EvidenceBinding] = Field(default_factory=list)


class ExecutorGap(Shape):
    description: str
    critical: bool
    next_calls: fields.NextCalls
    subject: Annotated[str, Field(json_schema_extra={shapes.UNOFFERED: True})] = ""


class ExecutorReply(Shape):
    """The ``executor_evidence_v2`` shape (R-C-1); ``reasoning`` and the forbidden fields are read before it."""

    contract: Literal["executor_evidence_v2"]
    claims: list[ExecutorClaim]
    evidence_gaps: list[ExecutorGap] = Field(default_factory=list)


def _parse_document(document: Mapping[object, object]) -> ExecutorParse:
    forbidden: list[str] = []
    shaped: dict[str, object] = {}
    for key, value in document.items():
        if not isinstance(key, str):
            raise _Invalid(f"object keys must be strings, got {shapes.kind(key)}")
        if key in FORBIDDEN_FIELDS:
            forbidden.append(key)
        elif key not in _IGNORED_FIELDS:
            shaped[key] = value
    if "contract" not in shaped:
        raise _Invalid("contract: missing (expected 'executor_evidence_v2')")
    reply = shapes.validate(ExecutorReply, shaped)
    if isinstance(reply, str):
        raise _Invalid(reply)

    output = contracts_pb2.ExecutorEvidenceV2(contract=CONTRACT)
    issues: list[SchemaIssue] = []
    seen_ids: set[str] = set()
    for claim_index, item in enumerate(reply.claims):
        claim = _claim(item, claim_index, issues)
        if claim.claim_id in seen_ids:
            issues.append(SchemaIssue(claim.claim_id, -1, f"duplicate claim_id {claim.claim_id!r}", claim_index))
        seen_ids.add(claim.claim_id)
        output.claims.append(claim)
    for gap in reply.evidence_gaps:
        added = output.evidence_gaps.add(description=gap.description, critical=gap.critical)
        added.subject = gap.subject[:128]
        added.next_calls.extend(call.to_proto() for call in gap.next_calls)
    ordered = tuple(name for name in FORBIDDEN_FIELDS if name in forbidden)
    return ExecutorParse(
        status=contracts_pb2.PARSE_STATUS_OK,
        output=output,
        forbidden_fields=ordered,
        schema_issues=tuple(issues),
    )


def _claim(item: ExecutorClaim, claim_index: int, issues: list[SchemaIssue]) -> contracts_pb2.Claim:
    claim_id = item.claim_id
    if not item.statement.strip():
        issues.append(SchemaIssue(claim_id, -1, "statement is empty", claim_index))
    statement = item.statement
    if len(statement) > MAX_STATEMENT_CHARS:
        issues.append(
            SchemaIssue(claim_id, -1, f"statement is longer than {MAX_STATEMENT_CHARS} characters", claim_index)
        )
        statement = statement[:MAX_STATEMENT_CHARS]
    claim = contracts_pb2.Claim(
        claim_id=claim_id,
        statement=statement,
        critical=item.critical,
        status=contracts_pb2.ClaimStatus.ValueType(item.status),
    )
    for binding_index, binding in enumerate(item.evidence_bindings):
        problems = []
        if not binding.source_invocation_ids:
            problems.append("source_invocation_ids is empty")
        if not binding.tool_name.strip():
            problems.append("tool_name is empty")
        if _POINTER.fullmatch(binding.raw_path) is None:
            problems.append(f"raw_path {binding.raw_path!r} is not a JSON Pointer (RFC 6901)")
        if not binding.matched_text.strip():
            problems.append("matched_text is empty")
        issues.extend(SchemaIssue(claim_id, binding_index, problem, claim_index) for problem in problems)
        claim.evidence_bindings.add(
            source_invocation_ids=binding.source_invocation_ids,
            tool_name=binding.tool_name,
            raw_path=binding.raw_path,
            # Redacted as the recorded output it is checked against is, so a quoted secret is never persisted
            # and the two still match where the output holds it.
            matched_text=redact_text(binding.matched_text),
        )
    return claim
