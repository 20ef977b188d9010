"""Planning over the live tools an environment (or a recorded pack) has: Kubernetes, Prometheus, Loki.

For a question naming a workload (``checkout-api``), the calls an operator makes first: the pods and Warning events
of its namespaces, its Deployment's rollouts, kube-state-metrics of its pods (last termination and waiting reasons,
restarts), its error rate and latency (the environment's configured queries, and the series Prometheus holds for
it: ``prometheus_discovery``; not on recorded data, which answers plain selectors only), the headline series the
metric names known up front hold (error rates, latencies, connections against their limits), its logs, and the
error lines of its namespace's other workloads in Loki. Without a named workload, the namespaces' pods and Warning
events. The Executor then reads the logs of the failing pods it finds, the
events of the objects warned about and the Normal events the rules name (``follow_ups``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from diagnosis_server.agents.heuristic.prometheus_discovery import (
    LABEL_VALUES,
    SERIES,
    discovery_steps,
)
from diagnosis_server.agents.heuristic.prometheus_discovery import MAX_NAMED_SERIES as MAX_NAMED_SERIES
from diagnosis_server.agents.heuristic.prometheus_discovery import headline_names as headline_names
from diagnosis_server.conversions import JsonObject, JsonValue

MAX_NAMESPACES = 3
MAX_TARGETS = 2
# A namespace's events are read as its Warnings: a busy namespace's routine Normal events (Scheduled, Pulled,
# Started, ... thousands an hour) would fill the output bound before a warning past them is read. The Normal events
# that matter are read after (``follow_ups``): those of the warned-about objects, and the rules' ``normal_reasons``.
WARNINGS = "type=Warning"
# Error lines of every workload of a namespace: a dependency's trouble shows first in its callers' logs. Many lines
# that say what is wrong carry no error word ("[Note] [InnoDB] Starting crash recovery", "permission denied",
# "cannot allocate memory"): their words are asked for too.
NAMESPACE_ERRORS = (
    "(?i)(error|fatal|panic|exception|refused|timed out|timeout|failed|unavailable"
    "|denied|cannot|can't|unable|killed|no such host|no space|recovery|not shut ?down|unclean|corrupt)"
)
# kebab/dotted names in a question ("checkout-api", "orders-db.shop"), not versions or plain numbers.
_SUBJECT = re.compile(r"(?<![\w.-])([a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)(?![\w-])")
_KINDS = r"(?:service|deployment|workload|pods?|job|cronjob|statefulset|daemonset|replicaset|app)"
_NOUN_BEFORE = re.compile(rf"\b([a-z][a-z0-9-]{{2,}})\s+{_KINDS}\b")
# "job nightly-etl", "pod web-0", "deployment api": the name after its kind.
_NOUN_AFTER = re.compile(
    r"\b(?:job|cronjob|pod|deployment|statefulset|daemonset|replicaset)\s+[\"'`]?([a-z0-9][a-z0-9.-]*[a-z0-9])\b"
)
# "namespace app-12", "the app-12 namespace", "in ns shop": a namespace, never a workload.
_NAMESPACE_AFTER = re.compile(r"\b(?:namespace|ns)\s+[\"'`]?([a-z0-9][a-z0-9-]*[a-z0-9])\b")
_NAMESPACE_BEFORE = re.compile(r"\b([a-z0-9][a-z0-9-]*[a-z0-9])\s+namespace\b")
# Words of a question that are never names, whatever stands next to them.
_ORDINARY = frozenset(
    {
        "with", "from", "into", "onto", "about", "after", "before", "since", "until", "during", "between", "for",
        "and", "but", "not", "namespace", "cluster", "node", "nodes", "container", "containers", "issue", "problem",
        "wrong", "broken", "down", "up", "is", "are", "was", "were", "has", "have", "had", "why", "how", "when",
        "where", "who", "a", "an", "in", "on", "at", "of", "to", "by", "the", "my", "our", "right", "now", "today",
        "yesterday", "all", "any", "every", "each", "this", "that", "its", "ready", "fails", "failed", "crashed",
        "restarted", "healthy", "unhealthy", "stuck", "still", "keeps", "logs", "events", "status",
    }
)  # fmt: skip
# Words before "pods"/"service" that are not names ("its pods", "which service", "new pods").
_NOT_NOUNS = frozenset(
    [
        "the",
        "this",
        "that",
        "these",
        "those",
        "our",
        "your",
        "their",
        "its",
        "his",
        "her",
        "my",
        "all",
        "any",
        "some",
        "every",
        "each",
        "which",
        "what",
        "whose",
        "new",
        "old",
        "other",
        "same",
        "many",
        "more",
        "most",
        "few",
        "several",
        "both",
        "failing",
        "broken",
        "running",
        "pending",
        "crashing",
        "restarting",
        "web",
        "backend",
        "frontend",
        "database",
        "api",
    ]
)
# Hyphenated words of ordinary English (and of operations talk) that name no workload: "account sign-ups",
# "the check-out page", "a third-party API", "out-of-memory". Their plural and inflected forms are covered by
# ``ordinary_compound`` (sign-ups, log-ins, follow-ups, crash-looping).
_NOT_SUBJECTS = frozenset(
    {
        "add-on",
        "all-in-one",
        "auto-scale",
        "auto-scaling",
        "back-end",
        "back-off",
        "built-in",
        "check-in",
        "check-out",
        "clean-up",
        "co-located",
        "crash-loop",
        "cut-over",
        "day-to-day",
        "drop-off",
        "e-mail",
        "end-to-end",
        "end-user",
        "fail-over",
        "first-time",
        "follow-up",
        "front-end",
        "full-text",
        "hand-off",
        "high-latency",
        "in-app",
        "in-flight",
        "in-memory",
        "in-store",
        "long-running",
        "look-up",
        "log-in",
        "log-on",
        "low-latency",
        "multi-region",
        "multi-tenant",
        "non-prod",
        "non-production",
        "on-call",
        "on-prem",
        "on-premise",
        "on-premises",
        "one-time",
        "opt-in",
        "opt-out",
        "out-of-memory",
        "pick-up",
        "point-in-time",
        "pop-up",
        "post-mortem",
        "pre-prod",
        "pre-production",
        "re-deploy",
        "re-index",
        "re-run",
        "re-try",
        "read-only",
        "read-write",
        "real-time",
        "roll-back",
        "roll-out",
        "round-trip",
        "self-service",
        "server-side",
        "client-side",
        "set-up",
        "short-lived",
        "sign-in",
        "sign-on",
        "sign-up",
        "single-sign-on",
        "start-up",
        "third-party",
        "time-out",
        "top-up",
        "up-to-date",
        "well-known",
        "write-ahead",
        "x-ray",
    }
)


def ordinary_compound(word: str) -> bool:
    """Whether a hyphenated word is an ordinary English compound, not a name: ``sign-ups``, ``log-ins``,
    ``check-out``, ``e-mails``, ``crash-looping``, ``re-deployed`` (a listed compound, plural or inflected)."""
    low = word.lower().replace("_", "-")
    if low in _NOT_SUBJECTS:
        return True
    head, _, last = low.rpartition("-")
    if not head:
        return False
    for suffix in ("s", "es", "ing", "ed", "d"):
        if last.endswith(suffix) and len(last) > len(suffix) and f"{head}-{last[: -len(suffix)]}" in _NOT_SUBJECTS:
            return True
    return False


def question_namespaces(question: str) -> list[str]:
    """The namespaces a question names ("in namespace app-12", "the shop namespace")."""
    text = question.lower()
    found = [m.group(1) for pattern in (_NAMESPACE_AFTER, _NAMESPACE_BEFORE) for m in pattern.finditer(text)]
    return list(dict.fromkeys(n for n in found if n not in _ORDINARY and n not in _NOT_NOUNS))


def question_subjects(question: str, namespaces: Sequence[str] = ()) -> list[str]:
    """The workload, pod or service names a question gives: kebab-case names, a name before "service"/"pods" and
    after "job"/"pod"/"deployment"; never a namespace it names (or ``namespaces``), never an ordinary word."""
    text = question.lower()
    found = [m.group(1) for m in _SUBJECT.finditer(text) if not ordinary_compound(m.group(1))]
    nouns = [m.group(1) for m in _NOUN_BEFORE.finditer(text)] + [m.group(1) for m in _NOUN_AFTER.finditer(text)]
    found += [n for n in nouns if n not in _NOT_NOUNS and not ordinary_compound(n)]
    scopes = {*question_namespaces(question), *namespaces}
    return [n for n in dict.fromkeys(found) if n not in scopes and n not in _ORDINARY and not n.isdigit()]


def namespaces_of(context: JsonValue) -> list[str]:
    kubernetes = context.get("kubernetes") if isinstance(context, dict) else None
    names = kubernetes.get("namespaces") if isinstance(kubernetes, dict) else None
    return [n for n in names if isinstance(n, str)][:MAX_NAMESPACES] if isinstance(names, list) else []


def _queries(context: JsonValue) -> Mapping[str, str]:
    prometheus = context.get("prometheus") if isinstance(context, dict) else None
    if not isinstance(prometheus, dict):
        return {}
    return {k: v for k, v in prometheus.items() if isinstance(v, str) and k.endswith("_query")}


FIRING = 'ALERTS{alertstate="firing"}'
# The RED series by the labels that name services (job, service), so that each answer names what it is about.
RED_ERRORS = (
    'sum by (job, service) (rate(http_requests_total{code=~"5.."}[5m]))'
    " / sum by (job, service) (rate(http_requests_total[5m]))"
)
RED_LATENCY = "histogram_quantile(0.99, sum by (job, service, le) (rate(http_request_duration_seconds_bucket[5m])))"


def _subject_matchers(named: Sequence[str]) -> list[str]:
    """A selector per workload over the labels that name it (``job``, ``service``, ``app``), else one for all."""
    if not named:
        return [""]
    return [f'{{job=~"{t}(-.*)?"}}' for t in named]


def _fill(template: str, service: str, namespace: str) -> str | None:
    try:
        return template.format(service=service, namespace=namespace)
    except (KeyError, IndexError, ValueError):
        return None


def live_window(context: JsonValue) -> tuple[str, str] | None:
    """The run's window (``context.window``: RFC 3339 start and end), on a live environment."""
    window = context.get("window") if isinstance(context, dict) else None
    if not isinstance(window, dict):
        return None
    start, end = window.get("start"), window.get("end")
    return (start, end) if isinstance(start, str) and isinstance(end, str) else None


