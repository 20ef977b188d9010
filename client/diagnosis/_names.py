"""Wire values as people read them: enum numbers as names, messages as JSON with every field shown."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from diagnosis.v1 import contracts_pb2, run_pb2


def enum_name(enum_type: Any, value: int, *, prefix: str = "") -> str:
    """``(run_pb2.RunStatus, 2, prefix="RUN_STATUS_")`` -> ``"SUCCESS"``; a number this client does not know
    (a newer server's) as its digits, never an exception."""
    try:
        name = str(enum_type.Name(value))
    except ValueError:
        return str(int(value))
    return name[len(prefix) :] if prefix and name.startswith(prefix) else name


def run_status_name(value: int) -> str:
    """``RUN_STATUS_SUCCESS`` (2) -> ``"SUCCESS"``; the unset zero -> ``"UNSPECIFIED"``."""
    return enum_name(run_pb2.RunStatus, value, prefix="RUN_STATUS_")


def verdict_name(value: int) -> str:
    """``VERDICT_LOW_CONFID`` -> ``"LOW_CONFID"``; the unset zero (a run with no verdict) -> ``"UNSPECIFIED"``."""
    return enum_name(contracts_pb2.Verdict, value, prefix="VERDICT_")


def message_to_dict(message: Message) -> dict[str, Any]:
    """Proto JSON as a dict: snake_case names, enums by name, and every field, those at their default value
    too (``"critical": false``), so the document reads whole and parses back the same."""
    document: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return document


def message_to_json(message: Message, *, indent: int | None = 2) -> str:
    """:func:`message_to_dict` as JSON text (``indent`` None: one line)."""
    return json.dumps(message_to_dict(message), indent=indent, ensure_ascii=False)
