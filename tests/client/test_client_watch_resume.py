"""watch_run resumes a broken stream from the last sequence it saw, with no event twice, and gives up in bounds.

The service is a scripted fake on loopback (real gRPC transport): a WatchRun stream ends with UNAVAILABLE after a
few events, as a dropped connection does; the next call must ask for ``after_sequence`` = the last sequence yielded.
"""

from __future__ import annotations

import time

import grpc
import pytest

from diagnosis import (
    AsyncDiagnosisClient,
    ConnectionConfig,
    DeadlineExceededError,
    DiagnosisClient,
    NotFoundError,
    ProtocolError,
    ReconnectPolicy,
    UnavailableError,
)
from diagnosis.v1 import diagnosis_service_pb2

from .client_fakes import RUN_ID, FakeServer, Step, ended, event

FAST = ReconnectPolicy(max_attempts=3, initial_backoff=0.01, max_backoff=0.02)

BROKEN_THEN_RESUMED: list[list[Step]] = [
    [event(1), event(2), grpc.StatusCode.UNAVAILABLE],
    # The server replays from after_sequence; a duplicate of 2 is included to prove the client skips it.
    [event(2), event(3), grpc.StatusCode.UNAVAILABLE],
    [event(4), ended(4)],
]


def config(fake: FakeServer, reconnect: ReconnectPolicy = FAST, **kwargs: object) -> ConnectionConfig:
    return ConnectionConfig(target=fake.target, reconnect=reconnect, **kwargs)  # type: ignore[arg-type]


def summary(responses: list[diagnosis_service_pb2.WatchRunResponse]) -> list[str | int]:
    return [r.event.sequence if r.WhichOneof("kind") == "event" else "ended" for r in responses]


def test_sync_watch_resumes_from_the_last_sequence_without_duplicates(fake: FakeServer) -> None:
    fake.service.watch_scripts = [list(s) for s in BROKEN_THEN_RESUMED]
    with DiagnosisClient(config(fake)) as client:
        responses = list(client.watch_run(RUN_ID))
    assert summary(responses) == [1, 2, 3, 4, "ended"]
    assert [r.after_sequence for r in fake.service.watch_requests] == [0, 2, 3]
    assert all(r.run_id == RUN_ID for r in fake.service.watch_requests)


async def test_async_watch_resumes_from_the_last_sequence_without_duplicates(fake: FakeServer) -> None:
    fake.service.watch_scripts = [list(s) for s in BROKEN_THEN_RESUMED]
    async with AsyncDiagnosisClient(config(fake)) as client:
        responses = [r async for r in client.watch_run(RUN_ID)]
    assert summary(responses) == [1, 2, 3, 4, "ended"]
    assert [r.after_sequence for r in fake.service.watch_requests] == [0, 2, 3]


def test_watch_starts_after_the_given_sequence(fake: FakeServer) -> None:
    fake.service.watch_scripts = [[event(5), event(6), ended(6)]]
    with DiagnosisClient(config(fake)) as client:
        assert summary(list(client.watch_run(RUN_ID, after_sequence=4))) == [5, 6, "ended"]
    assert fake.service.watch_requests[0].after_sequence == 4


def test_reconnects_are_bounded_when_no_progress_is_made(fake: FakeServer) -> None:
    fake.service.watch_scripts = [[event(1), grpc.StatusCode.UNAVAILABLE]] + [[grpc.StatusCode.UNAVAILABLE]] * 10
    seen: list[diagnosis_service_pb2.WatchRunResponse] = []
    with DiagnosisClient(config(fake)) as client, pytest.raises(UnavailableError):
        seen.extend(client.watch_run(RUN_ID))
    assert summary(seen) == [1]
    # The first call, then max_attempts (3) reconnects that bring nothing new; the last one's error is raised.
    assert len(fake.service.watch_requests) == 1 + 3
    assert [r.after_sequence for r in fake.service.watch_requests] == [0, 1, 1, 1]


def test_progress_resets_the_reconnect_budget(fake: FakeServer) -> None:
    # Five breaks in all, but never more than two in a row without a new event: the watch completes.
    fake.service.watch_scripts = [
        [event(1), grpc.StatusCode.UNAVAILABLE],
        [grpc.StatusCode.UNAVAILABLE],
        [event(2), grpc.StatusCode.UNAVAILABLE],
        [grpc.StatusCode.UNAVAILABLE],
        [event(3), grpc.StatusCode.UNAVAILABLE],
        [ended(3)],
    ]
    with DiagnosisClient(config(fake)) as client:
        assert summary(list(client.watch_run(RUN_ID))) == [1, 2, 3, "ended"]


def test_zero_reconnect_attempts_raises_the_first_break(fake: FakeServer) -> None:
    fake.service.watch_scripts = [[event(1), grpc.StatusCode.UNAVAILABLE], [ended(1)]]
    with DiagnosisClient(config(fake, ReconnectPolicy(max_attempts=0))) as client, pytest.raises(UnavailableError):
        list(client.watch_run(RUN_ID))
    assert len(fake.service.watch_requests) == 1


def test_other_errors_are_not_resumed(fake: FakeServer) -> None:
    fake.service.watch_scripts = [[grpc.StatusCode.NOT_FOUND]]
    with DiagnosisClient(config(fake)) as client, pytest.raises(NotFoundError) as caught:
        list(client.watch_run("missing"))
    assert caught.value.code == grpc.StatusCode.NOT_FOUND
    assert len(fake.service.watch_requests) == 1


def test_a_stream_that_ends_without_ended_is_resumed_then_reported(fake: FakeServer) -> None:
    fake.service.watch_scripts = [[event(1)], [event(2), ended(2)]]
    with DiagnosisClient(config(fake)) as client:
        assert summary(list(client.watch_run(RUN_ID))) == [1, 2, "ended"]
    fake.service.watch_scripts = [[event(1)]] * 5
    with DiagnosisClient(config(fake)) as client, pytest.raises(ProtocolError, match="ended without"):
        list(client.watch_run(RUN_ID))


async def test_async_reconnects_are_bounded(fake: FakeServer) -> None:
    fake.service.watch_scripts = [[grpc.StatusCode.UNAVAILABLE]] * 10
    async with AsyncDiagnosisClient(config(fake)) as client:
        with pytest.raises(UnavailableError):
            [r async for r in client.watch_run(RUN_ID)]
    assert len(fake.service.watch_requests) == 4


def test_the_timeout_bounds_the_whole_watch_reconnects_included(fake: FakeServer) -> None:
    fake.service.watch_scripts = [[grpc.StatusCode.UNAVAILABLE]] * 50
    slow = ReconnectPolicy(max_attempts=50, initial_backoff=0.2, max_backoff=0.2)
    started = time.monotonic()
    with DiagnosisClient(config(fake, slow)) as client, pytest.raises(DeadlineExceededError):
        list(client.watch_run(RUN_ID, timeout=0.5))
    assert time.monotonic() - started < 2.0


def test_negative_after_sequence_is_rejected(fake: FakeServer) -> None:
    with DiagnosisClient(config(fake)) as client, pytest.raises(ValueError, match="after_sequence"):
        list(client.watch_run(RUN_ID, after_sequence=-1))
