"""`diagnosis investigate alertmanager` against a real Alertmanager (alerts posted to its API v2) and the real
server: each firing group is investigated and its answer printed; asked again, the groups are not run again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from diagnosis_server.cli import main
from tests.support.api import ApiFactory

from .stack import start_alertmanager, stop

# Alertmanager needs a receiver; this one sends nowhere.
CONFIG = """route:
  receiver: nowhere
  group_by: [alertname]
  group_wait: 1s
receivers:
  - name: nowhere
"""


def posted_alerts() -> list[dict[str, object]]:
    return [
        {
            "labels": {"alertname": "KubeDeploymentReplicasMismatch", "namespace": "shop", "deployment": "checkout"},
            "annotations": {"summary": "Deployment shop/checkout has not matched the expected number of replicas."},
            "startsAt": "2026-12-02T12:00:00Z",
        },
        {
            "labels": {"alertname": "NodeFilesystemAlmostOutOfSpace", "node": "worker-2", "instance": "10.0.3.7:9100"},
            "annotations": {"description": "Filesystem on /dev/sda1 at 10.0.3.7:9100 has only 3% available space."},
            "startsAt": "2026-12-02T12:01:00Z",
        },
    ]


async def test_investigate_alertmanager_runs_each_firing_group_once(
    api_factory: ApiFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DIAGNOSIS_TOKEN", raising=False)
    api = await api_factory()
    url, process = await asyncio.to_thread(start_alertmanager, tmp_path, CONFIG)
    try:
        async with httpx2.AsyncClient() as client:
            response = await client.post(f"{url}/api/v2/alerts", json=posted_alerts())
            assert response.status_code == 200
        argv = ["investigate", "alertmanager", "--alertmanager-url", url, "--target", api.running.target, "--json"]
        code = await asyncio.to_thread(main, argv)
        first = json.loads(capsys.readouterr().out)["investigations"]
        assert code == 0
        assert sorted(item["group_key"] for item in first) == [
            '{}:{alertname="KubeDeploymentReplicasMismatch"}',
            '{}:{alertname="NodeFilesystemAlmostOutOfSpace"}',
        ]
        assert {item["deduplicated"] for item in first} == {False}
        questions = sorted(item["run"]["question"] for item in first)
        assert "namespace shop, deployment checkout" in questions[0]
        assert "instance 10.0.3.7:9100, node worker-2" in questions[1]

        code = await asyncio.to_thread(main, [*argv[:-1], "--alertname", "NodeFilesystemAlmostOutOfSpace"])
        again = capsys.readouterr().out
        assert code == 0 and "(already investigated)" in again and "KubeDeploymentReplicasMismatch" not in again

        await asyncio.to_thread(main, ["runs", "list", "--trigger", "alert", "--target", api.running.target, "--json"])
        listed = json.loads(capsys.readouterr().out)
        assert len(listed["runs"]) == 2
        assert {run["trigger"]["kind"] for run in listed["runs"]} == {"TRIGGER_KIND_ALERT"}
        page = await api.diagnosis.ListRuns(pb.ListRunsRequest(trigger=run_pb2.TRIGGER_KIND_QUESTION))
        assert page.runs == []
    finally:
        await asyncio.to_thread(stop, process)


def test_an_unreachable_alertmanager_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.serve import free_port

    url = f"http://127.0.0.1:{free_port()}"
    code = main(["investigate", "alertmanager", "--alertmanager-url", url, "--target", "127.0.0.1:1"])
    assert code == 1
    assert "cannot reach Alertmanager" in capsys.readouterr().err
