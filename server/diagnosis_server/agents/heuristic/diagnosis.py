"""From findings to executor_evidence_v2 claims and gaps: which finding is the root cause, which are
symptoms and links, which are red herring candidates, and what is still missing.

- Causes are ranked by strength (a failure the platform reports outright beats a correlation), then by
  how far down the chain of blame their service is. The root cause claims, the links that lead to its
  service, and the symptoms are critical; the rest is context or hypothesis.
- Symptoms without a cause: the chain of blame is followed as far as the evidence goes, and a critical
  gap names the calls that would show why the last service fails (structured ``next_calls``). The calls
  also re-fetch the caller's side, so that a new cycle can state the whole chain from its own outputs.
- Neither: the headline signals within their baselines are the critical claims, and a conclusion claim
  resting on them says no incident was found.

An observation and a conclusion are different claims: the root cause finding is stated as observed, and
its cause claim (``findings.cause_statement``) rests on the same recorded values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from diagnosis_server.agents.heuristic.analyzers.events import event_views
from diagnosis_server.agents.heuristic.analyzers.pods import settled_pods
from diagnosis_server.agents.heuristic.analyzers.reads import is_workload_name, known_services
from diagnosis_server.agents.heuristic.analyzers.registry import analyze_all, current_only
from diagnosis_server.agents.heuristic.findings import Finding, Role, cause_statement, quote
from diagnosis_server.agents.heuristic.gaps import NextCall
from diagnosis_server.agents.heuristic.observations import Binding, Observation
from diagnosis_server.agents.heuristic.signals import ERROR, metric_family
from diagnosis_server.agents.heuristic.slow_chain import slow_cause
from diagnosis_server.agents.heuristic.targets import matches_part, question_words
from diagnosis_server.agents.heuristic.workloads import names

MAX_SYMPTOMS_CRITICAL = 3
MAX_LINKS_CRITICAL = 3
MAX_ROOT_CLAIMS = 3
MAX_CONTEXT = 4
MAX_HYPOTHESES = 3
MAX_HEALTHY = 6
CRITICAL_SUPPORT = frozenset({"crashloop", "disk_flood_stage", "deploy_errors", "db_slots", "rollback"})
# A failure the platform reports outright (OOMKilled, FailedMount, ErrImagePull): a cause with no symptom read.
STRONG_CAUSE = 3
# Symptoms read from single log lines: noise when the service's own headline signals are healthy.
GENERIC_SYMPTOMS = frozenset({"error_log", "slow_calls"})
# Findings about a database seen from its clients: links to a database root cause.
DATABASE_SIDE = frozenset({"app_pool", "app_pool_full", "db_slots"})


@dataclass(frozen=True, slots=True)
class ClaimDraft:
    statement: str
    critical: bool
    hypothesis: bool
    bindings: tuple[Binding, ...]


@dataclass(frozen=True, slots=True)
class GapDraft:
    description: str
    critical: bool
    calls: tuple[NextCall, ...] = ()
    # The workload the question names that no data was found about.
    subject: str = ""


@dataclass(frozen=True, slots=True)
class Assessment:
    claims: tuple[ClaimDraft, ...]
    gaps: tuple[GapDraft, ...]
    findings: tuple[Finding, ...]


# ------------------------------------------------------------------------------------------ detection
def _dependency_latency(findings: list[Finding]) -> list[Finding]:
    """A service whose latency rose while its callers time out on it: the latency is a cause."""
    timed_out = {f.blamed for f in findings if f.role is Role.LINK and f.kind == "timeout"}
    out: list[Finding] = []
    for finding in findings:
        if finding.role is Role.SYMPTOM and finding.kind == "latency" and finding.service in timed_out:
            out.append(Finding("dep_latency", Role.CAUSE, finding.service, finding.statement, finding.bindings, 2))
        else:
            out.append(finding)
    return out


def _exits(findings: list[Finding]) -> list[Finding]:
    """No cause found, and one workload's containers keep exiting (a crash loop, an exit with an error) while its
    pods are not ready or restart: that exit is the failure to state, with its exit code (what made the container
    exit the evidence does not say)."""
    if any(f.role is Role.CAUSE for f in findings):
        return findings
    failing = {f.service for f in findings if f.role is Role.SYMPTOM and f.kind in UNAVAILABLE_KINDS}
    exiting = list(dict.fromkeys(f.service for f in findings if f.kind in EXIT_KINDS and f.service in failing))
    if len(exiting) != 1:
        return findings
    order = {"crash_exit": 0, "crashloop": 1}
    candidates = [f for f in findings if f.service == exiting[0] and f.kind in EXIT_KINDS and f.role is Role.SUPPORT]
    if not candidates:
        return findings
    chosen = min(candidates, key=lambda f: order[f.kind])
    promoted = replace(chosen, role=Role.CAUSE, detail="" if chosen.kind == "crash_exit" else chosen.detail)
    return [promoted if f is chosen else f for f in findings]


def _unanswered(findings: list[Finding]) -> list[Finding]:
    """Callers' calls to a workload time out and nothing else is found about it or anywhere: that it does not
    respond in time is the cause they meet (the network between them or the workload itself; which one the
    calls do not say), stated with the callers' line."""
    if any(f.role is Role.CAUSE for f in findings):
        return findings
    own = {f.service for f in findings if f.role in (Role.CAUSE, Role.SUPPORT, Role.SYMPTOM) and f.strength > 0}
    out = list(findings)
    done: set[str] = set()
    for link in findings:
        blamed = link.blamed
        if link.role is not Role.LINK or link.kind != "timeout" or not blamed or blamed in own or blamed in done:
            continue
        done.add(blamed)
        statement = f"{blamed} does not respond in time to its callers: {link.statement}"
        out.append(Finding("unanswered", Role.CAUSE, blamed, statement, link.bindings, 1, onset=link.onset))
    return out


