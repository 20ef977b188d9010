"""End to end, nothing typed: a real Prometheus fires a rule, a real Alertmanager routes it to the service's
webhook (with a bearer token from a file), the run is diagnosed and its answer posted in both formats; the
repeats across Alertmanager's repeat interval start no second run; the resolved notification starts nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from tests.support.api import ApiFactory

from .conftest import Receiver
from .stack import start_stack

TOKEN = "am-0f3c9e1d7b"


async def test_a_fired_alert_is_diagnosed_and_posted_once_and_its_resolution_starts_nothing(
    api_factory: ApiFactory, receiver: Receiver, tmp_path: Path
) -> None:
    api = await api_factory(
        http_address="127.0.0.1:0",
        auth_tokens=f"ops:{TOKEN}",
        notify_webhook_url=f"{receiver.url}/hook",
        notify_slack_webhook_url=f"{receiver.url}/slack",
    )
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    metadata = (("authorization", f"Bearer {TOKEN}"),)
    stack = await asyncio.to_thread(
        start_stack,
        tmp_path,
        webhook_url=f"{api.running.http_url}/v1/alertmanager",
        copy_url=f"{receiver.url}/am",
        token_file=token_file,
    )
    try:
        (hook,) = await receiver.wait_for("/hook", within_s=90)
        (slack,) = await receiver.wait_for("/slack", within_s=30)
        listed = await api.diagnosis.ListRuns(pb.ListRunsRequest(trigger=run_pb2.TRIGGER_KIND_ALERT), metadata=metadata)
        (run,) = listed.runs
        assert run.tenant == "ops" and run.status == run_pb2.RUN_STATUS_SUCCESS
        assert hook["run_id"] == run.run_id and hook["answer_text"] == run.answer_text
        assert hook["alert"]["labels"]["alertname"] == "CheckoutPodCrashLooping"
        assert hook["alert"]["group_key"] == '{}/{}:{alertname="CheckoutPodCrashLooping"}'
        assert "CheckoutPodCrashLooping" in slack["text"]
        assert run.trigger.alert.labels["pod"] == "checkout-api-7f9c6d8b5-tr6zn"
        assert "namespace shop, pod checkout-api-7f9c6d8b5-tr6zn" in run.question
        assert "is crash looping" in run.question

        # Alertmanager repeats the group every 2 s: each repeat is the same notification, deduplicated.
        copies = await receiver.wait_for("/am", count=4, within_s=60)
        assert {c["status"] for c in copies} == {"firing"}
        assert len({c["alerts"][0]["startsAt"] for c in copies}) == 1
        listed = await api.diagnosis.ListRuns(pb.ListRunsRequest(), metadata=metadata)
        assert [r.run_id for r in listed.runs] == [run.run_id]

        # The rule goes: the alert resolves, Alertmanager says so, and nothing starts.
        await asyncio.to_thread(stack.resolve)
        async with asyncio.timeout(60):
            while not any(c["status"] == "resolved" for c in receiver.received["/am"]):
                receiver.arrived.clear()
                await receiver.arrived.wait()
        await asyncio.sleep(1.0)  # the service got the same resolved notification (routes in parallel)
        listed = await api.diagnosis.ListRuns(pb.ListRunsRequest(), metadata=metadata)
        assert [r.run_id for r in listed.runs] == [run.run_id]
        assert len(receiver.received["/hook"]) == 1 and len(receiver.received["/slack"]) == 1
    finally:
        await asyncio.to_thread(stack.close)
