"""`diagnosis ask`, `diagnosis watch`, `diagnosis runs list|get`, run in-process against the real server."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
from google.protobuf import json_format

from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2, run_pb2
from diagnosis_server.cli import main
from diagnosis_server.cli.client_commands import event_line, run_line, run_trigger, tool_call_line
from tests.support.serve import ServeProcess, free_port, serving

from .client_fakes import FakeServer
from .live_server import FinishedRun

EVENT_LINE = re.compile(r"\[\d+\] [a-z ]+: [a-z ():,-]+ \(attempt \d+(, cycle \d+)?(; [a-z0-9 ]+)?\)")
TOOL_LINE = re.compile(r"\[\d+\]   tool [a-z0-9_.]+ \(inv-\d{4}\): (started|[a-z]+ in \d+ ms(: .+)?)")


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIAGNOSIS_TARGET", raising=False)
    monkeypatch.delenv("DIAGNOSIS_TOKEN", raising=False)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_event_line_format() -> None:
    event = run_pb2.OrchestrationEvent(
        sequence=3, node=run_pb2.NODE_NAME_GATEKEEPER, outcome=run_pb2.NODE_OUTCOME_CEILING_PASS, attempt=1, cycle=1
    )
    assert event_line(event) == "[3] gatekeeper: the evidence checks out (attempt 1)"
    event.cycle, event.reason_code, event.node = 2, "EVIDENCE_GAP", run_pb2.NODE_NAME_VERIFIED_INPUT_BUILDER
    assert event_line(event) == "[3] evidence builder: the evidence checks out (attempt 1, cycle 2; evidence gap)"


def test_tool_call_line_format() -> None:
    event = run_pb2.ToolCallEvent(
        sequence=2, invocation_id="inv-0003", tool_name="prometheus.query", phase=run_pb2.TOOL_CALL_PHASE_STARTED
    )
    assert tool_call_line(event) == "[2]   tool prometheus.query (inv-0003): started"
    event.phase, event.status, event.duration_ms = (
        run_pb2.TOOL_CALL_PHASE_ENDED,
        contracts_pb2.TOOL_INVOCATION_STATUS_OK,
        52,
    )
    assert tool_call_line(event) == "[2]   tool prometheus.query (inv-0003): ok in 52 ms"
    event.status, event.duration_ms = contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT, 10000
    event.error = "no output within 10s"
    assert tool_call_line(event) == "[2]   tool prometheus.query (inv-0003): timeout in 10000 ms: no output within 10s"


def test_event_lines_never_show_enum_names() -> None:
    """Every node and outcome has words: no CEILING_PASS or VERDICT_LOW_CONFID_EVIDENCE_GAP reaches a person."""
    for node in run_pb2.NodeName.values()[1:]:
        for outcome in run_pb2.NodeOutcome.values()[1:]:
            line = event_line(run_pb2.OrchestrationEvent(sequence=1, node=node, outcome=outcome, attempt=1))
            assert not any(word.isupper() and "_" in word for word in line.split()), line
            assert "NODE_" not in line and "CEILING" not in line and "VERDICT" not in line


def test_ask_shows_progress_on_stderr_then_answer_verdict_run_id_and_viewer_url(
    live_server: ServeProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        capsys, "ask", "why is checkout failing?", "--scenario", "checkout-oom", "--target", live_server.target
    )
    assert code == 0
    progress = err.splitlines()
    started = re.fullmatch(r"run (\S+) started", progress[0])
    assert started is not None
    assert progress[1:] and all(EVENT_LINE.match(line) or TOOL_LINE.fullmatch(line) for line in progress[1:])
    # Each tool call's start and end, between the Planner's line and the Executor's.
    tools = [i for i, line in enumerate(progress) if TOOL_LINE.fullmatch(line)]
    assert tools and len(tools) % 2 == 0
    assert "planner" in progress[tools[0] - 1] and "executor" in progress[tools[-1] + 1]
    lines = out.splitlines()
    assert lines[-4].startswith("verdict: ")
    assert lines[-3] == "status:  SUCCESS"
    assert lines[-2] == f"run_id:  {started.group(1)}"
    # Every answer ends with the run's page in the viewer, and the page is there.
    viewer = re.fullmatch(r"view:    (http://127\.0\.0\.1:\d+/runs/(\S+))", lines[-1])
    assert viewer is not None and viewer.group(2) == started.group(1)
    with urllib.request.urlopen(viewer.group(1), timeout=10) as page:
        assert page.status == 200 and started.group(1).encode() in page.read()
    assert len(lines) > 4  # what answered, then the answer text
    assert lines[0] == "scenario: checkout-oom (recorded)"
    assert lines[1].startswith("Likely cause (inferred from ")
    assert max(len(line) for line in lines) <= 100  # readable at 100 columns


def test_wrap_answer_keeps_items_and_quotes_indented() -> None:
    from diagnosis_server.cli.client_commands import wrap_answer

    text = "Confirmed facts:\n- " + "word " * 40 + "[c1]\n  observed in k8s.events inv-1: " + '"' + "x" * 150 + '"'
    lines = wrap_answer(text).splitlines()
    assert all(len(line) <= 100 for line in lines)
    assert lines[1].startswith("- word") and lines[2].startswith("  word")
    assert lines[-2].startswith("  observed in") and lines[-1].startswith("    x")


def test_ask_json_prints_only_the_final_run(live_server: ServeProcess, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "ask", "why is checkout failing?", "--json", "--target", live_server.target)
    assert code == 0
    assert err == ""
    run = json_format.Parse(out, run_pb2.DiagnosisRun())
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert run.run_id.startswith("run")
    assert "run_id" in json.loads(out)  # snake_case names


def test_ask_exits_1_when_the_run_failed(fake: FakeServer, capsys: pytest.CaptureFixture[str]) -> None:
    failed = run_pb2.DiagnosisRun(run_id="r1", status=run_pb2.RUN_STATUS_FAILED, failure_reason="INTERRUPTED")
    fake.service.diagnose_script = [
        diagnosis_service_pb2.DiagnoseResponse(run_id="r1", started=diagnosis_service_pb2.RunStarted(run_id="r1")),
        diagnosis_service_pb2.DiagnoseResponse(run_id="r1", run=failed),
    ]
    code, out, _ = run_cli(capsys, "ask", "q", "--target", fake.target)
    assert code == 1
    assert "status:  FAILED (INTERRUPTED)" in out.splitlines()
    assert "verdict: none" in out.splitlines()


def test_watch_prints_events_then_how_the_run_ended(
    live_server: ServeProcess, finished_run: FinishedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "watch", finished_run.run.run_id, "--target", live_server.target)
    assert code == 0, err
    lines = out.splitlines()
    events = [r.event for r in finished_run.responses if r.WhichOneof("kind") == "event"]
    assert [line for line in lines[:-1] if not TOOL_LINE.fullmatch(line)] == [event_line(e) for e in events]
    # The Executor's calls replayed from their records: each one's start and end, before the Executor's line.
    tools = [line for line in lines[:-1] if TOOL_LINE.fullmatch(line)]
    assert tools and all(line.startswith("[2]   tool ") for line in tools)
    assert [line.endswith(": started") for line in tools] == [True, False] * (len(tools) // 2)
    assert lines.index(tools[-1]) + 1 == lines.index(event_line(events[1]))
    assert lines[-1].startswith("ended: SUCCESS, verdict ")
    assert f"last sequence {events[-1].sequence}" in lines[-1]


def test_watch_json_prints_one_message_a_line(
    live_server: ServeProcess, finished_run: FinishedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(
        capsys, "watch", finished_run.run.run_id, "--after", "1", "--json", "--target", live_server.target
    )
    assert code == 0
    messages = [json_format.Parse(line, diagnosis_service_pb2.WatchRunResponse()) for line in out.splitlines()]
    kinds = [m.WhichOneof("kind") for m in messages]
    assert kinds[-1] == "ended" and set(kinds[:-1]) == {"event", "tool_call"}
    events = [m.event for m in messages[:-1] if m.WhichOneof("kind") == "event"]
    assert [e.sequence for e in events] == list(range(2, len(events) + 2))
    assert {m.tool_call.sequence for m in messages if m.WhichOneof("kind") == "tool_call"} == {2}
    assert messages[-1].ended.status == run_pb2.RUN_STATUS_SUCCESS
    assert "last_sequence" in json.loads(out.splitlines()[-1])["ended"]


def test_runs_list_and_get(
    live_server: ServeProcess, finished_run: FinishedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = finished_run.run.run_id
    code, out, _ = run_cli(capsys, "runs", "list", "--page-size", "100", "--target", live_server.target)
    assert code == 0
    assert any(line.startswith(f"{run_id}  SUCCESS") for line in out.splitlines())

    code, out, _ = run_cli(capsys, "runs", "list", "--status", "SUCCESS", "--json", "--target", live_server.target)
    assert code == 0
    page = json_format.Parse(out, diagnosis_service_pb2.ListRunsResponse())
    assert page.runs and all(r.status == run_pb2.RUN_STATUS_SUCCESS for r in page.runs)

    code, out, err = run_cli(capsys, "runs", "list", "--page-size", "1", "--target", live_server.target)
    assert code == 0 and len(out.splitlines()) == 1
    token = re.search(r"next page: --page-token (\S+)", err)
    assert token is not None
    code, out, _ = run_cli(
        capsys, "runs", "list", "--page-size", "1", "--page-token", token.group(1), "--target", live_server.target
    )
    assert code == 0 and len(out.splitlines()) == 1

    code, out, _ = run_cli(capsys, "runs", "get", run_id, "--target", live_server.target)
    assert code == 0
    assert f"run_id:     {run_id}" in out.splitlines()
    assert "status:     SUCCESS" in out.splitlines()

    code, out, _ = run_cli(capsys, "runs", "get", run_id, "--json", "--target", live_server.target)
    assert code == 0
    assert json_format.Parse(out, run_pb2.DiagnosisRun()).run_id == run_id


def test_server_errors_print_the_status_code_and_exit_1(
    live_server: ServeProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "runs", "get", "run-does-not-exist", "--target", live_server.target)
    assert (code, out) == (1, "")
    assert err.startswith("diagnosis: error: NOT_FOUND: ")
    code, _, err = run_cli(capsys, "ask", "  ", "--target", live_server.target)
    assert code == 1
    assert err.startswith("diagnosis: error: INVALID_ARGUMENT: question")
    code, _, err = run_cli(capsys, "watch", "run-does-not-exist", "--target", live_server.target)
    assert code == 1 and err.startswith("diagnosis: error: NOT_FOUND: ")


def test_an_unreachable_server_is_unavailable(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "runs", "list", "--target", f"127.0.0.1:{free_port()}", "--timeout", "5")
    assert code == 1
    assert err.startswith("diagnosis: error: UNAVAILABLE: ")


@pytest.mark.parametrize(
    "argv",
    [
        ["runs"],
        ["runs", "list", "--status", "maybe"],
        ["runs", "list", "--page-size", "-1"],
        ["watch", "r1", "--after", "x"],
        ["ask", "q", "--timeout", "0"],
        ["ask"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_bad_connection_settings_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "runs", "list", "--ca-file", str(tmp_path / "missing.pem"))
    assert code == 2
    assert err.startswith("diagnosis: error: --ca-file: cannot read")
    code, _, err = run_cli(capsys, "runs", "list", "--token", "two words")
    assert code == 2
    assert err.startswith("diagnosis: error: token:")


def test_target_comes_from_the_environment(
    live_server: ServeProcess, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DIAGNOSIS_TARGET", live_server.target)
    code, out, _ = run_cli(capsys, "runs", "list", "--json")
    assert code == 0
    json_format.Parse(out, diagnosis_service_pb2.ListRunsResponse())


def test_an_http_url_target_is_parsed_and_dialled(
    live_server: ServeProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--target http://HOST:PORT` used to fail with "Misformatted domain name"."""
    code, out, _ = run_cli(capsys, "runs", "list", "--target", f"http://{live_server.target}/")
    assert code == 0, out


