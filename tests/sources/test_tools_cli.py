"""`diagnosis tools list|call` read the settings `serve` reads and work without a server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from diagnosis_server.agents.openai.functions import function_table
from diagnosis_server.cli import main
from diagnosis_server.conversions import JsonObject

from .fake_http import FakeUpstream
from .test_loki import LOKI_TOKEN, _loki


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import os

    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def test_tools_list_and_call_on_an_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    loki = FakeUpstream(_loki)
    try:
        (tmp_path / "token").write_text(LOKI_TOKEN)
        envs = tmp_path / "environments.toml"
        envs.write_text(
            f'[environments.prod]\nloki = {{ url = "{loki.url}", tenant = "team-a", bearer_token_file = "token" }}\n'
        )
        monkeypatch.setenv("DIAGNOSIS_ENVIRONMENTS_FILE", str(envs))
        assert main(["tools", "list", "--environment", "prod", "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert [t["name"] for t in listed["tools"]] == ["loki.query_range"]
        assert listed["tools"][0]["input_schema"]["required"] == ["query"]
        code = main(
            [
                "tools",
                "call",
                "loki.query_range",
                "--environment",
                "prod",
                "--json",
                "--args",
                '{"query": "{app=\\"checkout-api\\"}"}',
            ]
        )
        assert code == 0
        invocation = json.loads(capsys.readouterr().out)
        assert invocation["status"] == "TOOL_INVOCATION_STATUS_OK" and invocation["tool_name"] == "loki.query_range"
        assert invocation["output"]["data"]["resultType"] == "streams"
        assert "hunter2-prod" not in json.dumps(invocation)
        assert (
            main(["tools", "call", "loki.query_range", "--environment", "prod", "--args", '{"query": "{app=~}"}']) == 1
        )
        text = capsys.readouterr().out
        assert "status:     ERROR" in text and "parse error at line 1, col 7" in text
        assert main(["tools", "list", "--environment", "qa"]) == 2
        assert "unknown environment 'qa' (known: prod)" in capsys.readouterr().err
    finally:
        loki.close()


def test_tools_on_a_scenario_and_an_unknown_tool(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "tools",
                "call",
                "kubernetes.events",
                "--scenario",
                "checkout-oom",
                "--args",
                '{"field_selector": "type=Warning"}',
                "--json",
            ]
        )
        == 0
    )
    invocation = json.loads(capsys.readouterr().out)
    assert invocation["output"]["kind"] == "EventList" and invocation["output"]["items"]
    assert main(["tools", "call", "nope.tool", "--scenario", "checkout-oom"]) == 1
    assert "status:     BLOCKED" in capsys.readouterr().out


def test_openai_functions_offer_mcp_tools_reversibly() -> None:
    specs: list[JsonObject] = [
        {
            "name": "mcp.grafana.query_prometheus",
            "description": "PromQL",
            "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
        {"name": "kubernetes.pods", "description": "pods", "input_schema": {"type": "object"}},
    ]
    table = function_table(specs)
    names = [d["function"]["name"] for d in table.definitions]  # type: ignore[index,call-overload]
    assert names == ["mcp__grafana__query_prometheus", "kubernetes__pods"]
    assert [table.tool_name(n) for n in names] == ["mcp.grafana.query_prometheus", "kubernetes.pods"]
    assert table.definitions[0]["function"]["parameters"] == specs[0]["input_schema"]  # type: ignore[index,call-overload]


def test_tools_call_starts_only_the_server_of_the_tool_called(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A silent MCP server beside the one called is never started; called itself, its start-up bound is the
    tool's error, in words ("mcp server silent did not start within 2 s")."""
    import sys
    import time

    from .conftest import MCP_SERVER

    marker = tmp_path / "started"
    script = tmp_path / "silent.py"
    script.write_text(f"import time\nopen({str(marker)!r}, 'w').write('yes')\ntime.sleep(60)\n")
    envs = tmp_path / "environments.toml"
    envs.write_text(
        f"""
[[environments.prod.mcp]]
name = "tools"
command = ["{sys.executable}", "{MCP_SERVER}", "stdio"]
tools = ["alert_rules"]
[[environments.prod.mcp]]
name = "silent"
command = ["{sys.executable}", "{script}"]
tools = ["x"]
startup_timeout_s = 2
"""
    )
    monkeypatch.setenv("DIAGNOSIS_ENVIRONMENTS_FILE", str(envs))
    args = ["tools", "call", "mcp.tools.alert_rules", "--environment", "prod", "--json", "--args", '{"service": "a"}']
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "TOOL_INVOCATION_STATUS_OK"
    time.sleep(0.5)
    assert not marker.exists()  # the silent server was never run
    assert main(["tools", "call", "mcp.silent.x", "--environment", "prod", "--json", "--args", "{}"]) == 1
    failed = json.loads(capsys.readouterr().out)
    assert failed["status"] == "TOOL_INVOCATION_STATUS_ERROR"
    assert failed["error"] == "mcp server silent did not start within 2 s"
