"""Lenient decoding: a request that does not decode is INVALID_ARGUMENT naming ``request``, after authentication.

Without it the library answers a corrupt wire format (or a string field that is not UTF-8) with UNKNOWN and
its internal exception text, before anyone has checked who is calling.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any

from google.protobuf.message import DecodeError

from diagnosis_server.api.calls import CallInfo, Context
from diagnosis_server.api.errors import invalid_argument

Deserializer = Callable[[bytes], Any]


class _Undecodable:
    """Stands for a request whose bytes did not decode; ``refuse_undecodable`` refuses it."""


UNDECODABLE = _Undecodable()


def lenient(deserializer: Deserializer | None) -> Deserializer | None:
    """``deserializer``, with a decode failure turned into ``UNDECODABLE`` for the call to refuse."""
    if deserializer is None:
        return None
    strict = deserializer

    def deserialize(data: bytes) -> Any:
        try:
            return strict(data)
        except DecodeError:
            return UNDECODABLE

    return deserialize


def refuse_undecodable(request: Any, context: Context, call: CallInfo) -> AbstractAsyncContextManager[None]:
    if request is UNDECODABLE:
        raise invalid_argument(
            "request",
            "not a valid protobuf encoding of the request message (corrupt, or nested deeper than it decodes)",
        )
    return nullcontext()
