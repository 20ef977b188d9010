"""`diagnosis check FILE`: parse an executor output and run the Gatekeeper over recorded invocations.

FILE (or ``-`` for standard input) holds one JSON object::

    {"tool_invocations": [<ToolInvocation in proto JSON>, ...],
     "executor_output": "<raw executor text>" | {<executor_evidence_v2 object>},
     "run_id": "<optional>"}

Prints the CheckEvidenceResponse as one JSON object (snake_case names, every field shown). Exit status:
0 when the output parses and the Gatekeeper does not fail it (status pass or warn); 1 when the Gatekeeper
fails it (status fail) or the output does not parse (parse_status INVALID_OUTPUT); 2 when the file cannot
be used (a one-line error on standard error).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from google.protobuf import json_format

from diagnosis.v1 import contracts_pb2, gatekeeper_service_pb2
from diagnosis_server.cli import add_command
from diagnosis_server.conversions import to_struct
from diagnosis_server.evidence_check import CheckInputError, check_evidence

_FIELDS = frozenset({"tool_invocations", "executor_output", "run_id"})


class _FileError(Exception):
    """The file cannot be turned into a CheckEvidenceRequest."""


HELP = "run the Gatekeeper on an executor output"
DESCRIPTION = (
    "Parse an executor output and check every evidence binding against the given tool invocations. "
    "Exit 0: passed (or warnings); 1: the Gatekeeper failed it or it does not parse; 2: unusable file."
)


def register(subparsers: Any) -> None:
    parser = add_command(subparsers, "check", run, HELP, DESCRIPTION)
    parser.add_argument(
        "file", metavar="FILE", help="JSON file with tool_invocations, executor_output and run_id ('-': stdin)"
    )


def run(args: argparse.Namespace) -> int:
    name = str(args.file)
    try:
        request = _request(_load(name))
        response = check_evidence(request)
    except (_FileError, CheckInputError) as exc:
        print(f"diagnosis check: error: {name}: {exc}", file=sys.stderr)
        return 2
    document = json_format.MessageToDict(
        response, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    passed = response.parse_status == contracts_pb2.PARSE_STATUS_OK and (
        response.gatekeeper_result.status != contracts_pb2.GATEKEEPER_STATUS_FAIL
    )
    return 0 if passed else 1


def _load(name: str) -> object:
    try:
        if name == "-":
            text = sys.stdin.read()
        else:
            with open(name, encoding="utf-8") as handle:
                text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise _FileError(f"cannot read: {reason}") from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise _FileError("not JSON: nested too deeply") from None
    except ValueError as exc:
        raise _FileError(f"not JSON: {exc}") from None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _request(document: object) -> gatekeeper_service_pb2.CheckEvidenceRequest:
    if not isinstance(document, dict):
        raise _FileError("expected a JSON object with tool_invocations and executor_output")
    unknown = sorted(set(document) - _FIELDS)
    if unknown:
        raise _FileError(f"{unknown[0]}: unknown field (expected tool_invocations, executor_output, run_id)")
    request = gatekeeper_service_pb2.CheckEvidenceRequest()

    run_id = document.get("run_id", "")
    if not isinstance(run_id, str):
        raise _FileError("run_id: expected a string")
    request.run_id = run_id

    if "tool_invocations" not in document:
        raise _FileError("tool_invocations: missing")
    invocations = document["tool_invocations"]
    if not isinstance(invocations, list):
        raise _FileError("tool_invocations: expected an array")
    for position, item in enumerate(invocations):
        if not isinstance(item, dict):
            raise _FileError(f"tool_invocations[{position}]: expected an object")
        try:
            json_format.ParseDict(item, request.tool_invocations.add())
        except (json_format.ParseError, RecursionError) as exc:
            raise _FileError(f"tool_invocations[{position}]: {_one_line(str(exc))}") from None

    if "executor_output" not in document:
        raise _FileError("executor_output: missing")
    output = document["executor_output"]
    if isinstance(output, str):
        request.executor_output_text = output
    elif isinstance(output, dict):
        try:
            request.executor_output_json.CopyFrom(to_struct(output))
        except (json_format.ParseError, RecursionError):
            # Too deep for a protobuf Struct: hand it over as text, and the parser gives its verdict.
            try:
                request.executor_output_text = json.dumps(output, ensure_ascii=False)
            except RecursionError:
                raise _FileError("executor_output: nested too deeply") from None
    else:
        raise _FileError("executor_output: expected a string (raw executor text) or an object")
    return request


def _one_line(text: str) -> str:
    return " ".join(text.split())
