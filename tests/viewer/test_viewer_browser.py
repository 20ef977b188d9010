"""The run viewer in headless Chromium: a real run's page holds each claim and one <mark> per bound value at its
pointer; recorded markup is shown as text and runs nothing; a live run's page gains its events as they happen.
A screenshot of a run page is kept in the test output (``var/test-output/run-page.png``) for review."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.graph.orchestrator import new_run_id
from tests.support.api import ApiFactory
from tests.support.pointers import pointed

from .chromium import chromium

SCREENSHOT = Path(__file__).resolve().parents[2] / "var" / "test-output" / "run-page.png"


async def test_a_run_page_holds_each_claim_and_one_mark_per_bound_value(
    api_factory: ApiFactory, tmp_path: Path
) -> None:
    api = await api_factory(provider="heuristic", http_address="127.0.0.1:0")
    run = (await api.diagnose())[-1].run
    invocations = {i.invocation_id: i for i in await api.running.repository.list_tool_invocations(run.run_id)}
    expected: set[tuple[str, str, str]] = set()
    for binding in run.self_evaluation.verifier_evaluation.gatekeeper_result.checked_bindings:
        output = json_format.MessageToDict(invocations[binding.source_invocation_id].output)
        if binding.raw_path in dict(pointed(output)):
            expected.add((binding.source_invocation_id, binding.raw_path, binding.claim_id))
    assert len(expected) > 10
    claims = {c.claim_id for c in run.self_evaluation.verifier_evaluation.verified_executor_output.claims}
    async with chromium(tmp_path / "profile") as page:
        await page.goto(f"{api.running.http_url}/runs/{run.run_id}")
        marks = await page.evaluate(
            "Array.from(document.querySelectorAll('mark')).map(m => [m.closest('section').dataset.invocationId,"
            " m.dataset.pointer, m.dataset.claim, m.nextElementSibling.querySelector('a').getAttribute('href')])"
        )
        shown = await page.evaluate("Array.from(document.querySelectorAll('.claim')).map(c => c.dataset.claimId)")
        links_resolve = await page.evaluate(
            "Array.from(document.querySelectorAll('.claim a[href^=\"#m-\"]'))"
            ".every(a => document.getElementById(a.getAttribute('href').slice(1)) !== null)"
        )
        charts = await page.evaluate("document.querySelectorAll('svg.chart circle.bound').length")
        scripts = await page.evaluate("Array.from(document.scripts).map(s => s.src)")
        await page.screenshot(SCREENSHOT)
    assert sorted((inv, pointer, claim) for inv, pointer, claim, _ in marks) == sorted(expected)
    assert all(href == f"#claim-{claim}" for _, _, claim, href in marks)
    assert claims <= set(shown)
    assert links_resolve
    assert charts >= 1
    assert scripts == []  # a finished run's page runs no script
    assert SCREENSHOT.stat().st_size > 10_000


HOSTILE = '<script>window.__ran = 1</script><img src="x" onerror="window.__ran = 2">"quoted" & </pre>'


async def test_recorded_markup_is_shown_as_text_and_runs_nothing(api_factory: ApiFactory, tmp_path: Path) -> None:
    """A tool output and a question holding markup: the page shows the characters and executes nothing."""
    api = await api_factory(http_address="127.0.0.1:0")
    repository = api.running.repository
    run = api.running.orchestrator.new_run(question=f"why {HOSTILE}?", scenario="checkout-latency", tenant="default")
    run.run_id = new_run_id()
    await repository.create_run(run)
    invocation = contracts_pb2.ToolInvocation(
        invocation_id=f"{run.run_id}-inv-1",
        run_id=run.run_id,
        tool_name="logs.search",
        status=contracts_pb2.TOOL_INVOCATION_STATUS_OK,
    )
    json_format.ParseDict({"lines": [HOSTILE, {"</script>": "<b>bold</b>"}]}, invocation.output)
    await repository.add_tool_invocation(invocation)
    done = run_pb2.DiagnosisRun()
    done.CopyFrom(run)
    done.status = run_pb2.RUN_STATUS_SUCCESS
    done.answer_text = HOSTILE
    evaluation = done.self_evaluation.verifier_evaluation
    evaluation.verified_executor_output.claims.add(claim_id="c1", statement=HOSTILE)
    evaluation.gatekeeper_result.checked_bindings.add(
        claim_id="c1",
        source_invocation_id=invocation.invocation_id,
        tool_name="logs.search",
        raw_path="/lines/0",
        matched_text=HOSTILE,
        passed=True,
    )
    await repository.finish_run(done)
    async with chromium(tmp_path / "profile") as page:
        await page.goto(f"{api.running.http_url}/runs/{run.run_id}")
        ran = await page.evaluate("window.__ran === undefined")
        images = await page.evaluate("document.images.length")
        bold = await page.evaluate("document.querySelectorAll('main b').length")
        text = await page.evaluate("document.querySelector('mark').textContent")
        title = await page.evaluate("document.querySelector('h1').textContent")
    assert ran and images == 0 and bold == 0
    assert text == json.dumps(HOSTILE)
    assert HOSTILE in title


async def test_a_live_run_page_gains_its_events_as_they_happen(api_factory: ApiFactory, tmp_path: Path) -> None:
    api = await api_factory(http_address="127.0.0.1:0")
    assert api.provider is not None
    api.provider.gate = asyncio.Event()
    call = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    first = await call.read()
    assert isinstance(first, pb.DiagnoseResponse)
    started = first.started
    await asyncio.wait_for(api.provider.entered.acquire(), 10)
    async with chromium(tmp_path / "profile") as page:
        await page.goto(f"{api.running.http_url}/runs/{started.run_id}")
        assert await page.evaluate("document.getElementById('run').dataset.live") == "true"
        before = await page.evaluate("document.querySelectorAll('#path-rows tr').length")
        await asyncio.sleep(0.5)
        assert await page.evaluate("document.querySelectorAll('#path-rows tr.live-event').length") == 0
        api.provider.gate.set()
        await page.wait_for("document.getElementById('live-state').dataset.ended === 'true'")
        after = await page.evaluate("document.querySelectorAll('#path-rows tr').length")
        state = await page.evaluate("document.getElementById('live-state').textContent")
    while await call.read() is not grpc.aio.EOF:
        pass
    stored = await api.running.repository.list_events(started.run_id)
    assert after == len(stored) > before
    assert state.startswith("ended: success")


@pytest.mark.parametrize("path", ["/", "/runs/run-0"])
async def test_every_page_forbids_inline_and_foreign_script(api_factory: ApiFactory, path: str) -> None:
    import httpx2

    api = await api_factory(http_address="127.0.0.1:0")
    async with httpx2.AsyncClient() as client:
        response = await client.get(f"{api.running.http_url}{path}")
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
