"""Question text is checked before any run exists, the same way whatever the backend: a NUL used to be
INTERNAL on PostgreSQL (it refuses NUL in text) and stored on SQLite."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import grpc.aio
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.settings import load_settings
from tests.support.fakes import PassProvider, tools_for
from tests.support.postgres import reset_postgres
from tests.support.rpc import field_violations

from .postgres import RestartablePostgres

MAX = 40


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def running(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunningServer]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    else:
        postgres: RestartablePostgres = request.getfixturevalue("postgres")
        url = postgres.url
        await reset_postgres(url, drop=False)
    settings = load_settings(
        address="127.0.0.1:0", database_url=url, metrics_address="", http_address="", max_question_chars=MAX
    )
    server = await start_server(settings, provider=PassProvider(), tools_for=tools_for)
    try:
        yield server
    finally:
        await server.stop(grace=1)


BAD = {
    "nul": "why\x00 is checkout failing?",
    "escape": "why is \x1b[31mcheckout failing?",
    "delete": "why is checkout\x7f failing?",
    "c1 control": "why is checkout\x85 failing?",
    "zero-width only": "\u200b\u200b\ufeff",
    "joiners and spaces": " \u200d \u2060 \u00a0 ",
    "too long after trimming": "x" * (MAX + 1),
}


@pytest.mark.parametrize("name", sorted(BAD))
async def test_bad_question_text_is_invalid_argument(running: RunningServer, name: str) -> None:
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            [m async for m in stub.Diagnose(pb.DiagnoseRequest(question=BAD[name]))]
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert [field for field, _ in field_violations(caught.value)] == ["question"]
    assert await running.repository.count_runs() == 0  # no run was left behind


async def test_good_text_is_accepted_and_trimmed(running: RunningServer) -> None:
    padded = "   " + "w" * MAX + " \n\t"  # at the limit once trimmed
    multi_line = "why is\ncheckout\tfailing?\r\n"
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        for question in (padded, multi_line, "¿por qué falla checkout? 🙂"):
            final = [m async for m in stub.Diagnose(pb.DiagnoseRequest(question=question))][-1].run
            assert final.status == run_pb2.RUN_STATUS_SUCCESS
            assert final.question == question.strip()