# The cluster's DNS server workloads (CoreDNS runs as ``coredns`` under the ``kube-dns`` Service).
CLUSTER_DNS = ("coredns", "kube-dns", "node-local-dns")


def _cluster_dns(findings: list[Finding]) -> list[Finding]:
    """Callers fail to resolve names while the cluster's DNS server logs failures: the DNS server is the cause
    (its own failure, quoted), not each name the callers asked for."""
    if not any(f.kind == "dns" for f in findings):
        return findings
    out: list[Finding] = []
    for finding in findings:
        dns_server = any(finding.service == n or finding.service.startswith(n + "-") for n in CLUSTER_DNS)
        if dns_server and finding.role in (Role.SUPPORT, Role.SYMPTOM) and finding.detail:
            statement = f"{finding.service} fails DNS lookups ({quote(finding.detail)})"
            finding = Finding("dns", Role.CAUSE, finding.service, statement, finding.bindings, 4, detail=finding.detail)
        out.append(finding)
    return out


def detect(observations: Sequence[Observation], subjects: Sequence[str] = ()) -> list[Finding]:
    """Every registered analyzer over this cycle's outputs, then what joins their findings. The question's
    workloads are known names too: an object named after one (a Certificate ``ledger-grpc-tls``) is about it even
    where no pod of it is listed."""
    return current_only(_cluster_dns(_dependency_latency(analyze_all(observations, subjects))))


# ------------------------------------------------------------------------------------------ reasoning
def _depths(links: Sequence[Finding]) -> dict[str, int]:
    """How many hops of blame lead to each service (callers are 0)."""
    depth: dict[str, int] = {link.service: 0 for link in links}
    for _ in range(len(links)):
        changed = False
        for link in links:
            candidate = depth.get(link.service, 0) + 1
            if link.blamed != link.service and candidate > depth.get(link.blamed, -1) and candidate <= len(links):
                depth[link.blamed] = candidate
                changed = True
        if not changed:
            break
    return depth


def _claim(finding: Finding, *, critical: bool) -> ClaimDraft:
    return ClaimDraft(finding.statement, critical, finding.role is Role.HYPOTHESIS, finding.bindings)


def _symptom_order(findings: Sequence[Finding]) -> list[Finding]:
    symptoms = [f for f in findings if f.role is Role.SYMPTOM]
    return sorted(symptoms, key=lambda f: 0 if f.kind == ERROR else 1)


