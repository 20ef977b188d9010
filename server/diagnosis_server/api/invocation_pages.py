"""ListToolInvocations pages: a run's invocations in call order, a page at a time (AIP-158).

A run's invocations only grow (rows are appended and never rewritten), so a page's position is an offset into
the call order. The token is opaque: urlsafe base64 of compact JSON holding the run, the tenant it was made for
and the offset, with a checksum; a token for another run or tenant, or one that does not decode, is refused.
A page holds at most ``page_size`` invocations and at most ``max_bytes`` of them (outputs may be large), but
never none while invocations remain.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence

from diagnosis.v1 import contracts_pb2

DEFAULT_PAGE_BYTES = 2 * 1024 * 1024
_VERSION = 1


class BadPageToken(ValueError):
    pass


def _checksum(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def encode_token(run_id: str, tenant: str, offset: int) -> str:
    body = json.dumps({"v": _VERSION, "r": run_id, "t": tenant, "o": offset}, separators=(",", ":"), sort_keys=True)
    envelope = json.dumps({"b": body, "h": _checksum(body)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(envelope.encode()).decode("ascii").rstrip("=")


def decode_token(token: str, *, run_id: str, tenant: str) -> int:
    """The offset a token stands for; BadPageToken when it is malformed or made for another run or tenant."""
    try:
        envelope = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("utf-8"))
        body = envelope["b"]
        document = json.loads(body) if isinstance(body, str) and envelope["h"] == _checksum(body) else None
    except (binascii.Error, UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise BadPageToken("malformed page token") from None
    if not isinstance(document, dict) or document.get("v") != _VERSION or type(document.get("o")) is not int:
        raise BadPageToken("malformed page token")
    if document.get("r") != run_id or document.get("t") != tenant:
        raise BadPageToken("page token was made for another run or another tenant")
    offset: int = document["o"]
    if offset < 0:
        raise BadPageToken("malformed page token")
    return offset


def page(
    invocations: Sequence[contracts_pb2.ToolInvocation],
    *,
    offset: int,
    page_size: int,
    max_bytes: int = DEFAULT_PAGE_BYTES,
) -> tuple[list[contracts_pb2.ToolInvocation], int | None]:
    """The invocations from ``offset``, and the next page's offset (None after the last)."""
    out: list[contracts_pb2.ToolInvocation] = []
    size = 0
    for invocation in invocations[offset : offset + page_size]:
        bytes_ = invocation.ByteSize()
        if out and size + bytes_ > max_bytes:
            break
        out.append(invocation)
        size += bytes_
    end = offset + len(out)
    return out, (end if end < len(invocations) else None)
