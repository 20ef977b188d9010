"""The sources an environment may have, one line each: a new source is one module defining its ``SourceKind``
and one line here (the environments file's keys, their order in a listing, and their opening follow this list)."""

from __future__ import annotations

from typing import Any

from diagnosis_server.sources.kubernetes import KUBERNETES
from diagnosis_server.sources.loki import LOKI
from diagnosis_server.sources.mcp_servers import MCP
from diagnosis_server.sources.prometheus import PROMETHEUS
from diagnosis_server.sources.source import SourceKind

SOURCES: tuple[SourceKind[Any], ...] = (
    PROMETHEUS,
    LOKI,
    KUBERNETES,
    MCP,
)
