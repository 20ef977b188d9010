"""The client commands: `diagnosis ask`, `diagnosis watch`, `diagnosis runs list|get|invocations` and
`diagnosis environments`.

They talk to a running server through the client library. Every one takes ``--target HOST:PORT``
(default ``$DIAGNOSIS_TARGET`` or 127.0.0.1:50051), ``--token`` (default ``$DIAGNOSIS_TOKEN``), ``--timeout``,
``--tls``/``--ca-file`` and ``--json`` (proto JSON with snake_case names and every field, those at their
default value too, instead of text: what `diagnosis check` and ``json_format.Parse`` read back).

Exit status: 0 when the call worked (and, for ``ask`` and ``watch``, the run ended with SUCCESS); 1 when the
server answered with an error (``diagnosis: error: <STATUS_CODE>: <message>`` on standard error) or the run
FAILED; 2 for a usage error; 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

from google.protobuf import json_format, timestamp_pb2
from google.protobuf.message import Message

from diagnosis import (
    ConnectionConfig,
    DiagnosisClient,
    DiagnosisError,
    TLSConfig,
    message_to_dict,
    message_to_json,
    run_status_name,
    verdict_name,
)
from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2, run_pb2
from diagnosis_server.conversions import enum_short_name, enum_short_names

_STATUSES = enum_short_names(run_pb2.RunStatus, lower=True)
_VERDICTS = enum_short_names(contracts_pb2.Verdict, lower=True)

Action = Callable[[DiagnosisClient, argparse.Namespace], int]

ANSWER_WIDTH = 100


def wrap_answer(text: str, width: int = ANSWER_WIDTH) -> str:
    """The answer text wrapped at ``width`` columns; a wrapped list item or quote keeps its indent."""
    out: list[str] = []
    for line in text.rstrip("\n").splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        stripped = line.lstrip(" ")
        indent = " " * (len(line) - len(stripped))
        hanging = indent + "  "
        out.extend(
            textwrap.wrap(
                stripped,
                width=width,
                initial_indent=indent,
                subsequent_indent=hanging,
                break_long_words=True,
                break_on_hyphens=False,
            )
        )
    return "\n".join(out)


def register(subparsers: Any) -> None:
    common = _common_options()

    ask = subparsers.add_parser(
        "ask",
        parents=[common],
        help="ask the server for a diagnosis and follow it live",
        description="Start a diagnosis run; show each node's outcome on stderr, then the answer, verdict and run id.",
    )
    ask.add_argument("question", metavar="QUESTION", help="the operations question, e.g. 'why is checkout failing?'")
    target = ask.add_mutually_exclusive_group()
    target.add_argument(
        "--scenario", default="", metavar="NAME", help="the recorded scenario to diagnose (default: the server's)"
    )
    target.add_argument(
        "--environment", default="", metavar="NAME", help="the configured environment to diagnose (its live sources)"
    )
    ask.set_defaults(func=_command(_ask))

    watch = subparsers.add_parser(
        "watch",
        parents=[common],
        help="replay and follow a run's events until it ends",
        description="Print a run's events after --after, follow it live, then say how it ended.",
    )
    watch.add_argument("run_id", metavar="RUN_ID")
    watch.add_argument(
        "--after", type=_whole_number(2**63 - 1), default=0, metavar="N", help="only events after sequence N"
    )
    watch.set_defaults(func=_command(_watch))

    runs = subparsers.add_parser("runs", help="list or show stored runs", description="List or show stored runs.")
    actions = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", parents=[common], help="list runs, newest first", description="List runs, newest first, one page."
    )
    listing.add_argument(
        "--page-size", type=_whole_number(2**31 - 1), default=0, metavar="N", help="runs per page (max 100)"
    )
    listing.add_argument("--page-token", default="", metavar="T", help="the token printed after the previous page")
    listing.add_argument("--status", type=str.lower, choices=_STATUSES, default=None, help="only runs with this status")
    listing.add_argument(
        "--verdict", type=str.lower, choices=_VERDICTS, default=None, help="only runs with this verdict"
    )
    listing.set_defaults(func=_command(_runs_list))
    get = actions.add_parser("get", parents=[common], help="show one run", description="Show one stored run.")
    get.add_argument("run_id", metavar="RUN_ID")
    get.set_defaults(func=_command(_runs_get))
    invocations = actions.add_parser(
        "invocations",
        parents=[common],
        help="show a run's tool invocations as recorded",
        description="Show every tool invocation of a run as recorded, in call order: what was asked of each "
        "source and what it answered (--json: one document with an `invocations` list in proto JSON).",
    )
    invocations.add_argument("run_id", metavar="RUN_ID")
    invocations.set_defaults(func=_command(_runs_invocations))

    environments = subparsers.add_parser(
        "environments",
        parents=[common],
        help="list the server's configured environments",
        description="List the environments the server is configured with: name, sources (kind, name, endpoint; "
        "never credentials) and tools; * marks the default (--json: one document with an `environments` list).",
    )
    environments.set_defaults(func=_command(_environments))


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("connection")
    group.add_argument(
        "--target", default=None, metavar="HOST:PORT", help="server (default: $DIAGNOSIS_TARGET or 127.0.0.1:50051)"
    )
    group.add_argument("--token", default=None, metavar="TOKEN", help="bearer token (default: $DIAGNOSIS_TOKEN)")
    group.add_argument("--timeout", type=_positive_float, default=None, metavar="SECONDS", help="deadline of the call")
    group.add_argument("--tls", action="store_true", help="use TLS with the system's root certificates")
    group.add_argument("--ca-file", type=Path, default=None, metavar="PEM", help="use TLS with these root certificates")
    common.add_argument("--json", action="store_true", help="print proto JSON (snake_case names) instead of text")
    return common


def _command(action: Action) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            config = _config(args)
        except (ValueError, OSError) as exc:
            _error(str(exc))
            return 2
        try:
            with DiagnosisClient(config) as client:
                return action(client, args)
        except ValueError as exc:
            _error(str(exc))
            return 2
        except DiagnosisError as exc:
            _error(f"{exc.code.name}: {exc.message}")
            for field, description in exc.field_violations():
                if f"{field}: {description}" not in exc.message:
                    print(f"  {field}: {description}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            _error("interrupted")
            return 130

    return run


def _config(args: argparse.Namespace) -> ConnectionConfig:
    overrides: dict[str, object] = {}
    if args.target:
        overrides["target"] = args.target
    if args.token:
        overrides["token"] = args.token
    if args.timeout is not None:
        overrides["default_timeout"] = args.timeout
    if args.ca_file is not None:
        try:
            overrides["tls"] = TLSConfig(root_certificates=args.ca_file.read_bytes())
        except OSError as exc:
            raise OSError(f"--ca-file: cannot read {str(args.ca_file)!r}: {exc.strerror or exc}") from None
    elif args.tls:
        overrides["tls"] = True
    return ConnectionConfig.from_env(**overrides)


# ---------------------------------------------------------------------- ask


def _ask(client: DiagnosisClient, args: argparse.Namespace) -> int:
    quiet = bool(args.json)

    def started(message: diagnosis_service_pb2.RunStarted) -> None:
        if not quiet:
            print(f"run {message.run_id} started", file=sys.stderr, flush=True)

    def event(message: run_pb2.OrchestrationEvent) -> None:
        if not quiet:
            print(event_line(message), file=sys.stderr, flush=True)

    def tool_call(message: run_pb2.ToolCallEvent) -> None:
        if not quiet:
            print(tool_call_line(message), file=sys.stderr, flush=True)

    run = client.ask(
        args.question,
        scenario=args.scenario,
        environment=args.environment,
        on_started=started,
        on_event=event,
        on_tool_call=tool_call,
    )
    if args.json:
        _print_json(run)
    else:
        if run.answer_text:
            print(wrap_answer(run.answer_text))
            print()
        print(f"verdict: {_verdict(run.verdict)}")
        print(f"status:  {_status(run)}")
        print(f"run_id:  {run.run_id}")
    return 0 if run.status == run_pb2.RUN_STATUS_SUCCESS else 1


_NODE_WORDS = {
    run_pb2.NODE_NAME_PLANNER: "planner",
    run_pb2.NODE_NAME_EXECUTOR: "executor",
    run_pb2.NODE_NAME_GATEKEEPER: "gatekeeper",
    run_pb2.NODE_NAME_VERIFIED_INPUT_BUILDER: "evidence builder",
    run_pb2.NODE_NAME_VERIFIER: "verifier",
    run_pb2.NODE_NAME_COMPOSER: "composer",
    run_pb2.NODE_NAME_PRE_VERIFICATION_FALLBACK: "fallback before verification",
    run_pb2.NODE_NAME_POST_VERIFICATION_FALLBACK: "fallback after verification",
}
_OUTCOME_WORDS = {
    run_pb2.NODE_OUTCOME_OK: "done",
    run_pb2.NODE_OUTCOME_INVALID_OUTPUT: "gave an answer that is not valid",
    run_pb2.NODE_OUTCOME_RETRYABLE_FAILED: "failed (worth a retry)",
    run_pb2.NODE_OUTCOME_NON_RETRYABLE_FAILED: "failed",
    run_pb2.NODE_OUTCOME_TOOL_BLOCKED: "tried a tool it may not use",
    run_pb2.NODE_OUTCOME_FAILED: "failed",
    run_pb2.NODE_OUTCOME_CEILING_PASS: "the evidence checks out",
    run_pb2.NODE_OUTCOME_CEILING_LOW_CONFID: "the evidence partly checks out (low confidence at best)",
    run_pb2.NODE_OUTCOME_CEILING_REJECT: "the evidence does not check out",
    run_pb2.NODE_OUTCOME_NO_VERIFIED_EVIDENCE: "no verified evidence to go on",
    run_pb2.NODE_OUTCOME_VERDICT_PASS: "the diagnosis is supported",
    run_pb2.NODE_OUTCOME_VERDICT_LOW_CONFID: "low confidence",
    run_pb2.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP: "low confidence: looking for the missing evidence",
    run_pb2.NODE_OUTCOME_VERDICT_REJECT: "the evidence cannot support a conclusion",
}


def event_line(event: run_pb2.OrchestrationEvent) -> str:
    """``[3] gatekeeper: the evidence checks out (attempt 1)``: words a person reads (``--json`` keeps the
    enum names); the cycle when past the first, the reason code (in words) when it adds something."""
    node = _NODE_WORDS.get(event.node) or enum_short_name(run_pb2.NodeName, event.node, lower=True)
    outcome = _OUTCOME_WORDS.get(event.outcome) or enum_short_name(run_pb2.NodeOutcome, event.outcome).lower()
    where = f"attempt {event.attempt}" + (f", cycle {event.cycle}" if event.cycle > 1 else "")
    reason = event.reason_code
    # An OK node's reason code only restates it (PLANNED, COMPOSED); a failure's says why.
    if (
        reason
        and event.outcome != run_pb2.NODE_OUTCOME_OK
        and reason != enum_short_name(run_pb2.NodeOutcome, event.outcome)
    ):
        where += "; " + reason.replace("_", " ").lower()
    return f"[{event.sequence}] {node}: {outcome} ({where})"


def tool_call_line(event: run_pb2.ToolCallEvent) -> str:
    """``[2] tool prometheus.query (inv-0003): started`` and ``... : ok in 52 ms``, ``... : timeout in 10000 ms:
    no output within 10s``: under the sequence of the Executor attempt that makes the call."""
    head = f"[{event.sequence}]   tool {event.tool_name} ({event.invocation_id})"
    if event.phase == run_pb2.TOOL_CALL_PHASE_STARTED:
        return f"{head}: started"
    status = enum_short_name(contracts_pb2.ToolInvocationStatus, event.status, lower=True) or "ended"
    line = f"{head}: {status} in {event.duration_ms} ms"
    failed = event.error and event.status != contracts_pb2.TOOL_INVOCATION_STATUS_OK
    return line + (f": {event.error}" if failed else "")


# ---------------------------------------------------------------------- watch


def _watch(client: DiagnosisClient, args: argparse.Namespace) -> int:
    ended: diagnosis_service_pb2.RunEnded | None = None
    for response in client.watch_run(args.run_id, after_sequence=args.after):
        if args.json:
            print(message_to_json(response, indent=None), flush=True)
        elif response.WhichOneof("kind") == "event":
            print(event_line(response.event), flush=True)
        elif response.WhichOneof("kind") == "tool_call":
            print(tool_call_line(response.tool_call), flush=True)
        if response.WhichOneof("kind") == "ended":
            ended = response.ended
    if ended is None:  # the client raises before this; kept for a clear message all the same
        _error("the watch ended without the run's end")
        return 1
    if not args.json:
        status = run_status_name(ended.status)
        line = f"ended: {status}, verdict {_verdict(ended.verdict)}, last sequence {ended.last_sequence}"
        print(line + (f" ({ended.reason})" if ended.reason else ""))
    return 0 if ended.status == run_pb2.RUN_STATUS_SUCCESS else 1


# ---------------------------------------------------------------------- runs


def _runs_list(client: DiagnosisClient, args: argparse.Namespace) -> int:
    page = client.list_runs(
        page_size=args.page_size, page_token=args.page_token, status=args.status, verdict=args.verdict
    )
    if args.json:
        _print_json(page)
        return 0
    if not page.runs:
        print("no runs", file=sys.stderr)
    for run in page.runs:
        print(run_line(run))
    if page.next_page_token:
        print(f"next page: --page-token {page.next_page_token}", file=sys.stderr)
    return 0


def run_line(run: run_pb2.DiagnosisRun) -> str:
    """One run of `runs list`: id, status, verdict, created, trigger, scenario, environment, question."""
    question = " ".join(run.question.split())
    if len(question) > 60:
        question = question[:59] + "…"
    status = run_status_name(run.status)
    created = _time(run.created_at if run.HasField("created_at") else None)
    return (
        f"{run.run_id}  {status:<8} {_verdict(run.verdict):<10} {created:<20} {run_trigger(run):<9} "
        f"{run.scenario or '-':<24} {run.environment or '-':<16} {question}"
    )


def run_trigger(run: Message) -> str:
    """What started a run: a question asked (every run of a server whose runs carry no trigger), else the
    run's ``trigger`` field in lower case (an enum by its short name, a string or a message's kind as is)."""
    field = run.DESCRIPTOR.fields_by_name.get("trigger")
    if field is None:
        return "question"
    value: Any = getattr(run, field.name)
    if field.enum_type is not None:
        name = field.enum_type.values_by_number.get(value)
        if name is None or value == 0:
            return "question"
        prefix = field.enum_type.values[0].name.removesuffix("UNSPECIFIED")
        return name.name.removeprefix(prefix).lower()
    if field.message_type is not None:
        if not run.HasField(field.name):
            return "question"
        kind = next((value.WhichOneof(o.name) for o in field.message_type.oneofs), None)
        return str(kind or field.message_type.name).lower()
    return str(value).lower() or "question"


def _environments(client: DiagnosisClient, args: argparse.Namespace) -> int:
    environments = client.list_environments()
    if args.json:
        print(json.dumps({"environments": [message_to_dict(e) for e in environments]}, indent=2, ensure_ascii=False))
        return 0
    if not environments:
        print("no environments configured (the server serves recorded scenarios only)", file=sys.stderr)
        return 0
    width = max(len(e.name) for e in environments) + 2
    for environment in environments:
        mark = "*" if environment.is_default else " "
        sources = ", ".join(_source_text(source) for source in environment.sources)
        print(f"{mark} {environment.name:<{width}}{sources or 'no sources'}")
        print(f"  {'':<{width}}tools: {', '.join(environment.tool_names) or '-'}")
    print("\n(* marks the default environment)")
    return 0


def _source_text(source: diagnosis_service_pb2.EnvironmentSource) -> str:
    named = source.kind if source.name in ("", source.kind) else f"{source.kind} {source.name}"
    return f"{named} ({source.endpoint})" if source.endpoint else named


def _runs_get(client: DiagnosisClient, args: argparse.Namespace) -> int:
    run = client.get_run(args.run_id)
    if args.json:
        _print_json(run)
        return 0
    trace = run.orchestration_trace
    rows = [
        ("run_id", run.run_id),
        ("status", _status(run)),
        ("verdict", _verdict(run.verdict)),
        ("scenario", run.scenario or "-"),
        ("environment", run.environment or "-"),
        ("question", " ".join(run.question.split())),
        ("provider", run.agent_provider or "-"),
        ("created", _time(run.created_at if run.HasField("created_at") else None)),
        ("completed", _time(run.completed_at if run.HasField("completed_at") else None)),
        ("degraded", "yes" if trace.degraded else "no"),
        ("end_reason", trace.end_reason or "-"),
    ]
    for key, value in rows:
        print(f"{key + ':':<12}{value}")
    if run.answer_text:
        print()
        print(wrap_answer(run.answer_text))
    return 0


def _runs_invocations(client: DiagnosisClient, args: argparse.Namespace) -> int:
    invocations = list(client.iter_tool_invocations(args.run_id, page_size=100))
    if args.json:
        document = {"invocations": [message_to_dict(i) for i in invocations]}
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return 0
    if not invocations:
        print("no tool invocations", file=sys.stderr)
    for invocation in invocations:
        status = enum_short_name(contracts_pb2.ToolInvocationStatus, invocation.status)
        arguments = json_format.MessageToDict(invocation.arguments)
        print(
            f"{invocation.invocation_id}  cycle {invocation.cycle}  {invocation.tool_name}  {status}  "
            f"{invocation.duration_ms} ms"
        )
        print(f"  arguments: {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}")
        if invocation.error:
            print(f"  error:     {invocation.error}")
        output = json.dumps(json_format.MessageToDict(invocation.output), ensure_ascii=False, sort_keys=True)
        print(f"  output:    {output if len(output) <= 400 else output[:399] + '…'}")
    return 0


# ---------------------------------------------------------------------- output


def _print_json(message: Message) -> None:
    print(message_to_json(message))


def _verdict(value: contracts_pb2.Verdict.ValueType) -> str:
    return "none" if value == contracts_pb2.VERDICT_UNSPECIFIED else verdict_name(value)


def _status(run: run_pb2.DiagnosisRun) -> str:
    status = run_status_name(run.status)
    return f"{status} ({run.failure_reason})" if run.failure_reason else status


def _time(stamp: timestamp_pb2.Timestamp | None) -> str:
    if stamp is None:
        return "-"
    return stamp.ToDatetime(tzinfo=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _error(message: str) -> None:
    print(f"diagnosis: error: {message}", file=sys.stderr)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


def _whole_number(maximum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not 0 <= value <= maximum:
            raise argparse.ArgumentTypeError(f"{text!r} must be 0 to {maximum}")
        return value

    return parse
