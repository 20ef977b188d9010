"""MCP servers through the official SDK: a real server (tests/sources/mcp_test_server.py) over stdio and over
streamable HTTP; the allow-list and the readOnlyHint rule, structured and text results, isError, a slow tool,
a server that never starts, redaction of what the server was given."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import from_value
from diagnosis_server.sources.http import MAX_BODY_BYTES
from diagnosis_server.sources.mcp_servers import McpServerSource, McpTarget
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import ToolError
from diagnosis_server.tools.runner import ToolBlockedError

from .conftest import MCP_SERVER, free_port
from .helpers import call, opened

OK = contracts_pb2.TOOL_INVOCATION_STATUS_OK
ERROR = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
TIMEOUT = contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT
READ_ONLY = ["alert_rules", "big_report", "broken_probe", "query_logs", "service_status", "show_token", "slow_report"]


def _stdio(allow: str = "", env: str = "") -> str:
    command = f'["{sys.executable}", "{MCP_SERVER}", "stdio"]'
    return f'[environments.prod]\n[[environments.prod.mcp]]\nname = "tools"\ncommand = {command}\n{allow}{env}'


async def test_stdio_server_offers_its_read_only_tools_and_answers(tmp_path: Path) -> None:
    async with opened(tmp_path, _stdio()) as registry:
        env = registry.get("prod")
        assert sorted(env.toolset.names) == [f"mcp.tools.{name}" for name in READ_ONLY]  # not restart_service
        schema: Any = env.toolset.get("mcp.tools.alert_rules").input_schema  # type: ignore[union-attr]
        assert schema["properties"]["service"]["type"] == "string" and schema["required"] == ["service"]
        structured = await call(env.toolset, "mcp.tools.alert_rules", {"service": "checkout-api"})
        text = await call(env.toolset, "mcp.tools.service_status", {"service": "checkout-api"})
        failed = await call(env.toolset, "mcp.tools.broken_probe", {"target": "orders-db"})
        with pytest.raises(ToolBlockedError):
            await call(env.toolset, "mcp.tools.restart_service", {"service": "checkout-api"})
        assert [s.endpoint for s in env.sources] == [f"stdio:{Path(sys.executable).name}"]
    assert structured.status == OK, structured.error
    output: Any = from_value(structured.output)
    assert output["firing"][0] == {
        "alert": "HighErrorRate",
        "severity": "critical",
        "summary": "checkout-api 5xx ratio above 5% for 10m",
    }
    assert from_value(text.output) == {
        "content": [{"type": "text", "text": "checkout-api: 2/3 replicas ready; last deploy 2024-11-29T13:40:00Z"}]
    }
    assert failed.status == ERROR
    assert failed.error == (
        "mcp.tools.broken_probe: Error executing tool broken_probe: "
        "probe of orders-db failed: connection refused by upstream"
    )


async def test_the_allow_list_decides_and_env_secrets_are_redacted(tmp_path: Path) -> None:
    secret = tmp_path / "mcp-token"
    secret.write_text("mcp-s3cret-for-the-server")
    allow = 'tools = ["show_token", "restart_service", "not_a_tool"]\n'
    env = f'env = {{ TEST_MCP_TOKEN = {{ file = "{secret}" }} }}\n'
    async with opened(tmp_path, _stdio(allow, env)) as registry:
        toolset = registry.tools_for("prod").toolset
        # The allow-list may name a tool that is not read-only; a name the server does not list is left out.
        assert toolset.names == ("mcp.tools.show_token", "mcp.tools.restart_service")
        shown = await call(toolset, "mcp.tools.show_token", {})
    assert shown.status == OK and from_value(shown.output) == {"token": "[REDACTED]", "note": "configured"}
    assert b"mcp-s3cret-for-the-server" not in shown.SerializeToString()


async def test_a_slow_tool_is_recorded_as_a_timeout(tmp_path: Path) -> None:
    async with opened(tmp_path, _stdio()) as registry:
        toolset = registry.tools_for("prod").toolset
        started = time.monotonic()
        slow = await call(toolset, "mcp.tools.slow_report", {"seconds": 5}, timeout_s=0.5)
        assert time.monotonic() - started < 3
        # The session survives the abandoned call.
        after = await call(toolset, "mcp.tools.slow_report", {"seconds": 0})
    assert slow.status == TIMEOUT and slow.error == "no output within 0.5s"
    assert after.status == OK and from_value(after.output) == {"done": True}


async def test_a_result_over_the_read_bound_is_refused_and_one_within_it_is_kept(tmp_path: Path) -> None:
    async with opened(tmp_path, _stdio()) as registry:
        toolset = registry.tools_for("prod").toolset
        big = await call(toolset, "mcp.tools.big_report", {"kib": MAX_BODY_BYTES // 1024 + 64})
        fits = await call(toolset, "mcp.tools.big_report", {"kib": 100})
    assert big.status == ERROR
    assert big.error.startswith(f"mcp.tools.big_report: the answer is over the {MAX_BODY_BYTES} byte read bound")
    kept: Any = from_value(fits.output)
    assert fits.status == OK and len(kept["lines"]) == 100


async def test_streamable_http_server(mcp_http_server: str, tmp_path: Path) -> None:
    toml = f'[environments.prod]\n[[environments.prod.mcp]]\nname = "http"\nurl = "{mcp_http_server}"\n'
    async with opened(tmp_path, toml) as registry:
        env = registry.get("prod")
        assert sorted(env.toolset.names) == [f"mcp.http.{name}" for name in READ_ONLY]
        result = await call(env.toolset, "mcp.http.alert_rules", {"service": "payments"})
        failed = await call(env.toolset, "mcp.http.broken_probe", {"target": "gateway"})
        assert env.sources[0].endpoint == mcp_http_server
    output: Any = from_value(result.output)
    assert result.status == OK and output["service"] == "payments"
    assert failed.status == ERROR and "probe of gateway failed" in failed.error


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text().lower()


async def test_a_server_that_never_starts_is_bounded_and_killed(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    script = tmp_path / "silent.py"
    script.write_text(f"import os, time\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n")
    target = McpTarget(name="silent", command=(sys.executable, str(script)), startup_timeout_s=1.0, allow=("x",))
    source = McpServerSource(target, Redactor())
    started = time.monotonic()
    assert await source.open() is False
    assert time.monotonic() - started < 8
    assert source.last_error == "mcp server silent did not start within 1 s"
    # On a loaded machine the interpreter may not have written its pid within the second it was given: a killed
    # one never does, a live one does soon after (and must then be found dead).
    for _ in range(30):
        if marker.exists() and marker.read_text():
            break
        await asyncio.sleep(0.1)
    if marker.exists() and marker.read_text():
        pid = int(marker.read_text())
        for _ in range(50):
            if not _alive(pid):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("the silent server's process was not killed")
    # Its allow-listed tools stay, and fail when called (it is tried again, bounded).
    [tool] = source.tools()
    assert tool.name == "mcp.silent.x"
    await source.aclose()


async def test_an_unreachable_http_server_leaves_the_environment_usable(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    toml = (
        f'[environments.prod]\nprometheus = {{ url = "http://127.0.0.1:{free_port()}" }}\n'
        f'[[environments.prod.mcp]]\nname = "down"\nurl = "{url}"\ntools = ["query"]\nstartup_timeout_s = 3\n'
    )
    async with opened(tmp_path, toml) as registry:
        toolset = registry.tools_for("prod").toolset
        assert "mcp.down.query" in toolset.names and "prometheus.query" in toolset.names
        invocation = await call(toolset, "mcp.down.query", {})
    assert invocation.status == ERROR and "MCP server 'down' cannot be reached" in invocation.error


def _children_running(script: Path) -> list[int]:
    """The pids of this process's children whose command line names ``script`` (and are not zombies)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and str(script).encode() in command:
            found.append(int(entry.name))
    return found


