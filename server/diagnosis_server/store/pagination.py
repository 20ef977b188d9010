"""Keyset page tokens for newest-first run listings.

A token is opaque to clients: urlsafe base64 of compact JSON holding the last row's position
(created_at in microseconds since the epoch, run_id), the filters and tenant it was made for, and a
checksum. A token that does not decode, whose checksum does not match, or that was made for other
filters or another tenant raises InvalidPageToken.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.limits import MAX_PAGE_SIZE as MAX_PAGE_SIZE
from diagnosis_server.store.errors import InvalidPageToken

TOKEN_VERSION = 1
MAX_TOKEN_LENGTH = 2048
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class RunPage(NamedTuple):
    """One page of runs, newest first, and the token of the next page ("" after the last)."""

    runs: list[run_pb2.DiagnosisRun]
    next_page_token: str


@dataclass(frozen=True, slots=True)
class RunFilter:
    """What a listing was asked for; a token is valid only for the same filter."""

    tenant: str | None
    status: int
    verdict: int
    trigger: int = 0


@dataclass(frozen=True, slots=True)
class PageToken:
    """The position after which the next page starts, and the filter it belongs to."""

    created_at: datetime
    run_id: str
    filter: RunFilter


def to_micros(moment: datetime) -> int:
    delta = moment.astimezone(UTC) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def _checksum(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _body(created_micros: int, run_id: str, run_filter: RunFilter) -> str:
    document = {
        "v": TOKEN_VERSION,
        "c": created_micros,
        "r": run_id,
        "t": run_filter.tenant,
        "s": run_filter.status,
        "d": run_filter.verdict,
    }
    if run_filter.trigger:
        document["g"] = run_filter.trigger
    return json.dumps(document, separators=(",", ":"), sort_keys=True)


def encode_page_token(token: PageToken) -> str:
    body = _body(to_micros(token.created_at), token.run_id, token.filter)
    envelope = json.dumps({"b": body, "h": _checksum(body)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(envelope.encode()).decode("ascii").rstrip("=")


def _document(text: str) -> dict[str, Any]:
    """The token's JSON body, checked against its checksum; InvalidPageToken for anything else."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        envelope = json.loads(raw.decode("utf-8"))
        body = envelope["b"]
        checksum = envelope["h"]
        document = json.loads(body) if isinstance(body, str) and checksum == _checksum(body) else None
    except (binascii.Error, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise InvalidPageToken("malformed page token") from exc
    if not isinstance(document, dict):
        raise InvalidPageToken("malformed page token")
    return document


def decode_page_token(text: str, expected: RunFilter) -> PageToken:
    """The token's position, or InvalidPageToken when it is malformed or made for another filter."""
    if not isinstance(text, str) or not text or len(text) > MAX_TOKEN_LENGTH:
        raise InvalidPageToken("malformed page token")
    document = _document(text)
    created: Any = document.get("c")
    run_id: Any = document.get("r")
    tenant: Any = document.get("t")
    status: Any = document.get("s")
    verdict: Any = document.get("d")
    trigger: Any = document.get("g", 0)
    well_formed = (
        document.get("v") == TOKEN_VERSION
        and type(created) is int
        and isinstance(run_id, str)
        and (tenant is None or isinstance(tenant, str))
        and type(status) is int
        and type(verdict) is int
        and type(trigger) is int
    )
    if not well_formed:
        raise InvalidPageToken("malformed page token")
    found = RunFilter(tenant=tenant, status=status, verdict=verdict, trigger=trigger)
    if found != expected:
        raise InvalidPageToken("page token was made for other filters or another tenant")
    try:
        created_at = from_micros(created)
    except OverflowError as exc:
        raise InvalidPageToken("malformed page token") from exc
    return PageToken(created_at=created_at, run_id=run_id, filter=found)


@dataclass(frozen=True, slots=True)
class Listing:
    """One ``list_runs`` call, its arguments checked: what it keeps, how many, and after which run."""

    filter: RunFilter
    page_size: int
    after: tuple[datetime, str] | None

    @classmethod
    def of(
        cls, *, tenant: str | None, page_size: int, page_token: str, status: int, verdict: int, trigger: int = 0
    ) -> Listing:
        """ValueError for a bad size or filter; InvalidPageToken for a token not of this listing."""
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        if status not in run_pb2.RunStatus.DESCRIPTOR.values_by_number:
            raise ValueError(f"unknown run status {status}")
        if verdict not in contracts_pb2.Verdict.DESCRIPTOR.values_by_number:
            raise ValueError(f"unknown verdict {verdict}")
        if trigger not in run_pb2.TriggerKind.DESCRIPTOR.values_by_number:
            raise ValueError(f"unknown trigger {trigger}")
        run_filter = RunFilter(tenant=tenant, status=status, verdict=verdict, trigger=trigger)
        position = decode_page_token(page_token, run_filter) if page_token else None
        after = None if position is None else (position.created_at, position.run_id)
        return cls(run_filter, min(page_size, MAX_PAGE_SIZE), after)

    def page(self, rows: list[tuple[run_pb2.DiagnosisRun, datetime, str]]) -> RunPage:
        """The page of up to ``page_size + 1`` rows (run, created_at, run_id) read newest first after ``after``."""
        next_token = ""
        if len(rows) > self.page_size:
            _, created_at, run_id = rows[self.page_size - 1]
            next_token = encode_page_token(PageToken(created_at=created_at, run_id=run_id, filter=self.filter))
        return RunPage([run for run, _, _ in rows[: self.page_size]], next_token)
