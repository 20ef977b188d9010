"""`diagnosis serve` in its default configuration (embedded heuristic provider, built-in tools), end to end."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import grpc.aio
import pytest

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.api.components import load_provider
from diagnosis_server.settings import SettingsError

CLI = "import sys; from diagnosis_server.cli import main; sys.exit(main())"
SERVING_LINE = re.compile(r"serving gRPC on (\S+?)\. ")


def _heuristic_missing() -> str:
    """Why the embedded provider cannot be built here ("" when it can)."""
    try:
        load_provider("heuristic")
    except SettingsError as exc:
        return str(exc)
    return ""


MISSING = _heuristic_missing()


@pytest.mark.requirement("R-A-6")
@pytest.mark.skipif(bool(MISSING), reason=f"the heuristic provider is not available: {MISSING}")
async def test_default_server_diagnoses_a_bundled_scenario_and_stops_on_sigterm(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("DIAGNOSIS_")} | {
        "DIAGNOSIS_METRICS_ADDRESS": "",
        "DIAGNOSIS_HTTP_ADDRESS": "",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLI, "serve", "--address", "127.0.0.1:0",
        "--database-url", f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}",
        env=env, stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        target = ""
        async with asyncio.timeout(30):
            while not target:
                line = (await process.stderr.readline()).decode()
                assert line, "diagnosis serve ended before serving"
                if match := SERVING_LINE.search(line):
                    target = match.group(1)
        drain = asyncio.create_task(process.stderr.read())
        async with grpc.aio.insecure_channel(target) as channel:
            stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
            request = pb.DiagnoseRequest(
                question="Why is checkout-api returning 503s?", context=pb.RequestContext(scenario="checkout-oom")
            )
            messages = [m async for m in stub.Diagnose(request, timeout=30)]
        run = messages[-1].run
        assert messages[0].WhichOneof("kind") == "started"
        assert run.status == run_pb2.RUN_STATUS_SUCCESS
        assert run.agent_provider == "heuristic"
        assert run.answer_text.strip()

        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), timeout=20) == 0
        logs = (await drain).decode()
        assert '"event": "serving"' in logs
        assert '"event": "rpc"' in logs
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
