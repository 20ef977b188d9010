"""An incident run through the whole graph two ways: as a recorded pack, and live, its Kubernetes objects served by
a loopback API server (``tests.sources.k8s_store``) read with the official client, its series by a real Prometheus
backfilled with promtool."""

from __future__ import annotations

import asyncio
import os
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.heuristic import HeuristicProvider
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.sources.config import load_environments
from diagnosis_server.sources.packs import pack_series
from diagnosis_server.sources.registry import EnvironmentRegistry
from diagnosis_server.store import MemoryStore
from diagnosis_server.time_window import Window
from diagnosis_server.tools.scenario import Scenario
from tests.agents.heuristic._graph_runs import run_pack
from tests.incidents.corpus.kit import Pack
from tests.incidents.live import has_prometheus, real_prometheus
from tests.sources.conftest import REQUIRE_PROMETHEUS_ENV, write_kubeconfig
from tests.sources.fake_http import FakeUpstream
from tests.sources.k8s_store import Store

Run = tuple[run_pb2.DiagnosisRun, list[contracts_pb2.ToolInvocation]]


def run_live(pack: Pack) -> Run:
    """The pack's question asked of a live environment whose API server holds the pack's Kubernetes objects."""
    doc = pack.build()
    objects: dict[str, list[dict[str, Any]]] = {
        plural: list(items) for plural, items in doc.get("kubernetes", {}).items() if plural != "pod_logs"
    }
    namespaces = sorted(
        {
            s["labels"]["namespace"]
            for s in doc["topology"]["services"]
            if "namespace" in s.get("labels", {}) and s["labels"]["namespace"] != "kube-system"
        }
    )
    upstream = FakeUpstream(Store(objects, list(doc.get("kubernetes", {}).get("pod_logs", []))))
    doc.pop("truth", None)
    scenario = Scenario.model_validate(doc)
    if pack_series(scenario) and not has_prometheus():
        # (its series are half its evidence: without a real Prometheus the live run would answer another case)
        reason = "the pack's series need prometheus and promtool (Debian package prometheus)"
        if os.environ.get(REQUIRE_PROMETHEUS_ENV) == "1":
            pytest.fail(f"{reason}; {REQUIRE_PROMETHEUS_ENV}=1 requires them")
        pytest.skip(reason)
    window = Window(scenario.time_window.start.timestamp(), scenario.time_window.end.timestamp(), origin="request")

    async def go(directory: Path, prometheus: str) -> Run:
        kubeconfig = write_kubeconfig(directory / "kubeconfig", upstream.url, namespace=namespaces[0])
        listed = ", ".join(f'"{n}"' for n in namespaces)
        config = directory / "environments.toml"
        config.write_text(
            "[environments.prod]\n"
            f'kubernetes = {{ kubeconfig = "{kubeconfig}", context = "test", namespaces = [{listed}] }}\n'
            + (f'prometheus = {{ url = "{prometheus}" }}\n' if prometheus else "")
        )
        registry = await EnvironmentRegistry.open(load_environments(config))
        try:
            store = MemoryStore(owner="test")
            runner = Orchestrator(
                store=store,
                provider=HeuristicProvider(),
                tools_for=registry.tools_for,
                environment_tools=registry.tools_for,
            )
            run = await runner.run(question=str(doc["question"]), scenario="", environment="prod", time_window=window)
            return run, list(await store.list_tool_invocations(run.run_id))
        finally:
            await registry.aclose()

    try:
        with tempfile.TemporaryDirectory() as directory, ExitStack() as stack:
            prometheus = ""
            if pack_series(scenario) and has_prometheus():
                (Path(directory) / "prometheus").mkdir()
                prometheus = stack.enter_context(real_prometheus(scenario, Path(directory) / "prometheus"))
            return asyncio.run(go(Path(directory), prometheus))
    finally:
        upstream.close()


def run_both(pack: Pack) -> dict[str, Run]:
    return {"pack": run_pack(pack), "live": run_live(pack)}
