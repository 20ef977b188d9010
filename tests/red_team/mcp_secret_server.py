"""A real MCP server (the SDK's) whose read-only tools answer with the red-team secrets:
``python mcp_secret_server.py stdio``.

Tools: ``recent_errors`` (a text result, one secret a line), ``config_dump`` (a structured result, each secret under
an ordinary key and the numeric, list and nested password shapes), ``failing_call`` (an isError result quoting
secrets whose formats the redaction does not know).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.red_team.secret_corpus import BY_KIND, SECRETS

READ_ONLY = ToolAnnotations(read_only_hint=True)
server = MCPServer("red-team-secrets")


@server.tool(annotations=READ_ONLY, structured_output=False)
def recent_errors(service: str) -> str:
    """Recent error lines of a service."""
    return "\n".join(f"{service}: {s.text}" for s in SECRETS)


@server.tool(annotations=READ_ONLY, structured_output=True)
def config_dump(service: str) -> dict[str, Any]:
    """A service's effective configuration."""
    out: dict[str, Any] = {"service": service, "notes": {s.kind: s.text for s in SECRETS}}
    for kind in ("json-numeric-password", "json-list-password", "json-nested-password", "docker-config-auth"):
        out[kind] = json.loads(BY_KIND[kind].text)
    return out


@server.tool(annotations=READ_ONLY)
def failing_call(service: str) -> str:
    """A call that always fails, quoting what it sent."""
    quoted = "; ".join(BY_KIND[k].text for k in ("curl-user-flag", "stripe-secret-key", "azure-storage-account-key"))
    raise ToolError(f"call to {service} failed: {quoted}")


if __name__ == "__main__":
    server.run("stdio")
