"""Kubernetes event detectors: what the platform itself reports about a service's pods."""

from __future__ import annotations

import re
from collections.abc import Iterable

from diagnosis_server.agents.heuristic.findings import Finding, Role, quote
from diagnosis_server.agents.heuristic.observations import BindingError, Observation, Record, records

_BACKOFF = re.compile(r"Back-off restarting failed container (\S+)")
_IMAGE_FAILURES = frozenset({"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError"})
_SCHEDULING = frozenset({"FailedScheduling", "Evicted", "Preempting", "FailedAttachVolume", "NodeNotSchedulable"})
_CERT_FAILURES = frozenset({"Failed", "VaultError", "IssuerNotReady"})


def _oom(event: Record, service: str) -> Finding:
    message = event.text("message")
    return Finding(
        "oom",
        Role.CAUSE,
        service,
        f"{service} containers were OOMKilled ({quote(message)})",
        (event.bind("service"), event.bind("reason"), event.bind("message")),
        strength=4,
        onset=event.ts,
    )


def _backoff(event: Record, service: str) -> Finding | None:
    match = _BACKOFF.search(event.text("message"))
    if match is None:
        return None
    excerpt, container = match.group(0), match.group(1)
    pod = event.text("object")
    bindings = (event.bind("object"), event.bind("reason"), event.bind("message", excerpt))
    if container == service:
        statement = f"{service} is in a crash loop (pod {pod} reports BackOff, {quote(excerpt)})"
        return Finding("crashloop", Role.SUPPORT, service, statement, bindings, onset=event.ts)
    statement = (
        f"pod {pod} of {service} has a container other than {service} in a crash loop (BackOff, {quote(excerpt)})"
    )
    return Finding(
        "crashloop_other", Role.HYPOTHESIS, service, statement, (event.bind("service"), *bindings), onset=event.ts
    )


def _pod_failure(event: Record, service: str, kind: str) -> Finding:
    reason, pod, message = event.text("reason"), event.text("object"), event.text("message")
    return Finding(
        kind,
        Role.CAUSE,
        service,
        f"{service} pods cannot start (pod {pod} reports {reason}, {quote(message)})",
        (event.bind("service"), event.bind("object"), event.bind("reason"), event.bind("message")),
        strength=4,
        onset=event.ts,
    )


def _plain(event: Record, service: str, kind: str, role: Role, phrase: str) -> Finding:
    reason, message = event.text("reason"), event.text("message")
    return Finding(
        kind,
        role,
        service,
        f"{service} {phrase} ({reason}, {quote(message)})",
        (event.bind("service"), event.bind("reason"), event.bind("message")),
        onset=event.ts,
    )


def _rescale(event: Record, service: str) -> Finding:
    return Finding(
        "rescale",
        Role.SUPPORT,
        service,
        f"{service} was rescaled by its {event.text('kind')} at {event.text('ts')} ({quote(event.text('message'))})",
        (event.bind("service"), event.bind("kind"), event.bind("ts"), event.bind("message")),
        onset=event.ts,
    )


def _event_finding(event: Record) -> Finding | None:
    service = event.text("service")
    reason = event.text("reason")
    if not service or not reason:
        return None
    if reason == "OOMKilled":
        return _oom(event, service)
    if reason == "BackOff":
        return _backoff(event, service)
    if reason == "FailedMount":
        return _pod_failure(event, service, "failed_mount")
    if reason in _IMAGE_FAILURES:
        return _pod_failure(event, service, "image_failure")
    if reason in _SCHEDULING:
        return _plain(event, service, "scheduling", Role.SUPPORT, "pods were disrupted")
    if reason == "SuccessfulRescale":
        return _rescale(event, service)
    if event.text("kind").startswith("Certificate") and reason in _CERT_FAILURES:
        return _plain(event, service, "cert_renewal", Role.SUPPORT, "certificate cannot be renewed")
    return None


def event_findings(observations: Iterable[Observation]) -> list[Finding]:
    """One finding per (kind, service): the newest event of each (events come newest first)."""
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    for obs in observations:
        if obs.tool_name != "k8s.events":
            continue
        for event in records(obs, "events"):
            try:
                finding = _event_finding(event)
            except BindingError:
                continue
            if finding is not None and finding.key not in seen:
                seen.add(finding.key)
                out.append(finding)
    return out