def test_a_target_without_a_port_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    """`--target 127.0.0.1` used to dial port 443 in plaintext and hang or fail obscurely."""
    code, _, err = run_cli(capsys, "runs", "list", "--target", "127.0.0.1")
    assert code == 2
    assert "no port" in err and "443" in err and "127.0.0.1:50051" in err


def test_a_url_with_a_path_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "runs", "list", "--target", "http://127.0.0.1:50051/diagnosis.v1")
    assert code == 2
    assert "HOST:PORT" in err


def test_version_names_the_server_and_the_client_packages(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    code, out, _ = run_cli(capsys, "--version")
    assert code == 0
    assert out.startswith(f"diagnosis {metadata.version('diagnosis-graph')} ")
    assert f"client {metadata.version('diagnosis-graph-client')}" in out
    assert f"protobuf {metadata.version('protobuf')}" in out
    with pytest.raises(SystemExit) as parsed:  # argparse's own --version, e.g. after another option
        main(["--version", "runs"])
    assert parsed.value.code == 0
    assert capsys.readouterr().out == out


def test_environments_lists_names_sources_and_tools_without_credentials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "environments.toml").write_text(
        f"""
[environments.prod]
default = true
prometheus = {{ url = "http://scraper:prom-pass-7@127.0.0.1:{free_port()}/prom" }}

[environments.staging]
loki = {{ url = "http://127.0.0.1:{free_port()}", tenant = "team-a" }}
"""
    )
    with serving(tmp_path, {"DIAGNOSIS_ENVIRONMENTS_FILE": str(tmp_path / "environments.toml")}) as server:
        code, out, _ = run_cli(capsys, "environments", "--target", server.target)
        assert code == 0
        lines = out.splitlines()
        assert re.fullmatch(r"\* prod +prometheus \(http://127\.0\.0\.1:\d+/prom\)", lines[0])
        assert lines[1].split() == [
            "tools:",
            "prometheus.query,",
            "prometheus.query_range,",
            "prometheus.series,",
            "prometheus.label_values",
        ]
        assert re.fullmatch(r"  staging +loki \(http://127\.0\.0\.1:\d+\)", lines[2])
        assert lines[-1] == "(* marks the default environment)"
        code, out, _ = run_cli(capsys, "environments", "--json", "--target", server.target)
    assert code == 0 and "prom-pass-7" not in out
    document = json.loads(out)
    prod, staging = document["environments"]
    assert (prod["name"], prod["is_default"]) == ("prod", True)
    assert (staging["name"], staging["is_default"]) == ("staging", False)
    assert staging["tool_names"] == ["loki.query_range"]
    assert [source["kind"] for source in prod["sources"]] == ["prometheus"]


