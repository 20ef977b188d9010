"""The heuristic run on a large input: a namespace of 200 pods, 5,000 events and 20,000 log lines (scale 1).

The pack is built here (``large_pack``), in the recorded-pack format of the README ("Recorded incidents"): a
topology of services in one namespace, raw Kubernetes Pod and core/v1 Event objects (``kubernetes.pods``,
``kubernetes.events``), pack log lines (``logs``) and metrics, with one incident in it (a service's pods
OOMKilled and restarting, the kubelet's BackOff warnings about them, its errors rising) among a lot of ordinary
noise. The run goes through the graph (``Orchestrator`` with the heuristic provider and the pack's tools,
``sources.packs``) with a no-op store:
nothing here knows the analyzers' internals. Measured per run: process CPU of the whole run, and the agents'
own CPU (the analyzers: time inside the agents' calls less the time inside their tool calls), at scales 1, 2
and 4 (everything in the namespace multiplied), to show how the cost grows with the input.
"""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.profiling import ProfileSummary, profile_async
from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import Agent, AgentProvider, AgentReply, AgentRequest, AgentRole
from diagnosis_server.agents.heuristic import HeuristicProvider
from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import MemoryStore
from diagnosis_server.tools.scenario import Scenario

NAME = "bench-large-namespace"
NAMESPACE = "shop"
QUESTION = "Why is checkout-api returning 503s?"
START = datetime(2024, 11, 29, 13, 0, tzinfo=UTC)
WINDOW_S = 3600
PODS, EVENTS, LOG_LINES = 200, 5000, 20_000
SERVICES = (
    ("web-frontend", "http", ("checkout-api", "catalog-api")),
    ("checkout-api", "http", ("payments-api", "cart-redis", "orders-db")),
    ("payments-api", "http", ()),
    ("catalog-api", "http", ("search-api",)),
    ("search-api", "http", ()),
    ("cart-redis", "cache", ()),
    ("orders-db", "database", ()),
    ("inventory-api", "http", ()),
    ("shipping-api", "http", ()),
    ("users-api", "http", ()),
)
FAULTY = "checkout-api"
_NORMAL_REASONS = (
    ("Scheduled", "Successfully assigned {ns}/{pod} to node-{node}"),
    ("Pulled", 'Container image "registry.local/{svc}:1.4.{n}" already present on machine'),
    ("Created", "Created container {svc}"),
    ("Started", "Started container {svc}"),
)
_INFO = (
    'GET /api/v1/items/{n} 200 {ms}ms "Mozilla/5.0"',
    "request handled in {ms}ms for tenant t-{n}",
    "cache hit ratio 0.9{n} over the last minute",
    "connection pool stats: active={n} idle=10 max=50",
)


