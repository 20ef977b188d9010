"""`diagnosis eval`: JSON per case, the table and summary, the HTML report, and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnosis_server.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _cases(tmp_path: Path, *, break_expect: bool = False) -> Path:
    lines = (GOLDEN / "routing.jsonl").read_text().splitlines()[:3]
    cases = [json.loads(line) for line in lines]
    if break_expect:
        cases[1]["expect"]["effective_verdict"] = "PASS"  # it is LOW_CONFID
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    return path


def test_eval_json_prints_one_object_per_case_with_the_pinned_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(_cases(tmp_path)), "--json"]) == 0
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(reports) == 3
    for report in reports:
        assert {
            "case_id",
            "route",
            "parse_status",
            "gatekeeper_result",
            "verdict_ceiling",
            "model_verdict",
            "effective_verdict",
            "status",
            "answer_text",
            "composer_output",
            "verifier_evaluation",
            "orchestration_trace",
            "expect_ok",
            "mismatches",
        } <= set(report)
        assert report["expect_ok"] is True
    assert reports[0]["route"][0] == "planner"
    assert reports[2]["orchestration_trace"]["evidence_retry_count"] == 1


def test_eval_exits_1_and_reports_mismatches_in_table_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.html"
    assert main(["eval", str(_cases(tmp_path, break_expect=True)), "--report", str(report)]) == 1
    out = capsys.readouterr().out
    assert "mismatch: effective_verdict: expected 'PASS', got 'LOW_CONFID'" in out
    assert out.rstrip().endswith("2 passed, 1 failed")
    page = report.read_text()
    assert page.count('<tr class="fail">') == 1
    assert 'class="mismatch"' in page
    assert "&rarr;" in page


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json\n", ":1: "),
        ('{"case_id": "x", "question": "q"}\n', "agent_outputs"),
        ("", "no cases"),
    ],
)
def test_eval_bad_file_exits_2_naming_line_and_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, reason: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    assert main(["eval", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("diagnosis eval: error:")
    assert reason in err


def test_eval_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_eval_of_a_case_with_a_tool_output_nested_too_deep_runs_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """40 levels used to pass conversion and fail protobuf's decode when the invocation was built: the
    eval aborted with a traceback. Now the depth is checked first: one line saying "nested deeper than 32"."""
    case = json.loads((GOLDEN / "routing.jsonl").read_text().splitlines()[0])
    deep: object = "leaf"
    for _ in range(40):
        deep = {"k": deep}
    case["tool_invocations"][1]["output"] = deep
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(case) + "\n")
    code = main(["eval", str(path), "--json"])
    captured = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in captured.err
    assert captured.err.startswith("diagnosis eval: error: ")
    assert "nested deeper than 32" in captured.err
    assert len(captured.err.strip().splitlines()) == 1
