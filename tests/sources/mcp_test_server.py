"""A real MCP server written with the SDK, for the MCP source's tests: `python mcp_test_server.py stdio|http PORT`.

Tools: `alert_rules`, `service_status` and `query_logs` (read-only), `slow_report` (read-only, sleeps), `big_report`
(read-only, as large as asked), `broken_probe` (read-only, answers isError), `restart_service` (not read-only),
`show_token` (read-only, returns its env secret).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
server = MCPServer("diagnosis-test-tools")


@server.tool(annotations=READ_ONLY, structured_output=True)
def alert_rules(service: str) -> dict[str, Any]:
    """Alerting rules firing for a service."""
    return {
        "service": service,
        "firing": [
            {"alert": "HighErrorRate", "severity": "critical", "summary": f"{service} 5xx ratio above 5% for 10m"},
            {"alert": "PodCrashLooping", "severity": "warning", "summary": f"{service} pods restarting"},
        ],
    }


@server.tool(annotations=READ_ONLY, structured_output=False)
def service_status(service: str) -> str:
    """A one-line status of a service."""
    return f"{service}: 2/3 replicas ready; last deploy 2024-11-29T13:40:00Z"


@server.tool(annotations=READ_ONLY, structured_output=True)
def query_logs(logql: str) -> dict[str, Any]:
    """Log lines of a LogQL stream selector, in Loki's query_range shape (as a Grafana or Loki MCP server gives)."""
    app = logql.split('app="', 1)[1].split('"', 1)[0] if 'app="' in logql else "unknown"
    now = int(time.time() * 1e9)
    line = 'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space'
    stream = {"stream": {"app": app, "namespace": "shop"}, "values": [[str(now - 60_000_000_000), line]]}
    return {"status": "success", "data": {"resultType": "streams", "result": [stream]}}


@server.tool(annotations=READ_ONLY, structured_output=True)
async def slow_report(seconds: float) -> dict[str, Any]:
    """A report that takes a while."""
    await asyncio.sleep(seconds)
    return {"done": True}


@server.tool(annotations=READ_ONLY)
def broken_probe(target: str) -> str:
    """A probe that always fails."""
    raise ToolError(f"probe of {target} failed: connection refused by upstream")


@server.tool(annotations=READ_ONLY, structured_output=True)
def big_report(kib: int) -> dict[str, Any]:
    """A report of about ``kib`` KiB of lines."""
    return {"lines": ["x" * 1023] * kib}


@server.tool()
def restart_service(service: str) -> str:
    """Restarts a service (not read-only)."""
    return f"restarted {service}"


@server.tool(annotations=READ_ONLY, structured_output=True)
def show_token() -> dict[str, Any]:
    """Returns what the server was given (to test redaction)."""
    return {"token": os.environ.get("TEST_MCP_TOKEN", ""), "note": os.environ.get("TEST_MCP_NOTE", "configured")}


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
