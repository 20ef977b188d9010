"""The run viewer's pages, rendered on the server: every recorded text escaped, no inline script or style."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from html import escape
from urllib.parse import urlencode

from google.protobuf import json_format

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.api.viewer_chart import range_chart
from diagnosis_server.api.viewer_json import claim_anchor, mark_id, render_json
from diagnosis_server.conversions import JsonValue, enum_short_name, enum_short_names

STATUSES = enum_short_names(run_pb2.RunStatus, lower=True)
VERDICTS = enum_short_names(contracts_pb2.Verdict, lower=True)
TRIGGERS = enum_short_names(run_pb2.TriggerKind, lower=True)


def _name(enum_type: object, value: int) -> str:
    return "-" if not value else enum_short_name(enum_type, value, lower=True)  # type: ignore[arg-type]


def _time(stamp: object) -> str:
    if not getattr(stamp, "seconds", 0):
        return "-"
    return stamp.ToDatetime().strftime("%Y-%m-%d %H:%M:%S UTC")  # type: ignore[attr-defined, no-any-return]


def layout(title: str, body: str, *, script: bool = False) -> str:
    tail = '<script src="/static/viewer.js" defer></script>' if script else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{escape(title)}</title><link rel="stylesheet" href="/static/viewer.css">{tail}</head>'
        f'<body><p class="muted"><a href="/">runs</a></p>{body}</body></html>'
    )


def _what(run: run_pb2.DiagnosisRun) -> str:
    if run.trigger.kind == run_pb2.TRIGGER_KIND_ALERT:
        return f"alert {run.trigger.alert.alertname or run.trigger.alert.group_key}"
    return run.question


def runs_page(runs: Sequence[run_pb2.DiagnosisRun], *, filters: dict[str, str], next_page_token: str) -> str:
    def select(name: str, options: Sequence[str]) -> str:
        chosen = filters.get(name, "")
        items = [f'<option value=""{" selected" if not chosen else ""}>any {name}</option>']
        for option in options:
            if option == "unspecified":
                continue
            selected = " selected" if option == chosen else ""
            items.append(f'<option value="{escape(option)}"{selected}>{escape(option)}</option>')
        return f'<select name="{name}">{"".join(items)}</select>'

    rows = []
    for run in runs:
        rows.append(
            "<tr>"
            f'<td><a href="/runs/{escape(run.run_id)}">{escape(_what(run)[:160])}</a></td>'
            f"<td>{escape(run.environment or run.scenario)}</td>"
            f"<td>{escape(_name(run_pb2.RunStatus, run.status))}</td>"
            f'<td class="verdict">{escape(_name(contracts_pb2.Verdict, run.verdict))}</td>'
            f"<td>{escape(_time(run.created_at))}</td></tr>"
        )
    more = ""
    if next_page_token:
        query = urlencode({**{k: v for k, v in filters.items() if v}, "page_token": next_page_token})
        more = f'<p><a rel="next" href="/?{escape(query)}">older runs</a></p>'
    body = (
        "<h1>Runs</h1>"
        f'<form class="filters" method="get" action="/">{select("status", STATUSES)}{select("verdict", VERDICTS)}'
        f'{select("trigger", TRIGGERS)}<button type="submit">filter</button></form>'
        "<table><thead><tr><th>question or alert</th><th>environment or scenario</th><th>status</th>"
        f'<th>verdict</th><th>time</th></tr></thead><tbody id="runs">{"".join(rows)}</tbody></table>'
        + (more or ("" if runs else '<p class="muted">no runs</p>'))
    )
    return layout("Runs", body)


def event_row(event: run_pb2.OrchestrationEvent) -> str:
    cells = (
        str(event.sequence),
        _name(run_pb2.NodeName, event.node),
        _name(run_pb2.NodeOutcome, event.outcome),
        event.reason_code,
        str(event.attempt),
        f"{event.duration_ms} ms",
    )
    return "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in cells) + "</tr>"


def _marks(run: run_pb2.DiagnosisRun) -> dict[str, dict[str, list[str]]]:
    """invocation id -> pointer -> claim ids bound there (each binding of the Gatekeeper's last check once)."""
    marks: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    evaluation = run.self_evaluation.verifier_evaluation
    for binding in evaluation.gatekeeper_result.checked_bindings:
        claims = marks[binding.source_invocation_id][binding.raw_path]
        if binding.claim_id not in claims:
            claims.append(binding.claim_id)
    return marks


def _claims(run: run_pb2.DiagnosisRun) -> str:
    evaluation = run.self_evaluation.verifier_evaluation
    checks = {check.claim_id: check for check in evaluation.claim_checks}
    changes: dict[str, list[str]] = defaultdict(list)
    for change in evaluation.classification_changes:
        changes[change.claim_id].append(
            f"{_name(contracts_pb2.ClaimClassification, change.from_classification)} -> "
            f"{_name(contracts_pb2.ClaimClassification, change.to_classification)}: {change.reason}"
        )
    failed: dict[str, list[str]] = defaultdict(list)
    bound: dict[str, list[contracts_pb2.CheckedBinding]] = defaultdict(list)
    for binding in evaluation.gatekeeper_result.checked_bindings:
        bound[binding.claim_id].append(binding)
        if not binding.passed:
            failed[binding.claim_id].append(f"{binding.raw_path}: {', '.join(binding.failed_rules)}")
    claims = list(evaluation.verified_executor_output.claims)
    known = {claim.claim_id for claim in claims}
    items = []
    for claim_id, statement in [(c.claim_id, c.statement) for c in claims] + [
        (claim_id, "") for claim_id in bound if claim_id not in known
    ]:
        check = checks.get(claim_id)
        classification = _name(contracts_pb2.ClaimClassification, check.classification) if check else "unchecked"
        notes = [f"<li>{escape(note)}</li>" for note in changes.get(claim_id, [])]
        notes += [f"<li>excluded binding {escape(note)}</li>" for note in failed.get(claim_id, [])]
        if check is not None and check.rationale:
            notes.append(f"<li>{escape(check.rationale)}</li>")
        links = [
            f'<a href="#{escape(mark_id(b.source_invocation_id, b.raw_path, claim_id))}">'
            f"{escape(b.tool_name)} {escape(b.raw_path)}</a> = <code>{escape(b.matched_text)}</code>"
            for b in bound.get(claim_id, [])
        ]
        items.append(
            f'<div class="claim {escape(classification)}" id="{escape(claim_anchor(claim_id))}" '
            f'data-claim-id="{escape(claim_id)}"><strong>{escape(claim_id)}</strong> '
            f'<span class="muted">{escape(classification)}</span><div>{escape(statement)}</div>'
            + (f"<ul>{''.join(notes)}</ul>" if notes else "")
            + (f"<div>evidence: {'; '.join(links)}</div>" if links else "")
            + "</div>"
        )
    return "".join(items) or '<p class="muted">no claims</p>'


def _answer(run: run_pb2.DiagnosisRun) -> str:
    answer = run.answer
    sections = []
    for title, items in (
        ("Confirmed facts", answer.confirmed_facts),
        ("Possible directions", answer.possible_directions),
        ("Evidence gaps", answer.evidence_gaps),
        ("Next steps", answer.next_steps),
        ("Run notes", answer.run_notes),
    ):
        if items:
            lis = []
            for item in items:
                refs = "".join(
                    f' <a class="muted" href="#{escape(claim_anchor(claim_id))}">[{escape(claim_id)}]</a>'
                    for claim_id in item.claim_ids
                )
                lis.append(f"<li>{escape(item.text)}{refs}</li>")
            sections.append(f"<h3>{escape(title)}</h3><ul>{''.join(lis)}</ul>")
    head = f"<p><strong>{escape(answer.summary)}</strong></p>" if answer.summary else ""
    if answer.HasField("likely_cause") and answer.likely_cause.text and answer.likely_cause.text not in answer.summary:
        head += f"<p>Likely cause: {escape(answer.likely_cause.text)}</p>"
    if not head and not sections and run.answer_text:
        return f'<pre class="answer">{escape(run.answer_text)}</pre>'
    return head + "".join(sections)


def _invocations(run: run_pb2.DiagnosisRun, invocations: Sequence[contracts_pb2.ToolInvocation]) -> str:
    marks = _marks(run)
    blocks = []
    for invocation in invocations:
        arguments = json_format.MessageToDict(invocation.arguments)
        output: JsonValue = json_format.MessageToDict(invocation.output) if invocation.HasField("output") else None
        here = marks.get(invocation.invocation_id, {})
        chart = range_chart(output, here)
        status = _name(contracts_pb2.ToolInvocationStatus, invocation.status)
        error = f'<p class="muted">{escape(invocation.error)}</p>' if invocation.error else ""
        blocks.append(
            f'<section class="invocation" id="inv-{escape(invocation.invocation_id)}" '
            f'data-invocation-id="{escape(invocation.invocation_id)}">'
            f'<h3>{escape(invocation.tool_name)} <span class="muted">{escape(invocation.invocation_id)} · '
            f"{escape(status)} · {invocation.duration_ms} ms</span></h3>"
            f'<pre class="json arguments">{render_json(arguments, {}, invocation.invocation_id)}</pre>{error}{chart}'
            f'<pre class="json output">{render_json(output, here, invocation.invocation_id)}</pre></section>'
        )
    return "".join(blocks) or '<p class="muted">no tool calls</p>'


def run_page(
    run: run_pb2.DiagnosisRun,
    invocations: Sequence[contracts_pb2.ToolInvocation],
    events: Sequence[run_pb2.OrchestrationEvent],
    *,
    live: bool,
) -> str:
    trigger = run.trigger
    window = ""
    if trigger.HasField("window_start"):
        window = f"{_time(trigger.window_start)} to {_time(trigger.window_end)}"
    source = f"environment {run.environment}" if run.environment else f"scenario {run.scenario}"
    what = _what(run)
    alert = ""
    if trigger.kind == run_pb2.TRIGGER_KIND_ALERT:
        labels = ", ".join(f"{k}={v}" for k, v in sorted(trigger.alert.labels.items()))
        alert = f"<tr><th>alert</th><td>{escape(trigger.alert.group_key)}<br>{escape(labels)}</td></tr>"
    last = events[-1].sequence if events else 0
    state = "running (following live)" if live else _name(run_pb2.RunStatus, run.status)
    body = (
        f'<main id="run" data-run-id="{escape(run.run_id)}" data-live="{"true" if live else "false"}" '
        f'data-last-sequence="{last}">'
        f"<h1>{escape(what)}</h1><table>"
        f"<tr><th>run</th><td>{escape(run.run_id)}</td></tr>"
        f"<tr><th>question</th><td>{escape(run.question)}</td></tr>{alert}"
        f"<tr><th>source</th><td>{escape(source)}</td></tr>"
        f"<tr><th>time window</th><td>{escape(window or '-')}</td></tr>"
        f'<tr><th>status</th><td id="live-state" class="{"live" if live else ""}">{escape(state)}</td></tr>'
        f'<tr><th>verdict</th><td class="verdict">{escape(_name(contracts_pb2.Verdict, run.verdict))}</td></tr>'
        f"<tr><th>created</th><td>{escape(_time(run.created_at))}</td></tr>"
        + (f"<tr><th>failure</th><td>{escape(run.failure_reason)}</td></tr>" if run.failure_reason else "")
        + "</table><h2>Path through the graph</h2><table><thead><tr><th>#</th><th>node</th><th>outcome</th>"
        "<th>reason</th><th>attempt</th><th>duration</th></tr></thead>"
        f'<tbody id="path-rows">{"".join(event_row(e) for e in events)}</tbody></table>'
        f"<h2>Answer</h2>{_answer(run)}<h2>Claims</h2>{_claims(run)}"
        f"<h2>Tool calls</h2>{_invocations(run, invocations)}"
        f'<p class="muted"><a href="/runs/{escape(run.run_id)}.json">the stored record (JSON)</a></p></main>'
    )
    return layout(f"Run {run.run_id}", body, script=live)


def sign_in_page(message: str = "") -> str:
    note = f'<p class="muted">{escape(message)}</p>' if message else ""
    body = (
        f"<h1>Sign in</h1>{note}"
        '<form method="post" action="/sign-in"><label>Token <input type="password" name="token" '
        'autocomplete="current-password" required></label> <button type="submit">sign in</button></form>'
    )
    return layout("Sign in", body)
