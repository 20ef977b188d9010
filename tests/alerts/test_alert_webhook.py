"""POST /v1/alertmanager on the real server: one run per firing group, deduplicated, scoped by the alerts; a
resolved group starts nothing; a bad payload is 400 naming the field; the end of the run is posted (both formats)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
import httpx2
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from tests.support.api import Api, ApiFactory

from .conftest import Receiver
from .payloads import alert, notification


async def post(api: Api, body: Any, *, headers: dict[str, str] | None = None) -> httpx2.Response:
    async with httpx2.AsyncClient() as client:
        url = f"{api.running.http_url}/v1/alertmanager"
        if isinstance(body, (bytes, str)):
            return await client.post(url, content=body, headers={"Content-Type": "application/json", **(headers or {})})
        return await client.post(url, json=body, headers=headers or {})


async def alert_api(api_factory: ApiFactory, **settings: Any) -> Api:
    return await api_factory(http_address="127.0.0.1:0", **settings)


async def finished(api: Api, run_id: str) -> run_pb2.DiagnosisRun:
    await api.running.runs.wait(run_id)
    run = await api.running.repository.get_run(run_id)
    assert run is not None
    return run


async def with_notifications(api: Api, run_id: str, count: int) -> run_pb2.DiagnosisRun:
    """The stored run once ``count`` notification outcomes are recorded on it (within 15 s)."""
    async with asyncio.timeout(15):
        while True:
            stored = await api.running.repository.get_run(run_id)
            assert stored is not None
            if len(stored.notifications) >= count:
                return stored
            await asyncio.sleep(0.05)


async def test_a_firing_group_starts_one_run_scoped_by_its_alerts(api_factory: ApiFactory) -> None:
    api = await alert_api(api_factory)
    response = await post(api, notification())
    assert response.status_code == 202
    runs = response.json()["runs"]
    assert len(runs) == 1 and runs[0]["deduplicated"] is False
    assert runs[0]["group_key"] == '{}:{alertname="KubePodCrashLooping"}'
    run = await finished(api, runs[0]["run_id"])
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert run.trigger.kind == run_pb2.TRIGGER_KIND_ALERT
    assert run.trigger.alert.fingerprints == ["5a1f0c2e9b7d4e31"]
    assert run.trigger.alert.labels["namespace"] == "shop"
    assert run.trigger.alert.starts_at.ToJsonString() == "2026-12-02T11:58:30.123456789Z"
    assert "KubePodCrashLooping" in run.question
    assert "namespace shop, pod checkout-api-7f9c6d8b5-tr6zn, container checkout-api" in run.question
    assert "is crash looping" in run.question and "CrashLoopBackOff" in run.question
    # The window: the earliest startsAt minus the default lookback (1800 s) to now.
    assert run.trigger.window_start.ToJsonString() == "2026-12-02T11:28:30.123456789Z"
    assert run.trigger.window_end.ToSeconds() >= run.created_at.ToSeconds() - 1


async def test_a_repeat_is_deduplicated_and_a_new_start_is_not(api_factory: ApiFactory) -> None:
    api = await alert_api(api_factory)
    first = (await post(api, notification())).json()["runs"][0]
    again = (await post(api, notification())).json()["runs"][0]
    assert again == {**first, "deduplicated": True}
    refired = (await post(api, notification(alert(starts_at="2026-12-02T12:30:00Z")))).json()["runs"][0]
    assert refired["deduplicated"] is False and refired["run_id"] != first["run_id"]
    page = await api.diagnosis.ListRuns(pb.ListRunsRequest(trigger=run_pb2.TRIGGER_KIND_ALERT))
    assert sorted(run.run_id for run in page.runs) == sorted([first["run_id"], refired["run_id"]])
    counted = api.running.metrics.registry.get_sample_value
    assert counted("diagnosis_alert_groups_total", {"outcome": "started"}) == 2
    assert counted("diagnosis_alert_groups_total", {"outcome": "deduplicated"}) == 1


async def test_dedupe_period_zero_starts_a_run_for_every_notification(api_factory: ApiFactory) -> None:
    api = await alert_api(api_factory, alert_dedupe_s=0)
    ids = {(await post(api, notification())).json()["runs"][0]["run_id"] for _ in range(2)}
    assert len(ids) == 2


async def test_a_resolved_notification_starts_nothing(api_factory: ApiFactory) -> None:
    api = await alert_api(api_factory)
    response = await post(api, notification(alert(status="resolved")))
    assert response.status_code == 202 and response.json() == {"runs": []}
    assert (await api.diagnosis.ListRuns(pb.ListRunsRequest())).runs == []


BAD = [
    ({**notification(), "version": "3"}, "version"),
    ({k: v for k, v in notification().items() if k != "groupKey"}, "groupKey"),
    ({**notification(), "alerts": []}, "alerts"),
    ({**notification(), "status": "pending"}, "status"),
    (notification({**alert(), "startsAt": "yesterday"}), "alerts[0].startsAt"),
    (notification(alert(), {**alert(fingerprint="b"), "status": "active"}), "alerts[1].status"),
    (notification(alert(labels={"namespace": "shop"})), "alerts[0].labels.alertname"),
    (notification({**alert(), "fingerprint": 7}), "alerts[0].fingerprint"),
    (notification({**alert(), "labels": ["alertname"]}), "alerts[0].labels"),
    ([notification()], "(body)"),
    (b'{"version": "4", ', "(body)"),
]


@pytest.mark.parametrize(("body", "field"), BAD, ids=[field for _, field in BAD])
async def test_a_bad_payload_is_400_naming_the_field_and_starts_no_run(
    api_factory: ApiFactory, body: Any, field: str
) -> None:
    api = await alert_api(api_factory)
    response = await post(api, body)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert response.json()["error"].startswith(field) or field == "(body)"
    assert (await api.diagnosis.ListRuns(pb.ListRunsRequest())).runs == []


async def test_with_tokens_the_webhook_needs_a_bearer_token_and_runs_are_its_tenants(api_factory: ApiFactory) -> None:
    api = await alert_api(api_factory, auth_tokens="team-a:s3cret-a")
    assert (await post(api, notification())).status_code == 401
    response = await post(api, notification(), headers={"Authorization": "Bearer s3cret-a"})
    assert response.status_code == 202
    run = await finished(api, response.json()["runs"][0]["run_id"])
    assert run.tenant == "team-a"


async def test_the_end_of_an_alert_run_is_posted_in_both_formats(api_factory: ApiFactory, receiver: Receiver) -> None:
    api = await alert_api(
        api_factory, notify_webhook_url=f"{receiver.url}/hook", notify_slack_webhook_url=f"{receiver.url}/slack"
    )
    run_id = (await post(api, notification())).json()["runs"][0]["run_id"]
    (hook,) = await receiver.wait_for("/hook")
    (slack,) = await receiver.wait_for("/slack")
    run = await finished(api, run_id)
    assert set(hook) == {"run_id", "status", "verdict", "answer_text", "alert", "links"}
    assert hook["run_id"] == run_id and hook["status"] == "SUCCESS"
    assert hook["answer_text"] == run.answer_text and hook["answer_text"]
    assert hook["alert"]["group_key"] == '{}:{alertname="KubePodCrashLooping"}'
    assert hook["alert"]["labels"]["pod"] == "checkout-api-7f9c6d8b5-tr6zn"
    assert hook["alert"]["annotations"]["summary"].endswith("is crash looping.")
    assert hook["links"]["run"] == f"{api.running.http_url}/runs/{run_id}"
    assert slack["text"].startswith("KubePodCrashLooping: ")
    assert slack["blocks"][0]["type"] == "section"
    assert f"/runs/{run_id}|{run_id}>" in slack["blocks"][-1]["elements"][0]["text"]
    stored = await with_notifications(api, run_id, 2)
    assert sorted((n.channel, n.delivered, n.attempts) for n in stored.notifications) == [
        ("slack", True, 1),
        ("webhook", True, 1),
    ]
    counted = api.running.metrics.registry.get_sample_value
    assert [
        counted("diagnosis_notifications_total", {"channel": c, "outcome": "delivered"}) for c in ("webhook", "slack")
    ] == [1, 1]


async def test_a_notification_that_keeps_failing_is_recorded_and_the_run_stands(
    api_factory: ApiFactory, receiver: Receiver, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    """Four attempts, recorded on the run; neither the log nor httpx2's own request log names the URL."""
    caplog.set_level(logging.INFO, logger="httpx2")
    receiver.fail = True
    api = await alert_api(api_factory, notify_webhook_url=f"{receiver.url}/hook?token=s3cret")
    run_id = (await post(api, notification())).json()["runs"][0]["run_id"]
    stored = await with_notifications(api, run_id, 1)
    (outcome,) = stored.notifications
    assert (outcome.channel, outcome.delivered, outcome.attempts, outcome.error) == ("webhook", False, 4, "HTTP 500")
    assert receiver.hits["/hook"] == 4
    failed = {"channel": "webhook", "outcome": "failed"}
    assert api.running.metrics.registry.get_sample_value("diagnosis_notifications_total", failed) == 1
    assert stored.status == run_pb2.RUN_STATUS_SUCCESS and stored.answer_text
    assert "s3cret" not in str(stored)
    assert "s3cret" not in caplog.text and "s3cret" not in capfd.readouterr().err


