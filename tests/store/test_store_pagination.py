"""Listing runs: newest first, keyset pages, filters, and page tokens bound to their tenant and filters."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store import (
    InvalidPageToken,
    PageToken,
    RunFilter,
    RunStore,
    decode_page_token,
    encode_page_token,
)

from .store_builders import make_run

BASE = datetime(2026, 1, 1, tzinfo=UTC)


async def _seed(repo: RunStore, count: int, *, tenant: str = "acme", prefix: str = "run") -> list[str]:
    """Runs created one second apart; returns their ids newest first."""
    for i in range(count):
        run = make_run(f"{prefix}-{i:03d}", tenant=tenant)
        run.created_at.FromDatetime(BASE + timedelta(seconds=i))
        await repo.create_run(run)
    return [f"{prefix}-{i:03d}" for i in reversed(range(count))]


async def _all_pages(repo: RunStore, *, page_size: int, **filters: object) -> tuple[list[str], int]:
    ids: list[str] = []
    token = ""
    pages = 0
    while True:
        page = await repo.list_runs(page_size=page_size, page_token=token, **filters)  # type: ignore[arg-type]
        pages += 1
        assert len(page.runs) <= page_size
        ids += [run.run_id for run in page.runs]
        token = page.next_page_token
        if not token:
            return ids, pages


@pytest.mark.parametrize("page_size", [1, 3, 7, 10, 11, 50])
async def test_pages_cover_every_run_once_newest_first(repo: RunStore, page_size: int) -> None:
    expected = await _seed(repo, 10)
    ids, pages = await _all_pages(repo, tenant="acme", page_size=page_size)
    assert ids == expected
    assert pages == max(1, -(-10 // page_size))


async def test_runs_created_at_the_same_instant_are_ordered_by_run_id(repo: RunStore) -> None:
    for run_id in ["b", "d", "a", "c", "e"]:
        run = make_run(run_id)
        run.created_at.FromDatetime(BASE)
        await repo.create_run(run)
    newer = make_run("0-newer")
    newer.created_at.FromDatetime(BASE + timedelta(microseconds=1))
    await repo.create_run(newer)
    ids, _ = await _all_pages(repo, tenant="acme", page_size=2)
    assert ids == ["0-newer", "e", "d", "c", "b", "a"]


async def test_empty_listing_has_no_next_token(repo: RunStore) -> None:
    page = await repo.list_runs(tenant="acme", page_size=5)
    assert page.runs == []
    assert page.next_page_token == ""
    runs, token = page
    assert (runs, token) == ([], "")


@pytest.mark.requirement("R-S-4")
async def test_listing_is_tenant_scoped(repo: RunStore) -> None:
    acme = await _seed(repo, 3, tenant="acme", prefix="acme")
    globex = await _seed(repo, 2, tenant="globex", prefix="globex")
    assert (await _all_pages(repo, tenant="acme", page_size=2))[0] == acme
    assert (await _all_pages(repo, tenant="globex", page_size=2))[0] == globex
    everyone, _ = await _all_pages(repo, tenant=None, page_size=2)
    assert sorted(everyone) == sorted(acme + globex)
    assert (await repo.list_runs(tenant="initech", page_size=5)).runs == []


async def test_filters_by_status_and_verdict(repo: RunStore) -> None:
    await _seed(repo, 6)
    for i, (status, verdict) in enumerate(
        [
            (run_pb2.RUN_STATUS_SUCCESS, contracts_pb2.VERDICT_PASS),
            (run_pb2.RUN_STATUS_SUCCESS, contracts_pb2.VERDICT_REJECT),
            (run_pb2.RUN_STATUS_FAILED, contracts_pb2.VERDICT_UNSPECIFIED),
            (run_pb2.RUN_STATUS_SUCCESS, contracts_pb2.VERDICT_PASS),
        ]
    ):
        run = await repo.get_run(f"run-{i:03d}")
        assert run is not None
        run.status = status
        run.verdict = verdict
        await repo.finish_run(run)

    async def ids(**filters: int) -> list[str]:
        return (await _all_pages(repo, tenant="acme", page_size=1, **filters))[0]

    assert await ids(status=run_pb2.RUN_STATUS_SUCCESS) == ["run-003", "run-001", "run-000"]
    assert await ids(status=run_pb2.RUN_STATUS_FAILED) == ["run-002"]
    assert await ids(status=run_pb2.RUN_STATUS_RUNNING) == ["run-005", "run-004"]
    assert await ids(verdict=contracts_pb2.VERDICT_PASS) == ["run-003", "run-000"]
    assert await ids(status=run_pb2.RUN_STATUS_SUCCESS, verdict=contracts_pb2.VERDICT_REJECT) == ["run-001"]


async def test_tampered_token_is_invalid(repo: RunStore) -> None:
    await _seed(repo, 5)
    token = (await repo.list_runs(tenant="acme", page_size=2)).next_page_token
    assert token
    envelope = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    body = json.loads(envelope["b"])
    body["r"] = "run-999"
    envelope["b"] = json.dumps(body, separators=(",", ":"), sort_keys=True)
    forged = base64.urlsafe_b64encode(json.dumps(envelope).encode()).decode().rstrip("=")
    flipped = token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:]
    for bad in [forged, flipped, "not-a-token", "!!!", token[:10], "x" * 5000]:
        with pytest.raises(InvalidPageToken):
            await repo.list_runs(tenant="acme", page_size=2, page_token=bad)


async def test_token_of_another_tenant_or_filter_is_invalid(repo: RunStore) -> None:
    await _seed(repo, 5, tenant="acme", prefix="acme")
    await _seed(repo, 5, tenant="globex", prefix="globex")
    token = (await repo.list_runs(tenant="acme", page_size=2)).next_page_token
    assert token
    with pytest.raises(InvalidPageToken):
        await repo.list_runs(tenant="globex", page_size=2, page_token=token)
    with pytest.raises(InvalidPageToken):
        await repo.list_runs(tenant=None, page_size=2, page_token=token)
    with pytest.raises(InvalidPageToken):
        await repo.list_runs(tenant="acme", page_size=2, page_token=token, status=run_pb2.RUN_STATUS_RUNNING)
    with pytest.raises(InvalidPageToken):
        await repo.list_runs(tenant="acme", page_size=2, page_token=token, verdict=contracts_pb2.VERDICT_PASS)
    # The same filters with another page size are fine.
    page = await repo.list_runs(tenant="acme", page_size=3, page_token=token)
    assert [run.run_id for run in page.runs] == ["acme-002", "acme-001", "acme-000"]


async def test_bad_listing_arguments_are_value_errors(repo: RunStore) -> None:
    with pytest.raises(ValueError, match="page_size"):
        await repo.list_runs(tenant="acme", page_size=0)
    with pytest.raises(ValueError, match="status"):
        await repo.list_runs(tenant="acme", page_size=5, status=42)
    with pytest.raises(ValueError, match="verdict"):
        await repo.list_runs(tenant="acme", page_size=5, verdict=-1)


def test_invalid_page_token_is_a_value_error() -> None:
    assert issubclass(InvalidPageToken, ValueError)


_filters = st.builds(
    RunFilter,
    tenant=st.none() | st.text(max_size=20),
    status=st.integers(0, 3),
    verdict=st.integers(0, 3),
)


@given(
    micros=st.integers(0, 4_000_000_000_000_000),
    run_id=st.text(min_size=1, max_size=128),
    run_filter=_filters,
)
def test_token_round_trips(micros: int, run_id: str, run_filter: RunFilter) -> None:
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
    token = PageToken(created_at=moment, run_id=run_id, filter=run_filter)
    text = encode_page_token(token)
    assert text.isascii()
    assert decode_page_token(text, run_filter) == token


@given(text=st.text(max_size=300), run_filter=_filters)
def test_arbitrary_text_is_never_a_crash(text: str, run_filter: RunFilter) -> None:
    try:
        decode_page_token(text, run_filter)
    except InvalidPageToken:
        return
    pytest.fail(f"decoded an arbitrary token: {text!r}")  # pragma: no cover
