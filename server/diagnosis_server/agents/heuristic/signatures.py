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
_ACCESS_5XX = re.compile(r"HTTP/[\d.]+\" (5\d\d)\b")


@dataclass(frozen=True, slots=True)
class Signature:
    kind: str
    pattern: re.Pattern[str]
    role: Role
    # How the statement reads: "{service} {phrase} ({quoted excerpt})".
    phrase: str
    strength: int = 0


# About the line's own service; any level (a WARN line can be the decisive one).
SELF_SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "disk_full",
        re.compile(r"ENOSPC \(No space left on device\)|No space left on device|ENOSPC"),
        Role.CAUSE,
        "cannot write to its disk",
        strength=3,
    ),
    Signature(
        "disk_flood_stage",
        re.compile(r"flood stage disk watermark \[\d+%\] exceeded"),
        Role.SUPPORT,
        "crossed its disk flood-stage watermark",
    ),
    Signature(
        "oom_log",
        re.compile(r"java\.lang\.OutOfMemoryError(?:: [A-Za-z ]+)?|Out of memory: Killed process \d+"),
        Role.CAUSE,
        "runs out of memory",
        strength=3,
    ),
    Signature(
        "db_slots",
        re.compile(
            r"FATAL:\s+(?:remaining connection slots are reserved for non-replication superuser connections"
            r"|sorry, too many clients already|too many connections)"
        ),
        Role.SUPPORT,
        "is refused new database connections",
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
    ),
    Signature(
        "tls_bad_cert",
        re.compile(r"remote error: tls: bad certificate"),
        Role.SUPPORT,
        "sees its clients reject its TLS certificate",
    ),
    Signature(
        "load_shed",
        re.compile(r"shedding load: in-flight limit reached"),
        Role.SUPPORT,
        "sheds load",
    ),
    Signature(
        "saturated",
        re.compile(r"[\w.-]+ executor saturated: active=\d+/\d+, queued=\d+"),
        Role.SUPPORT,
        "is saturated",
    ),
    Signature(
        "panic",
        re.compile(r"invalid memory address or nil pointer dereference|java\.lang\.NullPointerException"),
        Role.HYPOTHESIS,
        "crashes in request handling",
    ),
)

# About a service the line names (a caller's view of its dependency).
TLS_EXPIRED = re.compile(r"x509: certificate has expired(?: or is not yet valid)?")
TLS_VERIFY = re.compile(r"CERTIFICATE_VERIFY_FAILED|tls: failed to verify certificate")
TIMEOUT = re.compile(
    r"context deadline exceeded(?: \(Client\.Timeout exceeded while awaiting headers\))?"
    r"|Read timed out|i/o timeout|request timed out"
)
ERROR_STATUS = re.compile(r"\b50[0-4] (?:Service Unavailable|Bad Gateway|Gateway Timeout|Internal Server Error)")


def mentioned(message: str, own: str, services: Sequence[str]) -> str:
    """The first service (other than ``own``) named in ``message`` as a whole name, or ''."""
    best: tuple[int, str] | None = None
    for name in services:
        if name == own or not name:
            continue
        match = re.search(rf"(?<![A-Za-z0-9-]){re.escape(name)}(?![A-Za-z0-9-])", message)
        if match is not None and (best is None or match.start() < best[0]):
            best = (match.start(), name)
    return best[1] if best else ""


def _self_findings(line: LogLine) -> Iterable[Finding]:
    for sig in SELF_SIGNATURES:
        match = sig.pattern.search(line.message)
        if match is None:
            continue
        excerpt = match.group(0)
        yield Finding(
            kind=sig.kind,
            role=sig.role,
            service=line.service,
            statement=f"{line.service} {sig.phrase} ({quote(excerpt)})",
            bindings=(line.bind_service(), line.bind_message(excerpt)),
            strength=sig.strength,
            onset=line.ts,
        )


def _link_finding(line: LogLine, services: Sequence[str]) -> Finding | None:
    message = line.message
    dep = mentioned(message, line.service, services)
    if not dep:
        return None
    name_binding = line.bind_message(dep)
    expired = TLS_EXPIRED.search(message)
    if expired is not None:
        excerpt = expired.group(0)
        return Finding(
            kind="tls_expired",
            role=Role.CAUSE,
            service=dep,
            statement=f"{dep} serves an expired TLS certificate ({line.service} calls to it fail with {quote(excerpt)})",
            bindings=(line.bind_service(), name_binding, line.bind_message(excerpt)),
            strength=3,
            onset=line.ts,
        )
    verify = TLS_VERIFY.search(message)
    access = _ACCESS_5XX.search(message)
    failing = line.level in _ERROR_LEVELS or access is not None
    candidates = [("tls_verify_failed", verify)]
    if failing:
        candidates += [("timeout", TIMEOUT.search(message)), ("error_status", ERROR_STATUS.search(message))]
        candidates.append(("access_5xx", access))
    for kind, match in candidates:
        if match is None:
            continue
        excerpt = match.group(0)
        return Finding(
            kind=kind,
            role=Role.LINK,
            service=line.service,
            statement=f"{line.service} calls to {dep} fail with {quote(excerpt)}",
            bindings=(line.bind_service(), name_binding, line.bind_message(excerpt)),
            onset=line.ts,
            blamed=dep,
        )
    return None


def log_findings(lines: Iterable[LogLine], services: Sequence[str]) -> list[Finding]:
    """Findings of every line, first occurrence of each (kind, service, blamed) only."""
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    for line in lines:
        try:
            found = [*_self_findings(line)]
            link = _link_finding(line, services)
        except BindingError:
            continue
        if link is not None:
            found.append(link)
        for finding in found:
            if finding.key not in seen:
                seen.add(finding.key)
                out.append(finding)
    return out