def _fetched(observations: Sequence[Observation], tool: str, service: str) -> bool:
    return any(o.tool_name == tool and o.service == service for o in observations)


def _error_metric(observations: Sequence[Observation], service: str) -> str:
    for obs in observations:
        metric = obs.get("metric")
        if obs.service == service and isinstance(metric, str) and metric_family(metric) == ERROR:
            return metric
    return ""


# Causes that say a workload's containers fail without saying why: its own error line says why.
CRASH_KINDS = frozenset({"crashloop", "crash_exit", "bad_rollout", "not_ready"})


def _explained(root: Finding, findings: Sequence[Finding]) -> Finding:
    """The root cause with what its workload's last error line said, when the cause itself does not say why
    (a crash loop, a rollout whose pods do not get ready): the line becomes its detail and its evidence."""
    if root.kind not in CRASH_KINDS:
        return root
    line = next(
        (f for f in reversed(findings) if f.service == root.service and f.kind == "error_log" and f.detail), None
    )
    if line is None:
        return root
    bindings = tuple(dict.fromkeys((*root.bindings, *line.bindings)))
    # The container that exits stays named beside the line that says why (an init container's migration).
    head, paren, rest = root.statement.partition(" (")
    statement = root.statement
    if root.container and paren and f"container {root.container}" not in head:
        named = f" container {root.container} "
        head = head.replace(" containers ", named, 1) if " containers " in head else f"{head} in{named.rstrip()}"
        statement = f"{head}{paren}{rest}"
    return replace(root, statement=statement, detail=line.detail, bindings=bindings)


def _with_cause(
    findings: list[Finding], observations: Sequence[Observation]
) -> tuple[list[ClaimDraft], list[GapDraft]]:
    causes = [f for f in findings if f.role is Role.CAUSE]
    links = [f for f in findings if f.role is Role.LINK]
    depth = _depths(links)
    order = {id(f): i for i, f in enumerate(causes)}
    root = max(causes, key=lambda c: (c.strength, depth.get(c.service, 0), -order[id(c)]))
    service = root.service
    root_causes = sorted((c for c in causes if c.service == service), key=lambda c: -c.strength)[:MAX_ROOT_CLAIMS]
    used = {id(f) for f in root_causes}
    to_root = [f for f in links if f.blamed == service]
    if root.kind == "db_exhausted":
        to_root += [f for f in findings if f.kind in DATABASE_SIDE and f.service != service]
    to_root = to_root[:MAX_LINKS_CRITICAL]
    used.update(id(f) for f in to_root)
    symptoms = _symptom_order(findings)
    used.update(id(f) for f in symptoms)
    backing = [f for f in findings if f.role is Role.SUPPORT and f.service == service and id(f) not in used]
    used.update(id(f) for f in backing)

    claims = [_claim(f, critical=i < MAX_SYMPTOMS_CRITICAL) for i, f in enumerate(symptoms)]
    claims += [_claim(f, critical=True) for f in to_root]
    claims += [_claim(f, critical=True) for f in root_causes]
    root_finding = _explained(root_causes[0], findings)
    claims.append(ClaimDraft(cause_statement(root_finding), True, False, root_finding.bindings))
    claims += [_claim(f, critical=f.kind in CRITICAL_SUPPORT) for f in backing]
    context = [f for f in findings if f.role in (Role.SUPPORT, Role.LINK) and id(f) not in used]
    claims += [_claim(f, critical=False) for f in context[:MAX_CONTEXT]]
    others = [f.as_role(Role.HYPOTHESIS) for f in causes if id(f) not in used]
    others += [f for f in findings if f.role is Role.HYPOTHESIS]
    claims += [_claim(f, critical=False) for f in others[:MAX_HYPOTHESES]]

    gaps: list[GapDraft] = []
    missing = [
        NextCall.of(tool, service=service, level="WARN" if tool == "logs.search" else None)
        for tool in ("logs.search", "k8s.events")
        if not _fetched(observations, tool, service) and is_workload_name(service)
    ]
    if missing:
        gaps.append(
            GapDraft(
                f"{service}'s own logs or Kubernetes events were not fetched, so what drives its failure "
                "beyond the evidence above is not shown",
                critical=False,
                calls=tuple(missing),
            )
        )
    return claims, gaps


