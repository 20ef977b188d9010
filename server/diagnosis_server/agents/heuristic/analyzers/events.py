"""Event analyzers: what Kubernetes itself reports, from a pack's ``k8s.events`` records or ``kubernetes.events``
(core/v1 Event objects), judged by the rules file's ``event`` rules.

An event is about the workload of its involved object (a pod ``checkout-api-7f9c6d8b5-tr6zn`` is checkout-api's;
a ReplicaSet ``checkout-api-7f9c6d8b5`` too; a CronJob's Job ``nightly-etl-29012345`` is its CronJob's; another Job
or a PersistentVolumeClaim by its name). The first rule whose
reasons hold the event's reason, and whose message pattern (if any) matches its message, decides. A statement
quotes the event's message (its first part when it is long) and binds the object, the reason and that text. An
event a later one about the same object ends (the rule's ``cleared_by``: Scheduled after FailedScheduling) is not
reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from diagnosis_server.agents.heuristic.analyzers.rules import EventRule, Rules, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, around, excerpt, one_line, quote
from diagnosis_server.agents.heuristic.observations import (
    Binding,
    BindingError,
    Observation,
    parse_ts,
    records,
)
from diagnosis_server.agents.heuristic.shapes import is_kind, is_label_value, is_object_name, is_reason
from diagnosis_server.agents.heuristic.workloads import workload_of_job, workload_of_pod, workload_of_replicaset
from diagnosis_server.conversions import JsonObject
from diagnosis_server.text.language import reads_as_instruction
from diagnosis_server.text.matching import MAX_MATCHED_CHARS

MAX_MESSAGE = 160


@dataclass(frozen=True, slots=True)
class EventView:
    """One event, whichever tool recorded it, with where each of its values is."""

    obs: Observation
    base: tuple[str | int, ...]
    data: JsonObject
    service: str
    object_kind: str
    object_name: str
    # Paths (below base) of the involved object's name, and the part of it that is the service's name.
    object_path: tuple[str, ...]
    service_path: tuple[str, ...]
    service_text: str | None
    kind_path: tuple[str, ...] = ("kind",)

    def text(self, *path: str) -> str:
        value: object = self.data
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def reason(self) -> str:
        return self.text("reason")

    @property
    def message(self) -> str:
        return self.text("message")[:MAX_MATCHED_CHARS]  # bounded before any analysis, as a log line is

    def bind(self, *path: str, text: str | None = None) -> Binding:
        return self.obs.bind(*self.base, *path, text=text)

    def bind_service(self) -> Binding:
        return self.bind(*self.service_path, text=self.service_text)

    def bind_object(self) -> Binding:
        return self.bind(*self.object_path)


def _service_of(kind: str, name: str, known: Sequence[str]) -> str:
    if kind == "Pod":
        return workload_of_pod(name)
    if kind == "ReplicaSet":
        return workload_of_replicaset(name)
    if kind == "Job" and (cronjob := workload_of_job(name)) != name:
        return cronjob
    if kind in ("PersistentVolumeClaim", "PersistentVolume"):
        return next((w for w in sorted(known, key=len, reverse=True) if w and w in name), name)
    # Objects named after their workload (a Certificate ledger-grpc-tls, its CertificateRequest ledger-grpc-tls-19,
    # a Job db-backup-29012345): the longest known workload the name starts with.
    return next((w for w in sorted(known, key=len, reverse=True) if w and name.startswith(w + "-")), name)


def event_views(
    observations: Iterable[Observation], known: Sequence[str] = (), *, nodes: bool = False
) -> list[EventView]:
    """Every event of the outputs about a workload: pack records (``k8s.events``) and core/v1 Events
    (``kubernetes.events``); with ``nodes``, events about a Node too (their service is empty). Each output's views
    are made once for the same ``known`` and ``nodes`` (``Observation.derived``): several analyzers read them."""
    out: list[EventView] = []
    key = "event_views\x00" + str(nodes) + "\x00" + "\x00".join(known)
    for obs in observations:
        if obs.tool_name not in ("k8s.events", "kubernetes.events"):
            continue
        out += obs.once(key, lambda o: _event_views(o, known, nodes))
    return out


def _shaped(service: str, name: str, reason: str, kind: str) -> bool:
    """An event whose workload is a label value, whose object's name an object name, whose reason one word and
    whose object's kind a kind (each when there is one), by Kubernetes' rules."""
    return (
        (not service or is_label_value(service))
        and (not name or is_object_name(name))
        and (not reason or is_reason(reason))
        and (not kind or is_kind(kind))
    )


def _event_views(obs: Observation, known: Sequence[str], nodes: bool) -> list[EventView]:
    out: list[EventView] = []
    if obs.tool_name == "k8s.events":
        for record in records(obs, "events"):
            service = record.text("service")
            if not _shaped(service, record.text("object"), record.text("reason"), record.text("kind")):
                continue  # a name or reason without its shape is never a name in a sentence
            if service or (nodes and record.text("kind") == "Node"):
                out.append(
                    EventView(
                        obs,
                        ("events", record.index),
                        record.data,
                        service,
                        record.text("kind"),
                        record.text("object"),
                        ("object",),
                        ("service",),
                        None,
                    )
                )
    elif obs.tool_name == "kubernetes.events":
        items = obs.get("items")
        for index, item in enumerate(items if isinstance(items, list) else []):
            involved = item.get("involvedObject") if isinstance(item, dict) else None
            if not isinstance(item, dict) or not isinstance(involved, dict):
                continue
            kind, name = str(involved.get("kind") or ""), str(involved.get("name") or "")
            if not name or (kind == "Node" and not nodes):
                continue
            if not _shaped("", name, str(item.get("reason") or ""), kind):
                continue
            service = "" if kind == "Node" else _service_of(kind, name, known)
            out.append(
                EventView(
                    obs,
                    ("items", index),
                    item,
                    service,
                    kind,
                    name,
                    ("involvedObject", "name"),
                    ("involvedObject", "name"),
                    service,
                    ("involvedObject", "kind"),
                )
            )
    return out


# Objects a workload is (or runs as): an event about one names that workload.
WORKLOAD_KINDS = frozenset({"Pod", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"})


def event_workloads(
    observations: Iterable[Observation], known: Sequence[str] = (), listed: Iterable[str] = ()
) -> list[str]:
    """The workloads core/v1 Events are about (a Job whose pods are gone still has its events). A pod that is
    ``listed`` (or a ReplicaSet of one) has its workload from the pod's own labels: its name says no more."""
    pods = set(listed)
    views = event_views((o for o in observations if o.tool_name == "kubernetes.events"), known)
    out: list[str] = []
    for view in views:
        kind, name = view.object_kind, view.object_name
        if kind not in WORKLOAD_KINDS or not view.service:
            continue
        if (kind == "Pod" and name in pods) or (kind == "ReplicaSet" and any(p.startswith(name + "-") for p in pods)):
            continue
        out.append(view.service)
    return list(dict.fromkeys(out))


