"""What kind of failure a recorded tool call is, in a few words an operator can alert on (metrics labels)."""

from __future__ import annotations

import re

from diagnosis.v1 import contracts_pb2

# The classes, first match wins; each pattern is read in the errors the sources write (sources/, tools/).
_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timeout", re.compile(r"\bno answer from\b.*\bin time\b|\btimed? ?out\b", re.IGNORECASE)),
    ("unreachable", re.compile(r"\bcannot reach\b|\bcannot be reached\b|\bconnection refused\b", re.IGNORECASE)),
    ("rate_limited", re.compile(r"\bHTTP 429\b|\b429 TooManyRequests\b")),
    ("unauthorized", re.compile(r"\bHTTP 40[13]\b|\b40[13] (Unauthorized|Forbidden)\b")),
    ("not_found", re.compile(r"\bHTTP 404\b|\b404 NotFound\b")),
    ("server_error", re.compile(r"\bHTTP 5\d\d\b|\b5\d\d [A-Z]\w+\b|\bthe MCP server failed the call\b")),
    ("client_error", re.compile(r"\bHTTP 4\d\d\b|\b4\d\d [A-Z]\w+\b")),
    (
        "bad_answer",
        re.compile(r"\bnot (JSON|an object|a \w+ API answer)\b|\bnested deeper than\b|\bnon-finite\b", re.IGNORECASE),
    ),
    ("closed", re.compile(r"\bthe environment is closed\b")),
)


def source_of(tool_name: str) -> str:
    """The source a tool reads: its name's first part (``prometheus.query`` -> ``prometheus``), an MCP server's
    tools by server (``mcp.tools.alert_rules`` -> ``mcp.tools``)."""
    parts = tool_name.split(".")
    if parts[0] == "mcp" and len(parts) > 2:
        return f"mcp.{parts[1]}"
    return parts[0] or "unknown"


def error_class(invocation: contracts_pb2.ToolInvocation) -> str | None:
    """None for a call that answered (OK, TRUNCATED) or was never made (BLOCKED); else ``timeout``,
    ``unreachable``, ``rate_limited``, ``unauthorized``, ``not_found``, ``server_error``, ``client_error``,
    ``bad_answer``, ``closed``, or ``rejected`` (the source or the tool refused the call as asked: a bad
    selector, an unknown service)."""
    if invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT:
        return "timeout"
    if invocation.status != contracts_pb2.TOOL_INVOCATION_STATUS_ERROR:
        return None
    for name, pattern in _CLASSES:
        if pattern.search(invocation.error):
            return name
    return "rejected"
