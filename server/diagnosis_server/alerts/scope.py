"""What an alert group asks: the question, its subjects, its time window, its environment, its dedupe key."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from google.protobuf.timestamp_pb2 import Timestamp

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2

# The labels Kubernetes and Prometheus alerts name their subjects with, in the order a question names them.
SUBJECT_LABELS = (
    "namespace",
    "pod",
    "deployment",
    "statefulset",
    "daemonset",
    "job_name",
    "service",
    "container",
    "instance",
    "job",
    "node",
)
MAX_ANNOTATION_CHARS = 600


@dataclass(frozen=True, slots=True)
class AlertScope:
    question: str
    trigger: run_pb2.RunTrigger
    dedupe_key: str


def group_key_of(alerts: Sequence[pb.Alert]) -> str:
    """A group key for alerts that came without one (InvestigateAlert): their sorted fingerprints."""
    return "{}:{" + ",".join(sorted(alert.fingerprint for alert in alerts)) + "}"


def dedupe_key(group_key: str, firing: Sequence[pb.Alert]) -> str:
    """The same for a repeat of the same notification: the group, each firing alert and its startsAt."""
    parts = sorted(f"{alert.fingerprint}@{alert.starts_at.ToJsonString()}" for alert in firing)
    return hashlib.sha256("\n".join([group_key, *parts]).encode()).hexdigest()


def subjects(labels: dict[str, str]) -> list[tuple[str, str]]:
    return [(name, labels[name]) for name in SUBJECT_LABELS if labels.get(name)]


def _common(firing: Sequence[pb.Alert]) -> dict[str, str]:
    first = dict(firing[0].labels)
    return {key: value for key, value in first.items() if all(a.labels.get(key) == value for a in firing[1:])}


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ANNOTATION_CHARS else text[: MAX_ANNOTATION_CHARS - 1] + "…"


def question_of(firing: Sequence[pb.Alert]) -> str:
    """``Why is the alert KubePodCrashLooping firing for namespace shop, pod checkout-1? Summary: ...``"""
    names = sorted({alert.labels["alertname"] for alert in firing})
    labels = _common(firing)
    scope = subjects(labels)
    # Subjects not shared by every alert: each alert's own (a group of three pods names the three).
    for name in SUBJECT_LABELS:
        if name not in labels:
            values = sorted({alert.labels[name] for alert in firing if alert.labels.get(name)})
            if values:
                scope.append((name, ", ".join(values[:10])))
    named = " and ".join(names)
    question = f"Why is the alert {named} firing"
    if scope:
        question += " for " + ", ".join(f"{name} {value}" for name, value in scope)
    question += "?"
    annotations = firing[0].annotations
    for key, title in (("summary", "Summary"), ("description", "Description")):
        if annotations.get(key, "").strip():
            question += f" {title}: {_clip(annotations[key])}"
    if len(firing) > 1:
        question += f" ({len(firing)} alerts firing.)"
    return question


def scope_of(group_key: str, firing: Sequence[pb.Alert], *, lookback_s: float, now: float | None = None) -> AlertScope:
    """The run's question and trigger for a group's firing alerts (at least one)."""
    if not firing:
        raise ValueError("an alert group with no firing alert starts no run")
    question = question_of(firing)
    earliest = min((alert.starts_at for alert in firing), key=lambda stamp: (stamp.seconds, stamp.nanos))
    key = dedupe_key(group_key, firing)
    trigger = run_pb2.RunTrigger(kind=run_pb2.TRIGGER_KIND_ALERT, question=question)
    alert = trigger.alert
    alert.group_key = group_key
    alert.fingerprints.extend(sorted(a.fingerprint for a in firing))
    alert.labels.update(_common(firing))
    alert.annotations.update(firing[0].annotations)
    alert.starts_at.CopyFrom(earliest)
    alert.alertname = " and ".join(sorted({a.labels["alertname"] for a in firing}))
    alert.dedupe_key = key
    moment = time.time() if now is None else now
    start = Timestamp()
    start.FromNanoseconds(max(earliest.ToNanoseconds() - int(lookback_s * 1e9), 0))
    end = Timestamp()
    end.FromNanoseconds(int(moment * 1e9))
    if end.ToNanoseconds() < start.ToNanoseconds():
        end.CopyFrom(start)
    trigger.window_start.CopyFrom(start)
    trigger.window_end.CopyFrom(end)
    return AlertScope(question=question, trigger=trigger, dedupe_key=key)