def _without_cause(
    findings: list[Finding], observations: Sequence[Observation]
) -> tuple[list[ClaimDraft], list[GapDraft]]:
    symptoms = _symptom_order(findings)
    links = [f for f in findings if f.role is Role.LINK]
    depth = _depths(links)
    blamed = [f.blamed for f in links]
    deepest = max(blamed, key=lambda s: (depth.get(s, 0), -blamed.index(s))) if blamed else symptoms[0].service
    claims = [_claim(f, critical=i < MAX_SYMPTOMS_CRITICAL) for i, f in enumerate(symptoms)]
    claims += [_claim(f, critical=i < MAX_LINKS_CRITICAL) for i, f in enumerate(links)]
    context = [f for f in findings if f.role is Role.SUPPORT]
    claims += [_claim(f, critical=False) for f in context[:MAX_CONTEXT]]
    hypotheses = [f for f in findings if f.role is Role.HYPOTHESIS]
    claims += [_claim(f, critical=False) for f in hypotheses[:MAX_HYPOTHESES]]

    calls = [
        NextCall.of("k8s.events", service=deepest),
        NextCall.of("metrics.query", service=deepest),
        NextCall.of("deploys.list", service=deepest),
        NextCall.of("logs.search", service=deepest, level="WARN"),
    ]
    callers = [f.service for f in links if f.blamed == deepest]
    if callers:
        caller = callers[0]
        calls.append(NextCall.of("logs.search", service=caller, level="ERROR", query=deepest))
        description = (
            f"{caller} calls to {deepest} fail, but the cause of {deepest}'s failures is not established: "
            f"its Kubernetes events, deploys and saturation metrics were not fetched"
        )
    else:
        description = f"{deepest} is failing, but the cause is not established by the fetched evidence"
    for symptom in symptoms:
        metric = _error_metric(observations, symptom.service)
        if metric:
            calls.append(NextCall.of("metrics.query", service=symptom.service, metric=metric))
    return claims, [GapDraft(description, critical=True, calls=tuple(dict.fromkeys(calls)))]


def _covers(healthy: Sequence[Finding], subjects: Sequence[str]) -> bool:
    """Whether the healthy findings are about every workload the question names (all of them, when none)."""
    return all(any(names(s, f.service) for f in healthy) for s in subjects)


def _healthy(
    findings: list[Finding],
    observations: Sequence[Observation],
    subjects: Sequence[str] = (),
    failed_calls: int = 0,
) -> tuple[list[ClaimDraft], list[GapDraft]]:
    # Running, ready pods say a workload serves now, not that nothing happened to it: not when something else
    # was found about it (a probe that failed, an error line) or callers fail on it (the links' blamed service).
    noted = {f.service for f in findings if f.role is not Role.HEALTHY and (f.strength > 0 or f.role is Role.LINK)}
    noted |= {f.blamed for f in findings if f.role is not Role.HEALTHY and f.blamed}
    healthy = [f for f in findings if f.role is Role.HEALTHY and not (f.kind == "pods_ready" and f.service in noted)][
        :MAX_HEALTHY
    ]
    claims = [_claim(f, critical=True) for f in healthy]
    # "No incident found" only when the healthy evidence covers the question's workloads and no call failed: a
    # source that failed may hold the incident.
    # (A workload's own healthy signals count though a noted finding keeps them out of the claims.)
    read_healthy = [f for f in findings if f.role is Role.HEALTHY]
    concluded = bool(healthy) and not failed_calls and _covers(read_healthy, subjects)
    if concluded:
        services = list(dict.fromkeys(f.service for f in healthy))
        named = services[0] if len(services) == 1 else ", ".join(services[:-1]) + " and " + services[-1]
        # A conclusion of its own, resting on each healthy signal (their service bindings).
        bindings = tuple(dict.fromkeys(f.bindings[0] for f in healthy))
        what = []
        if any(f.kind == "within_baseline" for f in healthy):
            what.append("their headline signals stayed within baseline")
        if any(f.kind == "pods_ready" for f in healthy):
            what.append("their pods are running with their containers ready")
        claims.append(ClaimDraft(f"No incident found for {named}: {' and '.join(what)}", True, False, bindings))
    context = [f for f in findings if f.role in (Role.SUPPORT, Role.LINK, Role.HYPOTHESIS)]
    claims += [_claim(f.as_role(Role.HYPOTHESIS), critical=False) for f in context[:MAX_HYPOTHESES]]
    if healthy and not concluded:
        why = (
            f"{failed_calls} call(s) failed"
            if failed_calls
            else "the healthy signals are not about "
            + ", ".join(s for s in subjects if not any(names(s, f.service) for f in healthy))
        )
        return claims, [GapDraft(f"No conclusion that nothing is wrong: {why}", critical=False)]
    if healthy:
        return claims, []
    services = sorted({o.service for o in observations if o.service})[:3]
    calls = tuple(NextCall.of("metrics.query", service=s) for s in services)
    return claims, [GapDraft("No headline signal could be read", critical=True, calls=calls)]