def _iso(offset_s: float) -> str:
    return (START + timedelta(seconds=offset_s)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def large_pack(scale: int = 1) -> Scenario:
    """The large namespace at ``scale`` (1: 200 pods, 5,000 events, 20,000 log lines; everything times scale)."""
    pods_n, events_n, lines_n = PODS * scale, EVENTS * scale, LOG_LINES * scale
    names = [name for name, _, _ in SERVICES]
    pods: list[dict[str, Any]] = []
    for i in range(pods_n):
        service = names[i % len(names)]
        faulty = service == FAULTY and i % 20 < 4
        last_state: dict[str, Any] = {}
        if faulty:
            last_state = {"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": _iso(3000 + i)}}
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{service}-7f9c6d8b5-{i:05d}",
                    "namespace": NAMESPACE,
                    "labels": {"app": service, "pod-template-hash": "7f9c6d8b5"},
                    "creationTimestamp": _iso(0),
                },
                "spec": {"nodeName": f"node-{i % 12}", "containers": [{"name": service, "image": f"{service}:1.4"}]},
                "status": {
                    "phase": "Running",
                    "containerStatuses": [
                        {
                            "name": service,
                            "ready": not faulty,
                            "restartCount": 6 if faulty else 0,
                            "lastState": last_state,
                            "state": {"running": {"startedAt": _iso(3100 + i)}},
                        }
                    ],
                },
            }
        )
    events: list[dict[str, Any]] = []
    for i in range(events_n):
        pod = pods[i % pods_n]
        service = pod["metadata"]["labels"]["app"]
        # Half the events of the OOMKilled pods are the kubelet's BackOff warnings (the faulty pods as made above).
        warning = service == FAULTY and (i % pods_n) % 20 < 4 and (i // pods_n) % 2 == 0
        if warning:
            name = pod["metadata"]["name"]
            reason, kind = "BackOff", "Warning"
            message = f"Back-off restarting failed container {service} in pod {name}_{NAMESPACE}({i % pods_n:08x})"
        else:
            reason, template = _NORMAL_REASONS[i % len(_NORMAL_REASONS)]
            message = template.format(ns=NAMESPACE, pod=pod["metadata"]["name"], node=i % 12, svc=service, n=i % 9)
            kind = "Normal"
        at = _iso(WINDOW_S * i / events_n)
        events.append(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": f"{pod['metadata']['name']}.{i:016x}", "namespace": NAMESPACE},
                "involvedObject": {"kind": "Pod", "name": pod["metadata"]["name"], "namespace": NAMESPACE},
                "reason": reason,
                "message": message,
                "type": kind,
                "count": 1,
                "firstTimestamp": at,
                "lastTimestamp": at,
            }
        )
    logs: list[dict[str, Any]] = []
    for i in range(lines_n):
        service = names[i % len(names)]
        offset = WINDOW_S * i / lines_n
        if service == FAULTY and offset > 2900 and i % 40 == 1:
            level, message = "ERROR", "java.lang.OutOfMemoryError: Java heap space"
        elif service == "web-frontend" and offset > 2900 and i % 40 == 0:
            level, message = "ERROR", f"upstream checkout-api returned 503 for POST /api/checkout ({i % 90} ms)"
        elif i % 97 == 0:
            level, message = "WARN", f"slow request: {150 + i % 300}ms for GET /api/v1/items/{i % 1000}"
        else:
            level, message = "INFO", _INFO[i % len(_INFO)].format(n=i % 1000, ms=5 + i % 40)
        logs.append({"ts": _iso(offset), "service": service, "level": level, "message": message})
    metrics: list[dict[str, Any]] = []
    for service in names:
        errors = [[_iso(60 * m), (0.2 if service == FAULTY and m >= 50 else 0.002)] for m in range(61)]
        memory = [
            [_iso(60 * m), 3.5e8 + (1.6e8 * (m % 10) / 10 if service == FAULTY and m >= 35 else 0)] for m in range(61)
        ]
        metrics.append({"metric": "http_requests_error_rate", "service": service, "unit": "ratio", "points": errors})
        metrics.append(
            {
                "metric": "container_memory_working_set_bytes",
                "service": service,
                "unit": "bytes",
                "labels": {"container": service, "limit": "536870912"},
                "points": memory,
            }
        )
    data = {
        "name": NAME,
        "title": "A busy namespace with one OOMKilled service",
        "description": f"Generated by bench.largepack at scale {scale}.",
        "question": QUESTION,
        "time_window": {"start": _iso(0), "end": _iso(WINDOW_S)},
        "topology": {
            "services": [
                {"name": name, "kind": kind, "depends_on": list(deps), "labels": {"namespace": NAMESPACE}}
                for name, kind, deps in SERVICES
            ]
        },
        "logs": logs,
        "metrics": metrics,
        "kubernetes": {"pods": pods, "events": events},
    }
    return Scenario.model_validate(data)


class _Timed:
    """An agent whose calls are timed: the CPU inside them, less the CPU inside their tool calls."""

    def __init__(self, inner: Agent, clock: dict[str, float]) -> None:
        self._inner = inner
        self._clock = clock

    async def run(self, request: AgentRequest) -> AgentReply:
        if request.tools is not None:
            request = _with_timed_tools(request, self._clock)
        start = time.process_time()
        try:
            return await self._inner.run(request)
        finally:
            self._clock["agents"] += time.process_time() - start


def _with_timed_tools(request: AgentRequest, clock: dict[str, float]) -> AgentRequest:
    import dataclasses

    tools: Any = request.tools
    assert tools is not None

    class TimedTools:
        def __getattr__(self, name: str) -> Any:
            return getattr(tools, name)

        async def call(self, tool_name: str, arguments: Any) -> Any:
            start = time.process_time()
            try:
                return await tools.call(tool_name, arguments)
            finally:
                clock["tools"] += time.process_time() - start

        async def call_many(self, calls: Any) -> Any:
            start = time.process_time()
            try:
                return await tools.call_many(calls)
            finally:
                clock["tools"] += time.process_time() - start

        async def earlier(self) -> Any:
            return await tools.earlier()

    timed: Any = TimedTools()
    return dataclasses.replace(request, tools=timed)


