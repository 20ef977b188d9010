"""The incident corpus served live: each pack's Kubernetes objects and pod logs from a loopback API server read by the
official client, its log streams from a loopback Loki, and (where it has series and Prometheus is installed) its
series in a real Prometheus backfilled with promtool; the pack's question asked of that environment over the
pack's own window.

The loopback servers answer what the real clients ask (paths, selectors, times) from the pack's data, through the
pack's own answering tools (``tests.sources.live_incident.LiveUpstreams``): a request they cannot answer is the
API's error (a 404 Status, Loki's 400), as the real server's would be. The Prometheus is real: every PromQL query
the live plan makes is evaluated by it.
"""

from __future__ import annotations

import asyncio
import math
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.heuristic import HeuristicProvider
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.sources.config import load_environments
from diagnosis_server.sources.packs import _namespaces as pack_namespaces
from diagnosis_server.sources.packs import pack_series
from diagnosis_server.sources.registry import EnvironmentRegistry
from diagnosis_server.store import MemoryStore
from diagnosis_server.time_window import Window
from diagnosis_server.tools.base import ToolError
from diagnosis_server.tools.scenario import LokiStream, Scenario
from tests.sources.conftest import _stop, _wait_http, free_port, write_kubeconfig
from tests.sources.fake_http import FakeUpstream, Request, Response, json_response, text_response
from tests.sources.live_incident import LiveUpstreams

Run = tuple[run_pb2.DiagnosisRun, list[contracts_pb2.ToolInvocation]]


class PackUpstreams(LiveUpstreams):
    """``LiveUpstreams`` with the pod log endpoint, and the API's error for what the pack's tools refuse. The
    pack's service logs (the built-in ``logs`` section) are Loki streams labelled as a Kubernetes log agent labels
    them (``namespace``, ``app``), beside the ``service`` and ``level`` the pack gives them."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(as_loki_streams(scenario))
        self.namespaces = _namespaces(scenario)

    def kubernetes(self, request: Request) -> Response:
        parts = request.path.strip("/").split("/")
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 7 and parts[6] == "log":
            return self._log(parts[3], parts[5], request.query)
        try:
            return super().kubernetes(request)
        except ToolError as exc:
            return _status(400 if "BadRequest" in str(exc) else 404, str(exc))

    def _log(self, namespace: str, pod: str, query: dict[str, str]) -> Response:
        if "kubernetes.pod_logs" not in self._tools:
            return _status(404, f'pods "{pod}" not found')
        arguments: dict[str, Any] = {"namespace": namespace, "pod": pod}
        if "container" in query:
            arguments["container"] = query["container"]
        if query.get("previous") == "true":
            arguments["previous"] = True
        if "tailLines" in query:
            arguments["tail_lines"] = int(query["tailLines"])
        try:
            answer = self._answer("kubernetes.pod_logs", arguments)
        except ToolError as exc:
            return _status(400 if "BadRequest" in str(exc) else 404, str(exc).split(": ", 1)[-1])
        lines = answer["lines"] if isinstance(answer, dict) else []
        return text_response(200, "".join(f"{line}\n" for line in lines))

    def loki(self, request: Request) -> Response:
        if "loki.query_range" not in self._tools:
            return json_response(200, {"status": "success", "data": {"resultType": "streams", "result": []}})
        try:
            return super().loki(request)
        except ToolError as exc:
            return text_response(400, f"parse error : {exc}")


def as_loki_streams(scenario: Scenario) -> Scenario:
    """The scenario with its ``logs`` as Loki streams, one per (service, level), labelled ``namespace`` (the
    topology's, when it names one), ``app`` and ``service`` (the service) and ``level``."""
    if not scenario.logs:
        return scenario
    where = {s.name: s.labels["namespace"] for s in scenario.topology.services if "namespace" in s.labels}
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for line in scenario.logs:
        stamp = str(int(line.ts.timestamp() * 1e9))
        grouped.setdefault((line.service, str(line.level).lower()), []).append((stamp, line.message))
    streams = list(scenario.loki.streams)
    for (service, level), values in grouped.items():
        labels = {"app": service, "service": service, "level": level}
        if service in where:
            labels["namespace"] = where[service]
        streams.append(LokiStream(stream=labels, values=tuple(values)))
    loki = scenario.loki.model_copy(update={"streams": tuple(streams)})
    return scenario.model_copy(update={"loki": loki, "logs": ()})


def _status(code: int, message: str) -> Response:
    reason = "BadRequest" if code == 400 else "NotFound"
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}  # fmt: skip
    return json_response(code, body)