# A workload's containers exiting (a crash loop, an exit with an error): a cause when callers fail on it.
EXIT_KINDS = frozenset({"crashloop", "crash_exit"})
# Findings that show a workload is not serving, whatever role their rule gives them.
UNAVAILABLE_KINDS = frozenset({"replicas_unavailable", "not_ready"})


def _refine(
    findings: list[Finding], settled: frozenset[str] = frozenset(), subjects: Sequence[str] = ()
) -> list[Finding]:
    """Drop what another finding says better; demote client-side pool trouble without a database at its limit,
    and failure mechanisms nothing shows to matter. A workload the question names is one the user reports
    trouble with: its causes are kept."""
    deploy_errors = {f.service for f in findings if f.kind == "deploy_errors"}
    database_full = any(f.kind == "db_exhausted" and f.role is Role.CAUSE for f in findings)
    # A service whose error rate or latency was read and stayed within its baseline: its stray error lines
    # and slow calls are noise candidates, not symptoms.
    healthy = {f.service for f in findings if f.role is Role.HEALTHY and f.kind == "within_baseline"}
    symptomatic = {f.service for f in findings if f.role is Role.SYMPTOM and f.kind not in GENERIC_SYMPTOMS}
    symptomatic |= {f.service for f in findings if f.role is Role.LINK} | {f.blamed for f in findings if f.blamed}
    blamed = {f.blamed for f in findings if f.blamed}
    linked = {f.blamed for f in findings if f.blamed and f.role is Role.LINK}
    # A database (or pooler) at its limit while clients report refused or waiting connections: they blame it.
    clients = {f.service for f in findings if f.kind in DATABASE_SIDE}
    full = {f.service for f in findings if f.kind == "db_exhausted" and f.role is Role.CAUSE}
    if clients - full:
        blamed |= full
        symptomatic |= full
    symptomatic |= {f.service for f in findings if f.kind in UNAVAILABLE_KINDS}
    symptomatic |= {f.service for f in findings if any(names(s, f.service) for s in subjects)}
    kinds = {f.kind for f in findings}
    own_kinds = {(f.service, f.kind) for f in findings}
    # The (workload, kind) of the findings that agree within their workload (``cause_with_own``): the mechanism and
    # the findings that made it a cause.
    agreeing: set[tuple[str, str]] = set()
    for f in findings:
        if f.cause_with_own and any((f.service, kind) in own_kinds for kind in f.cause_with):
            agreeing |= {(f.service, f.kind), *((f.service, kind) for kind in f.cause_with)}
    out: list[Finding] = []
    for finding in findings:
        if finding.cause_with_own:
            agreed = (finding.service, finding.kind) in agreeing
        else:
            agreed = bool(set(finding.cause_with) & kinds)
        if agreed and finding.role is not Role.CAUSE:
            finding = replace(finding, role=Role.CAUSE, strength=max(finding.strength, STRONG_CAUSE))
        # A workload whose containers exit while its callers' calls to it fail: the exits are what they meet. An
        # exit is stated whole (its exit code says how it ended: 137 is a kill), not by its reason alone.
        if finding.kind in EXIT_KINDS and finding.role is Role.SUPPORT and finding.service in linked:
            detail = "" if finding.kind == "crash_exit" else finding.detail
            finding = replace(finding, role=Role.CAUSE, detail=detail)
        if finding.kind == "panic" and finding.service in deploy_errors:
            continue
        # About a pod that now runs ready, and no caller failed on it: what the event reported is over.
        if (
            finding.pod
            and finding.pod in settled
            and finding.service not in blamed
            and finding.role in (Role.CAUSE, Role.SUPPORT, Role.SYMPTOM)
        ):
            finding = finding.as_role(Role.HYPOTHESIS)
        # Client-side pool trouble is the database's doing when the database is at its limit; a pool's own
        # timeout and its own series at its size (``cause_with_own``) say the pool itself is the bottleneck.
        if finding.kind in DATABASE_SIDE and not database_full and (finding.service, finding.kind) not in agreeing:
            finding = finding.as_role(Role.HYPOTHESIS)
        if finding.kind in GENERIC_SYMPTOMS and finding.service in healthy:
            finding = finding.as_role(Role.HYPOTHESIS)
        # A failure mechanism on a service that shows no symptom, is blamed by no caller and is linked to
        # nothing is a red herring candidate (one failed probe of a serving pod), not the incident's cause:
        # when headline signals elsewhere were read healthy, or when the platform does not report it outright.
        # A mechanism its own workload's findings agree on is no red herring: a pool's timeout is a request that
        # failed waiting for a connection, and the pool's own series show it at its size.
        if (
            finding.role is Role.CAUSE
            and finding.service not in symptomatic
            and (finding.service, finding.kind) not in agreeing
            and (healthy or finding.strength < STRONG_CAUSE)
        ):
            finding = finding.as_role(Role.HYPOTHESIS)
        out.append(finding)
    return out