def event_time(event: EventView) -> str:
    for path in (("lastTimestamp",), ("eventTime",), ("ts",), ("metadata", "creationTimestamp")):
        value = event.text(*path)
        if value:
            return value
    return ""


def rule_for(event: EventView, rules: Rules) -> EventRule | None:
    """The first rule whose reasons hold the event's reason and whose message pattern (if any) matches."""
    for rule in rules.event:
        if event.reason not in rule.reasons:
            continue
        pattern = rule.compiled
        if pattern is None or pattern.search(event.message):
            return rule
    return None


def _detail(event: EventView, rule: EventRule) -> str:
    """What the cause claim quotes: the message around what the rule matched in it, else its start, else the
    reason."""
    message = event.message
    pattern = rule.compiled
    # A wrapped error says its root cause last ("failed to create task: ...: exec: "gunicorn": executable file not
    # found"): the last of the rule's matches is the most specific.
    matches = list(pattern.finditer(message)) if pattern is not None else []
    match = matches[-1] if matches else None
    if match is not None:
        return around(message, match.start(), match.end())
    return excerpt(message) if message.strip() else event.reason


def _finding(event: EventView, rule: EventRule) -> Finding:
    bindings: list[Binding] = [event.bind_service(), event.bind("reason")]
    what = event.object_kind.lower() or "object"
    detail = f"{what} {event.object_name} reports {event.reason}"
    if event.object_name and event.object_name != event.service:
        bindings.insert(1, event.bind_object())
        if event.object_kind and event.object_kind != "Pod":
            # The statement names the object's kind ("certificaterequest ..."): its evidence holds it.
            bindings.insert(2, event.bind(*event.kind_path))
    else:
        detail = f"{event.reason}"
    # A message that addresses the diagnosis observes nothing: the event's reason and object stand alone, the message
    # is neither quoted nor bound (R-GK-5).
    ordered = reads_as_instruction(event.message)
    message = "" if ordered else excerpt(event.message, MAX_MESSAGE)
    if message:
        bindings.append(event.bind("message", text=message))
        detail += f", {quote(one_line(message))}"
    said = event.reason if ordered else _detail(event, rule)
    if said and said != event.reason and said not in message:
        bindings.append(event.bind("message", text=said))
    return Finding(
        kind=rule.kind,
        role=rule.role_value,
        service=event.service,
        statement=f"{event.service} {rule.phrase} ({detail})",
        bindings=tuple(bindings),
        strength=rule.strength,
        onset=parse_ts(event_time(event)),
        pod=event.object_name if event.object_kind == "Pod" else "",
        detail=said,
        cause_with=rule.cause_with,
        cause_with_own=rule.cause_with_own,
    )


