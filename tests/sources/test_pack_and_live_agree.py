"""One incident, two paths: recorded as a pack, and served live (a Kubernetes API server and Loki on loopback,
read by the official Kubernetes client and the Loki source over HTTP). The embedded default gives the same
answer on both: the same likely cause and the same confirmed facts."""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc.aio
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api import start_server
from diagnosis_server.api.components import load_provider
from diagnosis_server.settings import load_settings
from diagnosis_server.tools.scenario import Scenario

from .conftest import write_kubeconfig
from .fake_http import FakeUpstream
from .live_incident import QUESTION, LiveUpstreams, incident, now_utc

if TYPE_CHECKING:
    Stub = diagnosis_service_pb2_grpc.DiagnosisServiceAsyncStub


@pytest.fixture
async def stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Stub]:
    for name in list(os.environ):
        if name.startswith("DIAGNOSIS_"):
            monkeypatch.delenv(name)
    pack = incident(now_utc())
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "cart-api-oom.json").write_text(json.dumps(pack))
    upstreams = LiveUpstreams(Scenario.model_validate(pack))
    cluster, loki = FakeUpstream(upstreams.kubernetes), FakeUpstream(upstreams.loki)
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", cluster.url)
    (tmp_path / "environments.toml").write_text(
        f"""
[environments.live]
loki = {{ url = "{loki.url}" }}
kubernetes = {{ kubeconfig = "{kubeconfig}", context = "test", namespaces = ["shop"] }}
"""
    )
    settings = load_settings(
        address="127.0.0.1:0",
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'agree.db'}",
        metrics_address="",
        http_address="",
        environments_file=str(tmp_path / "environments.toml"),
        scenarios_dir=str(scenarios),
    )
    running = await start_server(settings, provider=load_provider("heuristic"))
    channel = grpc.aio.insecure_channel(running.target)
    try:
        yield diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
    finally:
        await channel.close()
        await running.stop(grace=2.0)
        cluster.close()
        loki.close()


async def _ask(stub: Stub, **context: str) -> run_pb2.DiagnosisRun:
    request = pb.DiagnoseRequest(
        question=QUESTION,
        context=pb.RequestContext(scenario=context.get("scenario", ""), environment=context.get("environment", "")),
    )
    return [m async for m in stub.Diagnose(request)][-1].run


def _said(run: run_pb2.DiagnosisRun) -> tuple[str, list[str]]:
    """The likely cause and the confirmed facts, without their claim ids."""
    strip = re.compile(r"\s*\[c\d+\]")
    cause = strip.sub("", run.answer.likely_cause.text)
    return cause, sorted(strip.sub("", f.text) for f in run.answer.confirmed_facts)


async def test_the_pack_and_the_live_sources_give_the_same_answer(stub: Stub) -> None:
    recorded = await _ask(stub, scenario="cart-api-oom")
    live = await _ask(stub, environment="live")
    for run in (recorded, live):
        assert run.status == run_pb2.RUN_STATUS_SUCCESS and not run.blind, run.answer_text
    cause, facts = _said(live)
    assert "OOMKilled" in cause, live.answer_text
    assert _said(recorded) == (cause, facts), (recorded.answer_text, live.answer_text)
    assert not live.source_failures
    # The live calls were made over the run's window: no next step asks for one of them again.
    assert "Not yet looked at" not in live.answer_text, live.answer_text
