"""The command line as a shell uses it: piped into `head`, and the start-up banner a person copies from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from diagnosis_server.cli.serve import usage_hint

ROOT = Path(__file__).resolve().parents[2]


def _cli() -> list[str]:
    script = ROOT / ".venv" / "bin" / "diagnosis"
    return [str(script)] if script.exists() else [sys.executable, "-m", "diagnosis_server.cli"]


def test_output_piped_into_head_ends_quietly(tmp_path: Path) -> None:
    """A reader that stops early used to leave a BrokenPipeError traceback on standard error."""
    invocations = [
        {"invocation_id": f"inv-{i}", "run_id": "run-1", "tool_name": "k8s.events", "output": {"reason": "OOMKilled"}}
        for i in range(200)
    ]
    claims = [
        {
            "claim_id": f"c{i}",
            "statement": "pods are OOMKilled " * 20,
            "critical": False,
            "status": "confirmed",
            "evidence_bindings": [
                {"source_invocation_ids": [f"inv-{i}"], "tool_name": "k8s.events", "raw_path": "/reason",
                 "matched_text": "OOMKilled"}
            ],
        }
        for i in range(200)
    ]  # fmt: skip
    document = {
        "tool_invocations": invocations,
        "executor_output": {"contract": "executor_evidence_v2", "claims": claims},
    }
    path = tmp_path / "big.json"
    path.write_text(json.dumps(document))
    command = " ".join([*_cli(), "check", str(path)]) + " | head -n 1"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert done.stdout == "{\n"
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_banner_ask_command_has_the_target_and_token_it_needs() -> None:
    hint = usage_hint("10.0.0.5:50051", tokens=True)
    ask = next(line for line in hint.splitlines() if "diagnosis ask" in line)
    assert "--target 10.0.0.5:50051" in ask and "--token" in ask
    assert "Authorization: Bearer" in hint
    plain = usage_hint("127.0.0.1:40000")
    assert "--target 127.0.0.1:40000" in plain and "--token" not in plain
    assert "--tls" in usage_hint("127.0.0.1:40000", tls=True)