def _namespaces(scenario: Scenario) -> list[str]:
    """The pack's namespaces, kube-system last or not at all (the environment's namespaces)."""
    return [n for n in pack_namespaces(scenario) if n != "kube-system"] or list(pack_namespaces(scenario))


def openmetrics(scenario: Scenario) -> str:
    """The pack's series (its ``prometheus`` section and its ``metrics`` as series) as OpenMetrics for promtool."""
    lines: list[str] = []
    by_name: dict[str, list[tuple[dict[str, str], list[tuple[float, str]]]]] = {}
    for labels, values in pack_series(scenario):
        by_name.setdefault(labels.get("__name__", ""), []).append((labels, values))
    for name, series in sorted(by_name.items()):
        if not name:
            continue
        lines.append(f"# TYPE {name} gauge")
        for labels, values in series:
            text = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()) if k != "__name__")
            for ts, value in values:
                number = float(value)
                if math.isfinite(number):
                    lines.append(f"{name}{{{text}}} {value} {ts:.3f}")
    return "\n".join([*lines, "# EOF"]) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def has_prometheus() -> bool:
    return shutil.which("prometheus") is not None and shutil.which("promtool") is not None


@contextmanager
def real_prometheus(scenario: Scenario, root: Path) -> Iterator[str]:
    """A Prometheus over the pack's series (backfilled with promtool), listening on loopback; its URL."""
    binary, promtool = shutil.which("prometheus"), shutil.which("promtool")
    assert binary is not None and promtool is not None
    (root / "series.om").write_text(openmetrics(scenario))
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(root / "series.om"), str(root / "data")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (root / "prometheus.yml").write_text("global:\n  scrape_interval: 1m\n")
    port = free_port()
    process = subprocess.Popen(
        [binary, f"--config.file={root / 'prometheus.yml'}", f"--storage.tsdb.path={root / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=100y"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_http(f"http://127.0.0.1:{port}/-/ready", process, "prometheus")
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)


@dataclass(frozen=True)
class Served:
    """Which of the pack's sources were served live."""

    kubernetes: bool
    loki: bool
    prometheus: bool


def run_live(scenario: Scenario, *, prometheus: bool) -> tuple[Run, Served]:
    """The pack's question asked of a live environment serving the pack's data, over the pack's window."""
    upstreams = PackUpstreams(scenario)
    tools = upstreams._tools
    served = Served(
        kubernetes=bool(upstreams.namespaces) and any(name.startswith("kubernetes.") for name in tools),
        loki="loki.query_range" in tools,
        prometheus=prometheus and bool(pack_series(scenario)),
    )
    window = Window(scenario.time_window.start.timestamp(), scenario.time_window.end.timestamp(), origin="request")

    with ExitStack() as stack, tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        sections: list[str] = []
        if served.kubernetes:
            cluster = FakeUpstream(upstreams.kubernetes)
            stack.callback(cluster.close)
            kubeconfig = write_kubeconfig(root / "kubeconfig", cluster.url, namespace=upstreams.namespaces[0])
            listed = ", ".join(f'"{n}"' for n in upstreams.namespaces)
            sections.append(
                f'kubernetes = {{ kubeconfig = "{kubeconfig}", context = "test", namespaces = [{listed}] }}'
            )
        if served.loki:
            loki = FakeUpstream(upstreams.loki)
            stack.callback(loki.close)
            sections.append(f'loki = {{ url = "{loki.url}" }}')
        if served.prometheus:
            (root / "prometheus").mkdir()
            url = stack.enter_context(real_prometheus(scenario, root / "prometheus"))
            sections.append(f'prometheus = {{ url = "{url}" }}')
        config = root / "environments.toml"
        config.write_text("[environments.live]\ndefault = true\n" + "\n".join(sections) + "\n")

        async def go() -> Run:
            registry = await EnvironmentRegistry.open(load_environments(config))
            try:
                store = MemoryStore(owner="test")
                runner = Orchestrator(
                    store=store,
                    provider=HeuristicProvider(),
                    tools_for=registry.tools_for,
                    environment_tools=registry.tools_for,
                )
                run = await runner.run(question=scenario.question, scenario="", environment="live", time_window=window)
                return run, list(await store.list_tool_invocations(run.run_id))
            finally:
                await registry.aclose()

        return asyncio.run(go()), served