def unknown_subjects(subjects: Sequence[str], observations: Sequence[Observation], question: str = "") -> list[str]:
    """The names the question gives that no output of the run mentions (as a service, workload or pod).

    A hyphenated word is taken for a name on its form alone; when the question's other words already name known
    workloads by a distinctive part ("account sign-ups" and accounts-api), an unmatched hyphenated word is not
    a workload the data lacks ("sign-ups" is what the users do)."""
    known = known_services(observations)
    # An object named after the subject (its Certificate, PVC or Job: events of ``ledger-grpc-tls``) mentions it.
    named = {view.service for view in event_views(observations, [s for s in subjects if is_workload_name(s)])}
    unknown = [s for s in subjects if s not in named and not any(names(s, k) for k in known)]
    hyphenated = [s for s in unknown if "-" in s or "_" in s]
    if not hyphenated or not question:
        return unknown
    rest = question.lower()
    for name in hyphenated:
        rest = rest.replace(name, " ")
    words = question_words(rest)
    if any(matches_part(words, k) for k in known):
        return [s for s in unknown if s not in hyphenated]
    return unknown


def assess(
    observations: Sequence[Observation], *, subjects: Sequence[str] = (), question: str = "", failed_calls: int = 0
) -> Assessment:
    """Findings, then claims and gaps. When the question names workloads and the data knows none of them, the
    answer is that there is no data about them: no claim about anything else (never "no incident found")."""
    refined = _refine(detect(observations, subjects), settled_pods(observations), subjects)
    findings = _exits(_unanswered(slow_cause(refined, observations)))
    unknown = unknown_subjects(subjects, observations, question)
    if subjects and len(unknown) == len(subjects):
        missing = tuple(
            GapDraft(f"no output of the calls made mentions {s}", critical=True, subject=s) for s in unknown
        )
        return Assessment((), missing, tuple(findings))
    if any(f.role is Role.CAUSE for f in findings):
        claims, gaps = _with_cause(findings, observations)
    elif any(f.role is Role.SYMPTOM for f in findings):
        claims, gaps = _without_cause(findings, observations)
    else:
        claims, gaps = _healthy(findings, observations, subjects, failed_calls)
    return Assessment(tuple(claims), tuple(gaps), tuple(findings))