async def test_investigate_alert_streams_a_run_and_deduplicates_a_repeat(api_factory: ApiFactory) -> None:
    api = await api_factory()
    labels = {"alertname": "HighErrorRate", "service": "checkout-api"}
    firing = pb.Alert(labels=labels, fingerprint="f1", status="firing")
    firing.starts_at.FromJsonString("2026-12-02T12:00:00Z")
    request = pb.InvestigateAlertRequest(alerts=[firing])
    messages = [m async for m in api.diagnosis.InvestigateAlert(request)]
    assert messages[0].WhichOneof("kind") == "started" and messages[-1].WhichOneof("kind") == "run"
    assert any(m.WhichOneof("kind") == "event" for m in messages)
    run = messages[-1].run
    assert run.trigger.kind == run_pb2.TRIGGER_KIND_ALERT and "service checkout-api" in run.question
    repeat = [m async for m in api.diagnosis.InvestigateAlert(request)]
    assert len(repeat) == 1 and repeat[0].deduplicated and repeat[0].run.run_id == run.run_id
    questions = await api.diagnosis.ListRuns(pb.ListRunsRequest(trigger=run_pb2.TRIGGER_KIND_QUESTION))
    assert questions.runs == []


async def test_investigate_alert_refuses_a_group_with_nothing_firing(api_factory: ApiFactory) -> None:
    api = await api_factory()
    resolved = pb.Alert(labels={"alertname": "HighErrorRate"}, fingerprint="f1", status="resolved")
    resolved.starts_at.FromJsonString("2026-12-02T12:00:00Z")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        [m async for m in api.diagnosis.InvestigateAlert(pb.InvestigateAlertRequest(alerts=[resolved]))]
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no alert is firing" in (caught.value.details() or "")


