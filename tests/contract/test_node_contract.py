"""The contract seen from outside Python: a Node.js client built from the .proto files alone, and `buf curl`
through the server's reflection, against the real server.

Needs node and npm (the packages come from the npm registry, pinned by package-lock.json); skipped without them.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.serve import ServeProcess

NODE_DIR = Path(__file__).resolve().parent / "node"
PROTO_DIR = Path(__file__).resolve().parents[2] / "proto"

QUESTION = "Why is checkout-api returning 503s?"
TIMEOUT_S = 60
# The first test also waits for `npm ci` (up to 180 s, see conftest.py) and the server's start.
pytestmark = pytest.mark.timeout(300)


@dataclass(frozen=True)
class Tools:
    node: str
    buf: Path
    server: ServeProcess


@pytest.fixture(scope="module")
def tools(node: str, node_packages: Path, contract_server: ServeProcess) -> Tools:
    return Tools(node=node, buf=node_packages / ".bin" / "buf", server=contract_server)


@pytest.fixture(scope="module")
def node_summary(tools: Tools) -> dict[str, Any]:
    result = subprocess.run(
        [
            tools.node,
            str(NODE_DIR / "diagnose_and_get.js"),
            tools.server.target,
            str(PROTO_DIR),
            QUESTION,
            "checkout-oom",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


def buf_curl(tools: Tools, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(tools.buf), "curl", "--protocol", "grpc", "--http2-prior-knowledge", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "BUF_CACHE_DIR": str(tmp_path / "buf-cache")},
        check=False,
    )


@pytest.mark.requirement("R-A-6")
def test_node_client_diagnoses_then_gets_the_same_run(node_summary: dict[str, Any]) -> None:
    """Diagnose streams started, events in sequence, then the run; GetRun returns that run (status SUCCESS)."""
    kinds = node_summary["kinds"]
    assert kinds[0] == "started" and kinds[-1] == "run"
    # Node events, and the Executor's tool calls' progress (tool_call) before its own event.
    assert set(kinds[1:-1]) == {"event", "tool_call"}
    run_id = node_summary["started_run_id"]
    assert run_id
    assert node_summary["message_run_ids"] == [run_id]
    assert node_summary["final_run_id"] == run_id
    assert node_summary["get_run_id"] == run_id
    assert node_summary["event_sequences"] == list(range(1, kinds.count("event") + 1))
    assert node_summary["final_status"] == node_summary["get_run_status"] == "RUN_STATUS_SUCCESS"
    assert node_summary["final_scenario"] == "checkout-oom"


def test_buf_curl_lists_every_method_through_reflection(tools: Tools, tmp_path: Path) -> None:
    result = buf_curl(tools, tmp_path, "--list-methods", f"http://{tools.server.target}")
    assert result.returncode == 0, result.stderr
    methods = set(result.stdout.split())
    assert {
        "diagnosis.v1.DiagnosisService/Diagnose",
        "diagnosis.v1.DiagnosisService/GetRun",
        "diagnosis.v1.DiagnosisService/ListRuns",
        "diagnosis.v1.DiagnosisService/WatchRun",
        "diagnosis.v1.DiagnosisService/ListScenarios",
        "diagnosis.v1.GatekeeperService/CheckEvidence",
    } <= methods


def test_buf_curl_get_run_returns_the_run_as_json(tools: Tools, node_summary: dict[str, Any], tmp_path: Path) -> None:
    run_id = node_summary["final_run_id"]
    url = f"http://{tools.server.target}/diagnosis.v1.DiagnosisService/GetRun"
    result = buf_curl(tools, tmp_path, "-d", json.dumps({"run_id": run_id}), url)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)["run"]
    assert run["runId"] == run_id  # buf curl prints proto JSON with lowerCamelCase names
    assert run["status"] == "RUN_STATUS_SUCCESS"


def test_buf_curl_unknown_run_is_not_found(tools: Tools, tmp_path: Path) -> None:
    url = f"http://{tools.server.target}/diagnosis.v1.DiagnosisService/GetRun"
    result = buf_curl(tools, tmp_path, "-d", '{"run_id": "run-does-not-exist"}', url)
    assert result.returncode != 0
    assert json.loads(result.stderr)["code"] == "not_found"