class _CountingStore(MemoryStore):
    """The in-memory store (records uncopied), counting the recorded tool output bytes (what the analyzers
    were given)."""

    def __init__(self) -> None:
        super().__init__(owner="bench", copies=False)
        self.output_bytes = 0
        self.calls = 0

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        self.output_bytes += invocation.output.ByteSize()
        self.calls += 1
        await super().add_tool_invocation(invocation)


class TimedProvider:
    def __init__(self, inner: AgentProvider) -> None:
        self.name = inner.name
        self._inner = inner
        self.clock = {"agents": 0.0, "tools": 0.0}

    def agent(self, role: AgentRole) -> Agent:
        return _Timed(self._inner.agent(role), self.clock)


async def _measure_scale(scale: int, runs: int) -> tuple[float, float, tuple[int, int], str]:
    """(CPU ms per run, analyzer CPU ms per run, (tool calls, their recorded output bytes) of a run, the
    run's verdict) at ``scale``."""
    pack = large_pack(scale)
    provider = TimedProvider(HeuristicProvider())
    store = _CountingStore()
    runner = Orchestrator(store=store, provider=provider, tools_for=pack_tools_for({NAME: pack}))
    run = await runner.run(question=QUESTION, scenario=NAME)  # warm-up (and the shape of a run)
    if run.status != run_pb2.RUN_STATUS_SUCCESS:
        raise RuntimeError(f"the large-pack run ended {run_pb2.RunStatus.Name(run.status)}: {run.failure_reason}")
    calls = (store.calls, store.output_bytes)
    cpu: list[float] = []
    analyzers: list[float] = []
    for _ in range(runs):
        provider.clock.update(agents=0.0, tools=0.0)
        start = time.process_time()
        await runner.run(question=QUESTION, scenario=NAME)
        cpu.append(time.process_time() - start)
        analyzers.append(provider.clock["agents"] - provider.clock["tools"])
    verdict = contracts_pb2.Verdict.Name(run.verdict)
    return statistics.median(cpu) * 1000, statistics.median(analyzers) * 1000, calls, verdict


async def measure(*, runs: int = 5, scales: tuple[int, ...] = (1, 2, 4)) -> dict[str, Any]:
    cpu: dict[str, float] = {}
    analyzers: dict[str, float] = {}
    verdicts: dict[str, str] = {}
    seen: dict[str, dict[str, int]] = {}
    for scale in scales:
        run_ms, analyzer_ms, (calls, output_bytes), verdict = await _measure_scale(scale, runs)
        seen[str(scale)] = {"tool_calls": calls, "recorded_output_bytes": output_bytes}
        cpu[str(scale)] = round(run_ms, 3)
        analyzers[str(scale)] = round(analyzer_ms, 3)
        verdicts[str(scale)] = verdict
    base = str(min(scales))
    largest = str(max(scales))
    # Linear: cost per unit of input at the largest scale over its cost at scale 1 (1.0 = linear, < 1 sublinear).
    growth = {s: round(analyzers[s] / analyzers[base] / (int(s) / int(base)), 3) for s in analyzers}
    run_growth = {s: round(cpu[s] / cpu[base] / (int(s) / int(base)), 3) for s in cpu}
    return {
        "heuristic_large_cpu_ms_per_run": cpu[base],
        "heuristic_large_cpu_ms_by_scale": cpu,
        "heuristic_large_analyzer_ms_by_scale": analyzers,
        "heuristic_large_analyzer_growth_per_unit": growth,
        "heuristic_large_run_growth_per_unit": run_growth,
        "heuristic_large_analyzer_growth_at_largest": growth[largest],
        "heuristic_large_verdict_by_scale": verdicts,
        # What the analyzers were given: each tool output is capped (256 KiB, trimmed arrays), so past some size
        # the pack grows and what a run reads does not.
        "heuristic_large_tool_outputs_by_scale": seen,
        "heuristic_large_input": {"pods": PODS, "events": EVENTS, "log_lines": LOG_LINES},
    }


async def profile(*, runs: int = 5) -> ProfileSummary:
    """A cProfile of heuristic runs on the large pack (scale 1), no-op store."""
    pack = large_pack(1)
    runner = Orchestrator(
        store=MemoryStore(owner="bench", copies=False),
        provider=HeuristicProvider(),
        tools_for=pack_tools_for({NAME: pack}),
    )
    await runner.run(question=QUESTION, scenario=NAME)
    return await profile_async(
        lambda: runner.run(question=QUESTION, scenario=NAME), ops=runs, what=f"{runs} heuristic runs on the large pack"
    )