def test_environments_says_when_none_are_configured(
    live_server: ServeProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "environments", "--target", live_server.target)
    assert (code, out) == (0, "")
    assert "no environments configured" in err
    code, out, _ = run_cli(capsys, "environments", "--json", "--target", live_server.target)
    assert code == 0 and json.loads(out) == {"environments": []}


def test_runs_list_shows_the_trigger_and_the_environment(
    live_server: ServeProcess, finished_run: FinishedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = finished_run.run.run_id
    code, out, _ = run_cli(capsys, "runs", "list", "--page-size", "100", "--target", live_server.target)
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith(run_id))
    columns = line.split()
    # id, status, verdict, created, trigger, scenario, environment (none: "-"), then the question
    assert columns[1] == "SUCCESS" and columns[4:7] == ["question", "checkout-oom", "-"]
    assert line.endswith("why is checkout returning 500s?")
    environment_run = run_pb2.DiagnosisRun(run_id="r1", status=run_pb2.RUN_STATUS_RUNNING, environment="prod")
    assert run_line(environment_run).split()[3:7] == ["-", "question", "-", "prod"]


def test_the_trigger_column_says_alert_for_alert_runs_and_question_otherwise() -> None:
    assert run_trigger(run_pb2.DiagnosisRun(run_id="r1")) == "question"  # stored before triggers
    asked = run_pb2.DiagnosisRun(run_id="r1", trigger=run_pb2.RunTrigger(kind=run_pb2.TRIGGER_KIND_QUESTION))
    assert run_trigger(asked) == "question"
    alerted = run_pb2.DiagnosisRun(run_id="r1", trigger=run_pb2.RunTrigger(kind=run_pb2.TRIGGER_KIND_ALERT))
    assert run_trigger(alerted) == "alert" and run_line(alerted).split()[4] == "alert"


