"""Who sees what in the viewer: with tokens a page needs a bearer token or the sign-in cookie (HttpOnly,
SameSite=Strict), each tenant sees only its runs (a foreign run is 404), and the listing filters and pages."""

from __future__ import annotations

import httpx2

from diagnosis.v1 import diagnosis_service_pb2 as pb
from tests.support.api import Api, ApiFactory

TOKENS = "team-a:tok-a-5f1c,team-b:tok-b-93e2"


async def diagnose_as(api: Api, token: str) -> str:
    request = pb.DiagnoseRequest(question="Why is checkout-api failing?")
    messages = [m async for m in api.diagnosis.Diagnose(request, metadata=(("authorization", f"Bearer {token}"),))]
    return messages[-1].run.run_id


async def test_a_foreign_run_is_404_and_an_own_run_is_shown(api_factory: ApiFactory) -> None:
    api = await api_factory(http_address="127.0.0.1:0", auth_tokens=TOKENS)
    run_id = await diagnose_as(api, "tok-a-5f1c")
    base = api.running.http_url
    async with httpx2.AsyncClient() as client:
        own = await client.get(f"{base}/runs/{run_id}", headers={"Authorization": "Bearer tok-a-5f1c"})
        foreign = await client.get(f"{base}/runs/{run_id}", headers={"Authorization": "Bearer tok-b-93e2"})
        foreign_json = await client.get(f"{base}/runs/{run_id}.json", headers={"Authorization": "Bearer tok-b-93e2"})
        listing_b = await client.get(f"{base}/", headers={"Authorization": "Bearer tok-b-93e2"})
        record = await client.get(f"{base}/runs/{run_id}.json", headers={"Authorization": "Bearer tok-a-5f1c"})
    assert own.status_code == 200 and run_id in own.text
    assert foreign.status_code == 404 and foreign_json.status_code == 404
    assert listing_b.status_code == 200 and run_id not in listing_b.text
    assert record.status_code == 200 and record.json()["run_id"] == run_id and record.json()["tenant"] == "team-a"


async def test_sign_in_turns_a_token_into_an_http_only_strict_cookie(api_factory: ApiFactory) -> None:
    api = await api_factory(http_address="127.0.0.1:0", auth_tokens=TOKENS)
    run_id = await diagnose_as(api, "tok-a-5f1c")
    base = api.running.http_url
    async with httpx2.AsyncClient() as client:
        anonymous = await client.get(f"{base}/")
        assert anonymous.status_code == 303 and anonymous.headers["location"] == "/sign-in"
        assert (await client.get(f"{base}/runs/{run_id}.json")).status_code == 401
        refused = await client.post(f"{base}/sign-in", data={"token": "tok-wrong"})
        assert refused.status_code == 401 and "set-cookie" not in refused.headers
        signed = await client.post(f"{base}/sign-in", data={"token": "tok-a-5f1c"})
        assert signed.status_code == 303
        cookie = signed.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        listing = await client.get(f"{base}/")  # the client keeps the cookie
    assert listing.status_code == 200 and f"/runs/{run_id}" in listing.text


async def test_the_listing_filters_by_trigger_and_refuses_an_unknown_filter(api_factory: ApiFactory) -> None:
    api = await api_factory(http_address="127.0.0.1:0")
    run_id = (await api.diagnose())[-1].run.run_id
    base = api.running.http_url
    async with httpx2.AsyncClient() as client:
        questions = await client.get(f"{base}/", params={"trigger": "question", "status": "success"})
        alerts = await client.get(f"{base}/", params={"trigger": "alert"})
        unknown = await client.get(f"{base}/", params={"verdict": "maybe"})
    assert run_id in questions.text and run_id not in alerts.text
    assert unknown.status_code == 400 and "verdict" in unknown.text


async def test_an_alert_runs_page_shows_its_group_labels_and_window(api_factory: ApiFactory) -> None:
    from tests.alerts.payloads import notification

    api = await api_factory(http_address="127.0.0.1:0")
    base = api.running.http_url
    async with httpx2.AsyncClient() as client:
        run_id = (await client.post(f"{base}/v1/alertmanager", json=notification())).json()["runs"][0]["run_id"]
        await api.running.runs.wait(run_id)
        page = await client.get(f"{base}/runs/{run_id}")
        listing = await client.get(f"{base}/", params={"trigger": "alert"})
    assert "{}:{alertname=&quot;KubePodCrashLooping&quot;}" in page.text
    assert "namespace=shop" in page.text
    assert "2026-12-02 11:28:30 UTC to " in page.text  # the earliest startsAt minus 30 minutes, to now
    assert "alert KubePodCrashLooping" in listing.text and f"/runs/{run_id}" in listing.text
