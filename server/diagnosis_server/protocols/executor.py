"""Executor protocol: raw Executor text -> ``executor_evidence_v2`` (R-C-1).

The Executor's only legal output is one JSON object::

    {"contract": "executor_evidence_v2",
     "claims": [{"claim_id", "statement", "critical", "status",
                 "evidence_bindings": [{"source_invocation_ids", "tool_name", "raw_path", "matched_text"}]}],
     "evidence_gaps": [{"description", "critical", "next_calls"?: [{"tool_name", "arguments"}], "subject"?}]}

Three kinds of problems are told apart:

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
from typing import Any, cast

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import MAX_JSON_DEPTH, EnumType, enum_from_name
from diagnosis_server.protocols import fields
from diagnosis_server.protocols.json_text import unpaired_surrogate

CONTRACT = "executor_evidence_v2"
FORBIDDEN_FIELDS: tuple[str, ...] = ("diagnosis_summary", "user_facing_answer")
MAX_INPUT_BYTES = 1 << 20
MAX_DEPTH = MAX_JSON_DEPTH  # the service's one JSON depth bound

_IGNORED_FIELDS = frozenset({"reasoning"})
_TOP_FIELDS = frozenset({"contract", "claims", "evidence_gaps"})
_CLAIM_FIELDS = ("claim_id", "statement", "critical", "status", "evidence_bindings")
_CLAIM_REQUIRED = ("claim_id", "statement", "critical", "status")
_BINDING_FIELDS = ("source_invocation_ids", "tool_name", "raw_path", "matched_text")
_GAP_FIELDS = ("description", "critical", "next_calls", "subject")
_GAP_REQUIRED = ("description", "critical")

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
            raise _Invalid(f"expected a JSON object, got {_kind(document)}")
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


def _parse_document(document: Mapping[object, object]) -> ExecutorParse:
    forbidden: list[str] = []
    for key in document:
        if not isinstance(key, str):
            raise _Invalid(f"object keys must be strings, got {_kind(key)}")
        if key in FORBIDDEN_FIELDS:
            forbidden.append(key)
        elif key not in _TOP_FIELDS and key not in _IGNORED_FIELDS:
            raise _Invalid(f"{_field(key)}: unknown field")
    if "contract" not in document:
        raise _Invalid("contract: missing (expected 'executor_evidence_v2')")
    contract = document["contract"]
    if contract != CONTRACT:
        raise _Invalid(f"contract: expected 'executor_evidence_v2', got {json.dumps(contract, default=str)[:80]}")
    if "claims" not in document:
        raise _Invalid("claims: missing")
    claims = _list(document["claims"], "claims")
    gaps = _list(document.get("evidence_gaps", []), "evidence_gaps")

    output = contracts_pb2.ExecutorEvidenceV2(contract=CONTRACT)
    issues: list[SchemaIssue] = []
    seen_ids: set[str] = set()
    for claim_index, item in enumerate(claims):
        claim = _claim(item, f"claims[{claim_index}]", claim_index, issues)
        if claim.claim_id in seen_ids:
            issues.append(SchemaIssue(claim.claim_id, -1, f"duplicate claim_id {claim.claim_id!r}", claim_index))
        seen_ids.add(claim.claim_id)
        output.claims.append(claim)
    for gap_index, item in enumerate(gaps):
        path = f"evidence_gaps[{gap_index}]"
        gap_fields = _object(item, path, _GAP_FIELDS, _GAP_REQUIRED)
        gap = output.evidence_gaps.add(
            description=_string(gap_fields["description"], f"{path}.description"),
            critical=_bool(gap_fields["critical"], f"{path}.critical"),
        )
        if "subject" in gap_fields:
            gap.subject = _string(gap_fields["subject"], f"{path}.subject")[:128]
        if "next_calls" in gap_fields:
            try:
                gap.next_calls.extend(fields.next_calls(gap_fields["next_calls"], f"{path}.next_calls"))
            except fields.FieldError as exc:
                raise _Invalid(str(exc)) from None
    ordered = tuple(name for name in FORBIDDEN_FIELDS if name in forbidden)
    return ExecutorParse(
        status=contracts_pb2.PARSE_STATUS_OK,
        output=output,
        forbidden_fields=ordered,
        schema_issues=tuple(issues),
    )


def _claim(item: object, path: str, claim_index: int, issues: list[SchemaIssue]) -> contracts_pb2.Claim:
    claim_fields = _object(item, path, _CLAIM_FIELDS, _CLAIM_REQUIRED)
    try:
        claim_id = fields.claim_id(claim_fields["claim_id"], f"{path}.claim_id")
    except fields.FieldError as exc:
        raise _Invalid(str(exc)) from None
    statement = _string(claim_fields["statement"], f"{path}.statement")
    critical = _bool(claim_fields["critical"], f"{path}.critical")
    status = enum_from_name(_CLAIM_STATUS, claim_fields["status"])
    if status is None:
        got = json.dumps(claim_fields["status"], default=str)[:80]
        raise _Invalid(f"{path}.status: expected 'confirmed' or 'hypothesis', got {got}")
    bindings = _list(claim_fields.get("evidence_bindings", []), f"{path}.evidence_bindings")

    if not statement.strip():
        issues.append(SchemaIssue(claim_id, -1, "statement is empty", claim_index))
    claim = contracts_pb2.Claim(
        claim_id=claim_id,
        statement=statement,
        critical=critical,
        status=contracts_pb2.ClaimStatus.ValueType(status),
    )
    for binding_index, binding_item in enumerate(bindings):
        binding_path = f"{path}.evidence_bindings[{binding_index}]"
        binding = _object(binding_item, binding_path, _BINDING_FIELDS, _BINDING_FIELDS)
        ids_value = _list(binding["source_invocation_ids"], f"{binding_path}.source_invocation_ids")
        ids = [_string(v, f"{binding_path}.source_invocation_ids[{i}]") for i, v in enumerate(ids_value)]
        tool_name = _string(binding["tool_name"], f"{binding_path}.tool_name")
        raw_path = _string(binding["raw_path"], f"{binding_path}.raw_path")
        matched_text = _string(binding["matched_text"], f"{binding_path}.matched_text")
        problems = []
        if not ids:
            problems.append("source_invocation_ids is empty")
        if not tool_name.strip():
            problems.append("tool_name is empty")
        if _POINTER.fullmatch(raw_path) is None:
            problems.append(f"raw_path {raw_path!r} is not a JSON Pointer (RFC 6901)")
        if not matched_text.strip():
            problems.append("matched_text is empty")
        issues.extend(SchemaIssue(claim_id, binding_index, problem, claim_index) for problem in problems)
        claim.evidence_bindings.add(
            source_invocation_ids=ids, tool_name=tool_name, raw_path=raw_path, matched_text=matched_text
        )
    return claim


def _object(value: object, path: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise _Invalid(f"{path}: expected an object, got {_kind(value)}")
    for key in value:
        if key not in allowed:
            raise _Invalid(f"{path}.{_field(key)}: unknown field")
    for key in required:
        if key not in value:
            raise _Invalid(f"{path}.{key}: missing")
    return value


def _list(value: object, path: str) -> list[object]:
    if not isinstance(value, list):
        raise _Invalid(f"{path}: expected an array, got {_kind(value)}")
    return value


def _string(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"{path}: expected a string, got {_kind(value)}")
    return value


def _bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"{path}: expected a boolean, got {_kind(value)}")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _field(key: object) -> str:
    text = key if isinstance(key, str) else repr(key)
    return text if len(text) <= 80 else text[:77] + "..."
