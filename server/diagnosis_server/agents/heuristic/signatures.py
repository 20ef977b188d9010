"""Log signatures: the lines an operator greps for, turned into findings.

A signature is about the line's own service (``ENOSPC`` on search-es) or about a service the line names
(``context deadline exceeded`` in catalog-api's call to ``pricing-svc``). The statement quotes the part of
the line that matched, and binds that exact substring of ``/lines/N/message``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from diagnosis_server.agents.heuristic.findings import Finding, Role, quote
from diagnosis_server.agents.heuristic.observations import BindingError, LogLine

_ERROR_LEVELS = frozenset({"ERROR", "FATAL"})


@dataclass(frozen=True, slots=True)
class Signature:
    kind: str
    pattern: re.Pattern[str]
    role: Role
    # How the statement reads: "{service} {phrase} ({quoted excerpt})".
    phrase: str
    # Literal texts one of which a matching line must hold: a cheap test before the pattern.
    needles: tuple[str, ...]
    strength: int = 0

    def search(self, message: str) -> re.Match[str] | None:
        if not any(needle in message for needle in self.needles):
            return None
        return self.pattern.search(message)


# About the line's own service; any level (a WARN line can be the decisive one).
SELF_SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "disk_full",
        re.compile(r"ENOSPC \(No space left on device\)|No space left on device|ENOSPC"),
        Role.CAUSE,
        "cannot write to its disk",
        ("No space left", "ENOSPC"),
        strength=3,
    ),
    Signature(
        "disk_flood_stage",
        re.compile(r"flood stage disk watermark \[\d+%\] exceeded"),
        Role.SUPPORT,
        "crossed its disk flood stage watermark",
        ("flood stage",),
    ),
    Signature(
        "oom_log",
        re.compile(r"java\.lang\.OutOfMemoryError(?:: [A-Za-z ]+)?|Out of memory: Killed process \d+"),
        Role.CAUSE,
        "runs out of memory",
        ("OutOfMemoryError", "Out of memory"),
        strength=3,
    ),
    Signature(
        "db_slots",
        re.compile(
            r"FATAL:\s+(?:remaining connection slots are reserved for non-replication superuser connections"
            r"|sorry, too many clients already|too many connections)"
        ),
        Role.SUPPORT,
        "reports that new database connections are refused",
        ("FATAL:",),
    ),
    Signature(
        "app_pool",
        re.compile(
            r"Connection is not available, request timed out after \d+ms(?: \([^)]*\))?"
            r"|QueuePool limit of size \d+ overflow \d+ reached, connection timed out, timeout [\d.]+"
            r"|Timeout waiting for connection from pool"
        ),
        Role.SUPPORT,
        "runs out of connections in its connection pool",
        ("Connection is not available", "QueuePool limit", "Timeout waiting"),
    ),
    Signature(
        "tls_bad_cert",
        re.compile(r"remote error: tls: bad certificate"),
        Role.SUPPORT,
        "sees its clients reject its certificate",
        ("bad certificate",),
    ),
    Signature(
        "load_shed",
        re.compile(r"shedding load: in-flight limit reached"),
        Role.SUPPORT,
        "sheds load",
        ("shedding load",),
    ),
    Signature(
        "saturated",
        re.compile(r"[\w.-]{1,60} executor saturated: active=\d+/\d+, queued=\d+"),
        Role.SUPPORT,
        "is saturated",
        ("executor saturated",),
    ),
    Signature(
        "panic",
        re.compile(r"invalid memory address or nil pointer dereference|java\.lang\.NullPointerException"),
        Role.HYPOTHESIS,
        "crashes in request handling",
        ("nil pointer dereference", "NullPointerException"),
    ),
)


@dataclass(frozen=True, slots=True)
class Needled:
    """A pattern tried only on lines that hold one of its literal needles."""

    pattern: re.Pattern[str]
    needles: tuple[str, ...]

    def search(self, message: str) -> re.Match[str] | None:
        if not any(needle in message for needle in self.needles):
            return None
        return self.pattern.search(message)


# About a service the line names (a caller's view of its dependency).
TLS_EXPIRED = Needled(re.compile(r"x509: certificate has expired(?: or is not yet valid)?"), ("x509",))
TLS_VERIFY = Needled(
    re.compile(r"CERTIFICATE_VERIFY_FAILED|tls: failed to verify certificate"),
    ("CERTIFICATE_VERIFY_FAILED", "failed to verify certificate"),
)
TIMEOUT = Needled(
    re.compile(
        r"context deadline exceeded(?: \(Client\.Timeout exceeded while awaiting headers\))?"
        r"|Read timed out|i/o timeout|request timed out"
    ),
    ("deadline exceeded", "timed out", "i/o timeout"),
)
ERROR_STATUS = Needled(
    re.compile(r"\b50[0-4] (?:Service Unavailable|Bad Gateway|Gateway Timeout|Internal Server Error)"),
    ("Unavailable", "Bad Gateway", "Gateway Timeout", "Internal Server Error"),
)
_GATEWAY_TIMEOUT = re.compile(r"\b504\b")
ACCESS_5XX = Needled(re.compile(r"(?:\"[A-Z]+ [^\"\s]+ )?HTTP/[\d.]+\" 5\d\d\b"), ("HTTP/",))


class ServiceNames:
    """Finds whole service names in text (``warehouse-gateway`` in ``warehouse-gateway.logistics.svc``,
    never in ``warehouse-gateway-config``) with one compiled pattern."""

    def __init__(self, services: Iterable[str]) -> None:
        names = sorted({s for s in services if s}, key=lambda s: (-len(s), s))
        alternation = "|".join(re.escape(name) for name in names)
        self._pattern = re.compile(rf"(?<![A-Za-z0-9-])(?:{alternation})(?![A-Za-z0-9-])") if names else None

    def first_other(self, message: str, own: str) -> str:
        """The first service other than ``own`` named in ``message``, or ''."""
        if self._pattern is None:
            return ""
        return next((m.group(0) for m in self._pattern.finditer(message) if m.group(0) != own), "")


def mentioned(message: str, own: str, services: Sequence[str]) -> str:
    """The first service (other than ``own``) named in ``message`` as a whole name, or ''."""
    return ServiceNames(services).first_other(message, own)


@dataclass(frozen=True, slots=True)
class _Hit:
    """A signature found in a line, before any binding is made (most hits repeat an earlier one)."""

    kind: str
    service: str
    blamed: str
    excerpt: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.service, self.blamed)


def _self_hits(line: LogLine) -> Iterable[tuple[_Hit, Signature]]:
    for sig in SELF_SIGNATURES:
        match = sig.search(line.message)
        if match is not None:
            yield _Hit(sig.kind, line.service, "", match.group(0)), sig


def _link_hit(line: LogLine, names: ServiceNames) -> _Hit | None:
    message = line.message
    dep = names.first_other(message, line.service)
    if not dep:
        return None
    expired = TLS_EXPIRED.search(message)
    if expired is not None:
        return _Hit("tls_expired", dep, line.service, expired.group(0))
    access = ACCESS_5XX.search(message)
    candidates: list[tuple[str, Needled]] = [("tls_verify_failed", TLS_VERIFY)]
    if line.level in _ERROR_LEVELS or access is not None:
        candidates += [("timeout", TIMEOUT), ("error_status", ERROR_STATUS), ("access_5xx", ACCESS_5XX)]
    for kind, pattern in candidates:
        match = pattern.search(message)
        if match is not None:
            excerpt = match.group(0)
            # A gateway timeout is a timeout, whichever way the caller words it.
            if kind in ("error_status", "access_5xx") and _GATEWAY_TIMEOUT.search(excerpt):
                kind = "timeout"
            return _Hit(kind, line.service, dep, excerpt)
    return None


def _self_finding(line: LogLine, hit: _Hit, sig: Signature) -> Finding:
    return Finding(
        kind=sig.kind,
        role=sig.role,
        service=line.service,
        statement=f"{line.service} {sig.phrase} ({quote(hit.excerpt)})",
        bindings=(line.bind_service(), line.bind_message(hit.excerpt)),
        strength=sig.strength,
        onset=line.ts,
    )


def _link_finding(line: LogLine, hit: _Hit) -> Finding:
    if hit.kind == "tls_expired":
        # The certificate belongs to the service called (hit.service); the line is its caller's (hit.blamed).
        return Finding(
            kind=hit.kind,
            role=Role.CAUSE,
            service=hit.service,
            statement=(
                f"{hit.service} serves an expired certificate "
                f"({line.service} calls to it fail with {quote(hit.excerpt)})"
            ),
            bindings=(line.bind_service(), line.bind_message(hit.service), line.bind_message(hit.excerpt)),
            strength=3,
            onset=line.ts,
        )
    return Finding(
        kind=hit.kind,
        role=Role.LINK,
        service=line.service,
        statement=f"{line.service} calls to {hit.blamed} fail with {quote(hit.excerpt)}",
        bindings=(line.bind_service(), line.bind_message(hit.blamed), line.bind_message(hit.excerpt)),
        onset=line.ts,
        blamed=hit.blamed,
    )


def log_findings(lines: Iterable[LogLine], services: Sequence[str]) -> list[Finding]:
    """Findings of every line, first occurrence of each (kind, service, blamed) only."""
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    names = ServiceNames(services)
    for line in lines:
        for hit, sig in _self_hits(line):
            if hit.key in seen:
                continue
            try:
                out.append(_self_finding(line, hit, sig))
                seen.add(hit.key)
            except BindingError:
                continue
        link = _link_hit(line, names)
        if link is not None and link.key not in seen:
            try:
                out.append(_link_finding(line, link))
                seen.add(link.key)
            except BindingError:
                continue
    return out