def test_runs_get_json_feeds_check_with_every_field(
    live_server: ServeProcess, finished_run: FinishedRun, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`runs get --json` used to omit fields at their default value (``critical: false``): a claim taken from
    it was refused by `check`. Its executor evidence and `runs invocations --json` are now `check`'s input."""
    run_id = finished_run.run.run_id
    code, out, _ = run_cli(capsys, "runs", "get", run_id, "--json", "--target", live_server.target)
    assert code == 0
    run = json.loads(out)
    assert run["failure_reason"] == ""  # a default value, shown
    evidence = run["self_evaluation"]["verifier_evaluation"]["verified_executor_output"]
    assert {claim["critical"] for claim in evidence["claims"]} == {True, False}
    assert all(set(claim) >= {"claim_id", "statement", "critical", "status"} for claim in evidence["claims"])
    code, out, _ = run_cli(capsys, "runs", "invocations", run_id, "--json", "--target", live_server.target)
    assert code == 0
    invocations = json.loads(out)["invocations"]
    document = {"run_id": run_id, "tool_invocations": invocations, "executor_output": evidence}
    (tmp_path / "check.json").write_text(json.dumps(document))
    code, out, err = run_cli(capsys, "check", str(tmp_path / "check.json"))
    assert (code, err) == (0, "")
    checked = json.loads(out)
    assert checked["parse_status"] == "PARSE_STATUS_OK"
    assert checked["gatekeeper_result"]["status"] == "GATEKEEPER_STATUS_PASS"