async def test_a_crashed_stdio_server_is_started_again(tmp_path: Path) -> None:
    """The server's process dies (SIGKILL) between calls: the call that finds it dead fails, recorded as an
    error, and the next one starts it again and is answered (it used to fail for good: never restarted)."""
    others = set(_children_running(MCP_SERVER))  # servers of earlier tests still being reaped
    async with opened(tmp_path, _stdio()) as registry:
        toolset = registry.get("prod").toolset
        assert (await call(toolset, "mcp.tools.alert_rules", {"service": "checkout-api"})).status == OK
        [pid] = set(_children_running(MCP_SERVER)) - others
        os.kill(pid, signal.SIGKILL)
        for _ in range(50):
            if pid not in _children_running(MCP_SERVER):
                break
            await asyncio.sleep(0.05)
        calls = [await call(toolset, "mcp.tools.alert_rules", {"service": "checkout-api"})]
        if calls[0].status != OK:
            calls.append(await call(toolset, "mcp.tools.alert_rules", {"service": "checkout-api"}))
        statuses, errors = [c.status for c in calls], [c.error for c in calls]
        assert statuses[-1] == OK, (statuses, errors)
        assert len(statuses) <= 2
        restarted = set(_children_running(MCP_SERVER)) - others
        assert len(restarted) == 1 and pid not in restarted


async def test_a_server_hung_at_initialize_is_not_started_again_on_every_call(tmp_path: Path) -> None:
    """A stdio server that never answers the handshake: its start is bounded, its process killed, and the
    calls that follow within the back-off fail at once without starting another one (it used to start, and
    leave behind, one process a call)."""
    starts = tmp_path / "starts"
    script = tmp_path / "hung.py"
    script.write_text(f"import sys, time\nopen({str(starts)!r}, 'a').write('x')\nsys.stdin.read()\ntime.sleep(60)\n")
    target = McpTarget(name="hung", command=(sys.executable, str(script)), startup_timeout_s=0.5, allow=("x",))
    source = McpServerSource(target, Redactor())
    try:
        assert await source.open() is False
        [tool] = source.tools()
        begun = time.monotonic()
        for _ in range(5):
            with pytest.raises(ToolError, match="did not start"):
                await tool.call({})
        assert time.monotonic() - begun < 1.0  # refused at once during the back-off
        for _ in range(50):
            if not _children_running(script):
                break
            await asyncio.sleep(0.1)
        assert _children_running(script) == []
        assert starts.read_text() == "x"  # one start, not one a call
    finally:
        await source.aclose()
