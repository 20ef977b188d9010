"""Deploy detectors: does an error onset follow a rollout closely enough to blame it?

A deploy whose service's errors (or latency) first rose above baseline within ``DEPLOY_WINDOW_S`` after
it is a cause candidate; errors that carry the new version, and a recovery after the next deploy of the
service (a rollback), back it. A deploy well before the onset is a red herring candidate (hypothesis).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from diagnosis_server.agents.heuristic import signals as sig
from diagnosis_server.agents.heuristic.analyzers.detectors import Onset
from diagnosis_server.agents.heuristic.analyzers.signatures import ERROR_LEVELS, self_excerpt
from diagnosis_server.agents.heuristic.findings import Finding, Role, quote
from diagnosis_server.agents.heuristic.observations import (
    Binding,
    BindingError,
    LogLine,
    Observation,
    Record,
    records,
)
from diagnosis_server.agents.heuristic.shapes import is_version
from diagnosis_server.text.literal import literal_between

_SOURCE_LOCATION = re.compile(r"[\w-]+\.(?:go|py|java|kt|js|ts|rb|rs|cs):\d+")


def _deploys(observations: Iterable[Observation]) -> list[Record]:
    out: list[Record] = []
    seen: set[tuple[str, str, str]] = set()
    for obs in observations:
        if obs.tool_name != "deploys.list":
            continue
        for deploy in records(obs, "deploys"):
            key = (deploy.text("service"), deploy.text("version"), deploy.text("ts"))
            if all(key) and deploy.ts is not None and key not in seen:
                seen.add(key)
                out.append(deploy)
    return out


def _deploy_bindings(deploy: Record) -> tuple[str, list[Binding]]:
    # A version that is not one token is bound, never written.
    version = deploy.text("version")
    named = f"{deploy.text('service')} {version}" if is_version(version) else deploy.text("service")
    described = f"{named} was deployed at {deploy.text('ts')}"
    bindings: list[Binding] = [deploy.bind("service"), deploy.bind("version"), deploy.bind("ts")]
    if deploy.text("summary"):
        described += f" ({quote(deploy.text('summary'))})"
        bindings.append(deploy.bind("summary"))
    return described, bindings


def _version_errors(deploy: Record, lines: Sequence[LogLine]) -> Finding | None:
    service, version = deploy.text("service"), deploy.text("version")
    if not is_version(version):
        return None
    token = literal_between(version, r"(?<![\w.])", r"(?![\w.])")
    for line in lines:
        if line.service != service or line.level not in ERROR_LEVELS or not token.search(line.message):
            continue
        excerpt = self_excerpt(line.message)
        if excerpt is None:
            continue
        bindings = [line.bind_service(), line.bind_message(version), line.bind_message(excerpt)]
        where = ""
        locations = _SOURCE_LOCATION.findall(line.message)
        if locations:
            where = f" at {locations[-1]}"
            bindings.append(line.bind_message(locations[-1]))
        statement = f"{service} {version} fails with {quote(excerpt)}{where}"
        return Finding("deploy_errors", Role.SUPPORT, service, statement, tuple(bindings), onset=line.ts)
    return None


def _rollback(deploy: Record, later: Sequence[Record], onset: Onset) -> Finding | None:
    back = sig.first_back_within(onset.series.points, onset.baseline, onset.threshold, onset.point)
    if back is None:
        return None
    after = [d for d in later if d.ts is not None and d.ts <= back.ts]
    if not after:
        return None
    fix = after[-1]
    described, bindings = _deploy_bindings(fix)
    s = onset.series
    statement = (
        f"{described} and {s.service} {s.metric} was back near its baseline at {s.point_ts(back)} "
        f"({s.obs.text('points', back.index, 1)})"
    )
    bindings += [s.obs.bind("metric"), s.bind_point(back, 0), s.bind_point(back, 1)]
    return Finding("rollback", Role.SUPPORT, fix.text("service"), statement, tuple(bindings))


def deploy_findings(
    observations: Sequence[Observation], onsets: Sequence[Onset], lines: Sequence[LogLine]
) -> list[Finding]:
    by_service: dict[str, Onset] = {}
    for item in onsets:  # the first symptom series of a service (its error rate, when fetched)
        by_service.setdefault(item.series.service, item)
    deploys = sorted(_deploys(observations), key=lambda d: (d.ts, d.text("service")))
    # Of a service's deploys before its onset, only the last one can have started it.
    last_before: dict[str, int] = {}
    for position, deploy in enumerate(deploys):
        onset = by_service.get(deploy.text("service"))
        if onset is not None and deploy.ts is not None and deploy.ts <= onset.point.ts:
            last_before[deploy.text("service")] = position
    out: list[Finding] = []
    for position, deploy in enumerate(deploys):
        service = deploy.text("service")
        first = by_service.get(service)
        if first is None or deploy.ts is None:
            continue
        onset = first
        delta = (onset.point.ts - deploy.ts).total_seconds()
        if 0 <= delta <= sig.DEPLOY_WINDOW_S and last_before.get(service) != position:
            continue
        s = onset.series
        try:
            described, bindings = _deploy_bindings(deploy)
            bindings += [s.obs.bind("metric"), s.bind_point(onset.point, 0)]
            rose = f"{service} {s.metric} first rose above its baseline at {s.point_ts(onset.point)}"
            if 0 <= delta <= sig.DEPLOY_WINDOW_S:
                errors = _version_errors(deploy, lines)
                later = [d for d in deploys[position + 1 :] if d.text("service") == service]
                rollback = _rollback(deploy, later, onset)
                strength = 2 + (errors is not None) + (rollback is not None)
                out.append(
                    Finding(
                        "deploy_regression",
                        Role.CAUSE,
                        service,
                        f"{described} and {rose}",
                        tuple(bindings),
                        strength=strength,
                        onset=deploy.ts,
                    )
                )
                out.extend(f for f in (errors, rollback) if f is not None)
            elif delta > sig.DEPLOY_WINDOW_S:
                statement = f"{described}, well before {rose}"
                out.append(Finding("deploy_before_onset", Role.HYPOTHESIS, service, statement, tuple(bindings)))
        except BindingError:
            continue
    return out