def _window(window: run_pb2.TimeWindow, start: int, end: int) -> None:
    window.start.FromSeconds(start)
    window.end.FromSeconds(end)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r.ClearField("alerts"), "alerts"),
        (lambda r: r.alerts[0].labels.pop("alertname"), "alerts[0].labels.alertname"),
        (lambda r: setattr(r.alerts[0], "fingerprint", ""), "alerts[0].fingerprint"),
        (lambda r: r.alerts[0].ClearField("starts_at"), "alerts[0].starts_at"),
        (lambda r: setattr(r.alerts[0], "status", "pending"), "alerts[0].status"),
        (lambda r: setattr(r, "group_key", "g" * 20_000), "group_key"),
        # The window is checked as Diagnose checks it: a missing bound is named, an empty window is the window's.
        (lambda r: r.context.time_window.start.FromSeconds(10), "context.time_window.end"),
        (lambda r: r.context.time_window.end.FromSeconds(10), "context.time_window.start"),
        (lambda r: _window(r.context.time_window, 20, 10), "context.time_window"),
        (lambda r: _window(r.context.time_window, 10, 10), "context.time_window"),
    ],
)
async def test_investigate_alert_names_the_bad_field_and_starts_no_run(
    api_factory: ApiFactory, change: Any, field: str
) -> None:
    from google.rpc import error_details_pb2, status_pb2

    api = await api_factory()
    good = pb.Alert(labels={"alertname": "HighErrorRate"}, fingerprint="f1", status="firing")
    good.starts_at.FromJsonString("2026-12-02T12:00:00Z")
    request = pb.InvestigateAlertRequest(alerts=[good])
    change(request)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        [m async for m in api.diagnosis.InvestigateAlert(request)]
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = status_pb2.Status.FromString(dict(caught.value.trailing_metadata() or ())["grpc-status-details-bin"])
    bad = error_details_pb2.BadRequest()
    assert any(detail.Unpack(bad) for detail in status.details)
    assert bad.field_violations[0].field == field
    assert (await api.diagnosis.ListRuns(pb.ListRunsRequest())).runs == []
