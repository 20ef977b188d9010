"""A real MCP server (the SDK's) whose read-only tools answer with round three's secrets:
``python mcp_round3_secret_server.py stdio``.

Tools: ``recent_errors`` (a text result, one secret a line), ``config_dump`` (a structured result, each secret under
an ordinary key), ``failing_call`` (an isError result quoting secrets).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.red_team.round3_secret_corpus import BY_KIND, SECRETS

READ_ONLY = ToolAnnotations(read_only_hint=True)
server = MCPServer("red-team-round3-secrets")


@server.tool(annotations=READ_ONLY, structured_output=False)
def recent_errors(service: str) -> str:
    """Recent error lines of a service."""
    return "\n".join(f"{service}: {s.text}" for s in SECRETS)


@server.tool(annotations=READ_ONLY, structured_output=True)
def config_dump(service: str) -> dict[str, Any]:
    """A service's effective configuration."""
    return {"service": service, "notes": {s.kind: s.text for s in SECRETS}}


@server.tool(annotations=READ_ONLY)
def failing_call(service: str) -> str:
    """A call that always fails, quoting what it sent."""
    kinds = ("go-mysql-dsn-no-scheme", "telegram-bot-token-url", "xml-password-element", "sshpass-flag")
    raise ToolError(f"call to {service} failed: " + "; ".join(BY_KIND[k].text for k in kinds))


if __name__ == "__main__":
    server.run("stdio")