_RANGED = frozenset({"prometheus.query_range", "loki.query_range", SERIES, LABEL_VALUES})


def _spanned(tool: str, arguments: JsonObject, window: tuple[str, str] | None) -> JsonObject:
    """A range read's arguments with the window's bounds, an instant query's with its end: the plan says which
    span each read covers (and the analyzers read it back: ``events.read_window``)."""
    if window is None:
        return arguments
    if tool in _RANGED:
        return {**arguments, "start": window[0], "end": window[1]}
    if tool == "prometheus.query":
        return {**arguments, "time": window[1]}
    return arguments


def _readable(tools: Mapping[str, JsonObject], namespace: str) -> bool:
    """Whether the pods tool may read ``namespace`` (its schema's enum holds it, or it has none)."""
    schema = tools.get("kubernetes.pods", {}).get("input_schema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    param = properties.get("namespace") if isinstance(properties, dict) else None
    allowed = param.get("enum") if isinstance(param, dict) else None
    return not isinstance(allowed, list) or namespace in allowed


def live_steps(
    tools: Mapping[str, JsonObject],
    context: JsonValue,
    targets: Sequence[str],
    named_namespaces: Sequence[str] = (),
) -> list[tuple[str, JsonObject, str]]:
    """(tool, arguments, purpose) of the live calls, in priority order (only tools the run has). The namespaces
    the question names (that the tools may read) come before the configured ones."""
    recorded = isinstance(context, dict) and context.get("recorded") is True
    asked = [n for n in named_namespaces if _readable(tools, n)]
    namespaces = list(dict.fromkeys([*asked, *namespaces_of(context)]))[:MAX_NAMESPACES]
    named = list(targets)[:MAX_TARGETS]
    steps: list[tuple[str, JsonObject, str]] = []

    window = live_window(context)

    def add(tool: str, arguments: JsonObject, purpose: str) -> None:
        if tool in tools:
            steps.append((tool, _spanned(tool, arguments, window), purpose))

    for namespace in namespaces:
        add("kubernetes.pods", {"namespace": namespace}, f"the pods of {namespace}: their states and restarts")
        add(
            "kubernetes.events",
            {"namespace": namespace, "field_selector": WARNINGS},
            f"the warnings Kubernetes reports in {namespace}",
        )
    default = namespaces[0] if namespaces else ""
    for target in named:
        if default:
            add("kubernetes.rollouts", {"namespace": default, "deployment": target}, f"{target}'s recent rollouts")
    # The target's own pod (a pod named in the question) and its workload's pods: never {pod=~"<pod>-.*"}.
    selectors = [f'{{pod=~"{target}(-.*)?"}}' for target in named] or [""]
    for selector in selectors:
        add(
            "prometheus.query",
            {"query": f"kube_pod_container_status_last_terminated_reason{selector}"},
            "why containers last terminated (kube-state-metrics)",
        )
        add(
            "prometheus.query",
            {"query": f"kube_pod_container_status_waiting_reason{selector}"},
            "why containers are waiting (kube-state-metrics)",
        )
        add(
            "prometheus.query_range",
            {"query": f"kube_pod_container_status_restarts_total{selector}"},
            "container restarts over the window (kube-state-metrics)",
        )
    for name in headline_names(context):
        add("prometheus.query_range", {"query": name}, f"{name} over the window")
    if not recorded:
        # Any Prometheus, kube-state-metrics or not: what fires, what is down, what restarted, and the RED series
        # by the labels that name services; a recorded pack answers plain selectors only.
        add("prometheus.query", {"query": FIRING}, "the alerts firing")
        add("prometheus.query", {"query": "up"}, "which scrape targets are up (1) or down (0)")
        # What this Prometheus holds for each workload: the Executor reads its RED series by the label naming it.
        for tool, arguments, purpose in discovery_steps(named):
            add(tool, arguments, purpose)
        for matcher in _subject_matchers(named):
            add(
                "prometheus.query_range",
                {"query": f"process_start_time_seconds{matcher}"},
                "process restarts over the window (start time changes)",
            )
        add("prometheus.query_range", {"query": RED_ERRORS}, "the 5xx share of requests, by service")
        add("prometheus.query_range", {"query": RED_LATENCY}, "the p99 request latency, by service")
    if not recorded:
        for target in named:
            for key, template in sorted(_queries(context).items()):
                query = _fill(template, target, default)
                if query:
                    add("prometheus.query_range", {"query": query}, f"{target}'s {key.removesuffix('_query')}")
    for target in named:
        add("loki.query_range", {"query": f'{{app="{target}"}}', "limit": 200}, f"{target}'s logs")
    for namespace in namespaces[:1]:
        add(
            "loki.query_range",
            {"query": f'{{namespace="{namespace}"}} |~ `{NAMESPACE_ERRORS}`', "limit": 200},
            f"error lines of every workload in {namespace}",
        )
    if not recorded:
        # Live Loki may label streams by service rather than app; recorded packs answer the app selector.
        for target in named:
            add("loki.query_range", {"query": f'{{service="{target}"}}', "limit": 200}, f"{target}'s logs")
    return steps
