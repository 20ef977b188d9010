"""`diagnosis check FILE`: the Gatekeeper on a file (R-GK-1..7 through the command line)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from diagnosis_server.cli import main
from tests.support.evidence import executor_output

ROOT = Path(__file__).resolve().parents[2]

INVOCATIONS: list[Any] = [
    {
        "invocation_id": "inv-1",
        "run_id": "run-1",
        "tool_name": "logs",
        "output": {"lines": ["ERROR upstream timeout after 3000ms"]},
        "status": "TOOL_INVOCATION_STATUS_OK",
    },
    {
        "invocationId": "inv-2",
        "runId": "run-1",
        "toolName": "metrics",
        "output": {"p99_ms": 3012},
    },
]


GOOD = ("inv-1", "logs", "/lines/0", "upstream timeout")
METRIC = ("inv-2", "metrics", "/p99_ms", "3012")
FABRICATED = ("inv-9", "logs", "/lines/0", "upstream timeout")


def write(tmp_path: Path, document: Any, name: str = "check.json") -> str:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return str(path)


def run_check(capsys: pytest.CaptureFixture[str], path: str) -> tuple[int, Any, str]:
    code = main(["check", path])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if captured.out else None), captured.err


@pytest.mark.requirement("R-GK-5")
def test_passing_file_prints_every_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"tool_invocations": INVOCATIONS, "executor_output": executor_output(GOOD, METRIC)})
    code, out, err = run_check(capsys, path)
    assert code == 0
    assert err == ""
    assert out["parse_status"] == "PARSE_STATUS_OK"
    assert out["parse_error"] == ""
    assert out["verdict_ceiling"] == "VERDICT_PASS"
    result = out["gatekeeper_result"]
    assert result["status"] == "GATEKEEPER_STATUS_PASS"
    assert result["severity"] == "GATEKEEPER_SEVERITY_PASS"
    assert result["failed_rules"] == []
    assert result["errors"] == []
    assert [cb["passed"] for cb in result["checked_bindings"]] == [True, True]
    assert [e["checked_binding_index"] for e in out["verified_evidence"]] == [0, 1]
    assert [c["claim_id"] for c in out["verified_executor_output"]["claims"]] == ["c1", "c2"]


@pytest.mark.requirement("R-GK-7")
def test_mixed_file_is_low_confid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"tool_invocations": INVOCATIONS, "executor_output": executor_output(GOOD, FABRICATED)})
    code, out, _ = run_check(capsys, path)
    assert code == 1  # the Gatekeeper failed it, or it does not parse
    assert out["verdict_ceiling"] == "VERDICT_LOW_CONFID"
    assert out["gatekeeper_result"]["failed_rules"] == ["evidence.invocation_ref"]
    assert [e["claim_id"] for e in out["verified_evidence"]] == ["c1"]


@pytest.mark.requirement("R-GK-1")
def test_raw_text_with_forbidden_field_is_reject_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = "```json\n" + json.dumps(executor_output(GOOD, user_facing_answer="restart it")) + "\n```"
    path = write(tmp_path, {"tool_invocations": INVOCATIONS, "executor_output": raw})
    code, out, _ = run_check(capsys, path)
    assert code == 1  # the Gatekeeper failed it, or it does not parse
    assert out["verdict_ceiling"] == "VERDICT_REJECT"
    assert out["gatekeeper_result"]["failed_rules"] == ["schema.executor_v2"]
    assert out["verified_evidence"] == []


@pytest.mark.requirement("R-GK-3")
def test_explicit_run_id_marks_foreign_invocations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = {"tool_invocations": INVOCATIONS, "executor_output": executor_output(GOOD), "run_id": "run-2"}
    code, out, _ = run_check(capsys, write(tmp_path, document))
    assert code == 1  # the Gatekeeper failed it, or it does not parse
    assert out["verdict_ceiling"] == "VERDICT_REJECT"
    assert out["gatekeeper_result"]["failed_rules"] == ["evidence.invocation_ref"]


def test_invalid_executor_output_is_reported_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, {"tool_invocations": INVOCATIONS, "executor_output": "the database is down"})
    code, out, err = run_check(capsys, path)
    assert code == 1  # the Gatekeeper failed it, or it does not parse
    assert err == ""
    assert out["parse_status"] == "PARSE_STATUS_INVALID_OUTPUT"
    assert "not JSON" in out["parse_error"]
    assert out["verdict_ceiling"] == "VERDICT_UNSPECIFIED"
    assert "gatekeeper_result" not in out


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ("not json at all", "not JSON"),
        ([], "expected a JSON object"),
        ({"executor_output": "x"}, "tool_invocations: missing"),
        ({"tool_invocations": INVOCATIONS}, "executor_output: missing"),
        ({"tool_invocations": {}, "executor_output": "x"}, "tool_invocations: expected an array"),
        ({"tool_invocations": [1], "executor_output": "x"}, "tool_invocations[0]: expected an object"),
        ({"tool_invocations": INVOCATIONS, "executor_output": 5}, "executor_output: expected a string"),
        ({"tool_invocations": INVOCATIONS, "executor_output": "x", "extra": 1}, "extra: unknown field"),
        ({"tool_invocations": INVOCATIONS, "executor_output": "x", "run_id": 7}, "run_id: expected a string"),
        (
            {"tool_invocations": [{"invocation_id": "inv-1", "colour": "red"}], "executor_output": "x"},
            "tool_invocations[0]:",
        ),
        (
            {"tool_invocations": [{"invocation_id": "inv-1", "status": "NOT_A_STATUS"}], "executor_output": "x"},
            "tool_invocations[0]:",
        ),
        (
            {"tool_invocations": [INVOCATIONS[0], INVOCATIONS[0]], "executor_output": "x"},
            "tool_invocations[1].invocation_id: duplicate id 'inv-1'",
        ),
        (
            {"tool_invocations": [INVOCATIONS[0], {**INVOCATIONS[1], "runId": "run-2"}], "executor_output": "x"},
            "invocations belong to different runs; set run_id",
        ),
    ],
)
def test_unusable_file_exits_2_with_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: Any, reason: str
) -> None:
    path = write(tmp_path, document)
    code, out, err = run_check(capsys, path)
    assert code == 2
    assert out is None
    assert err.startswith(f"diagnosis check: error: {path}: ")
    assert reason in err
    assert err.count("\n") == 1


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "absent.json")
    code, out, err = run_check(capsys, path)
    assert code == 2
    assert out is None
    assert err == f"diagnosis check: error: {path}: cannot read: No such file or directory\n"


def test_file_that_is_not_utf8_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"executor_output": "\xff"}')
    code, _, err = run_check(capsys, str(path))
    assert code == 2
    assert "cannot read" in err


def test_real_entry_point(tmp_path: Path) -> None:
    path = write(tmp_path, {"tool_invocations": INVOCATIONS, "executor_output": executor_output(GOOD, FABRICATED)})
    script = ROOT / ".venv" / "bin" / "diagnosis"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "diagnosis_server.cli"]
    done = subprocess.run([*command, "check", path], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr  # a fabricated binding: the Gatekeeper fails it
    out = json.loads(done.stdout)
    assert out["verdict_ceiling"] == "VERDICT_LOW_CONFID"
    good = write(tmp_path, {"tool_invocations": INVOCATIONS, "executor_output": executor_output(GOOD)}, "good.json")
    assert subprocess.run([*command, "check", good], capture_output=True, text=True, timeout=60).returncode == 0
    bad = subprocess.run([*command, "check", str(tmp_path / "absent.json")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.startswith("diagnosis check: error: ")


def test_executor_output_too_deep_for_a_struct_is_an_invalid_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep: Any = "leaf"
    for _ in range(80):
        deep = [deep]
    document = {"tool_invocations": INVOCATIONS, "executor_output": executor_output(GOOD, reasoning=deep)}
    code, out, _ = run_check(capsys, write(tmp_path, document))
    assert code == 1  # the Gatekeeper failed it, or it does not parse
    assert out["parse_status"] == "PARSE_STATUS_INVALID_OUTPUT"
    assert "nested deeper than 32" in out["parse_error"]


def test_tool_output_too_deep_is_a_file_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep: Any = 1
    for _ in range(120):
        deep = [deep]
    document = {"tool_invocations": [{**INVOCATIONS[0], "output": deep}], "executor_output": "x"}
    code, _, err = run_check(capsys, write(tmp_path, document))
    assert code == 2
    assert "tool_invocations[0]:" in err


def test_stdin_dash_reads_the_document(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    document = {"tool_invocations": INVOCATIONS, "executor_output": executor_output(GOOD)}
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(document)))
    code, out, _ = run_check(capsys, "-")
    assert code == 0
    assert out["verdict_ceiling"] == "VERDICT_PASS"