def cleared(event: EventView, rule: EventRule, views: Sequence[EventView]) -> bool:
    """A later event about the same object (and container, when both name one) says this one is over
    (``rule.cleared_by``): a pod Scheduled after FailedScheduling, an image Pulled after a failed pull. Both times
    must be known."""
    when = parse_ts(event_time(event))
    if not rule.cleared_by or when is None or not event.object_name:
        return False
    # When both name a container (involvedObject.fieldPath "spec.containers{app}"), the same one: a sidecar's
    # Pulled and Started do not end the app container's failed pull.
    path = event.text("involvedObject", "fieldPath")
    for other in views:
        if other.reason not in rule.cleared_by or (other.object_kind, other.object_name) != (
            event.object_kind,
            event.object_name,
        ):
            continue
        other_path = other.text("involvedObject", "fieldPath")
        if path and other_path and path != other_path:
            continue
        later = parse_ts(event_time(other))
        if later is not None and later >= when:
            return True
    return False


def read_window(observations: Iterable[Observation]) -> tuple[datetime, datetime] | None:
    """The window the run's range reads named (their ``start`` and ``end`` arguments), if any did."""
    starts: list[datetime] = []
    ends: list[datetime] = []
    for obs in observations:
        start, end = obs.arguments.get("start"), obs.arguments.get("end")
        first = parse_ts(start) if isinstance(start, str) else None
        last = parse_ts(end) if isinstance(end, str) else None
        if first is not None and last is not None:
            starts.append(first)
            ends.append(last)
    return (min(starts), max(ends)) if starts else None


def _outside(event: EventView, window: tuple[datetime, datetime] | None) -> bool:
    """An event last seen before the window, or first seen after it: not of the window asked about."""
    if window is None:
        return False
    last = parse_ts(event_time(event))
    first = parse_ts(event.text("firstTimestamp")) if event.text("firstTimestamp") else last
    return (last is not None and last < window[0]) or (first is not None and first > window[1])


def event_findings(
    observations: Iterable[Observation], known: Sequence[str] = (), rules: Rules | None = None
) -> list[Finding]:
    """One finding per (kind, service): the first event of each (pack events come newest first), of the events
    within the window the run's range reads named (``read_window``)."""
    rules = rules or current_rules()
    observations = list(observations)
    window = read_window(observations)
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    views = event_views(observations, known)
    for event in views:
        if not event.reason or _outside(event, window):
            continue
        rule = rule_for(event, rules)
        # An event finding blames no one: its key is its rule's kind and its workload's.
        if rule is None or (rule.kind, event.service, "") in seen or cleared(event, rule, views):
            continue
        try:
            finding = _finding(event, rule)
        except BindingError:
            continue
        if finding.key not in seen:
            seen.add(finding.key)
            out.append(finding)
    return out
