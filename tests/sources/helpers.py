"""Helpers of the source tests: an environments file, an opened registry, a recording tool runner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonObject
from diagnosis_server.sources.config import load_environments
from diagnosis_server.sources.registry import EnvironmentRegistry
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import ToolRunner


@asynccontextmanager
async def opened(tmp_path: Path, toml: str) -> AsyncIterator[EnvironmentRegistry]:
    path = tmp_path / "environments.toml"
    path.write_text(toml)
    registry = await EnvironmentRegistry.open(load_environments(path))
    try:
        yield registry
    finally:
        await registry.aclose()


async def call(
    toolset: Toolset, tool: str, arguments: JsonObject, *, timeout_s: float = 10.0, max_bytes: int = 256 * 1024
) -> contracts_pb2.ToolInvocation:
    """Calls ``tool`` through the tool runner, as a run would; the invocation as recorded."""
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    runner = ToolRunner(
        run_id="run-test", toolset=toolset, recorder=recorder, timeout_s=timeout_s, max_output_bytes=max_bytes
    )
    await runner.call(tool, arguments)
    return recorded[-1]
