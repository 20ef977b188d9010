"""Every line logged inside a call and inside the run it starts names the call's method, tenant and run id."""

from __future__ import annotations

import io
import json
from typing import Any

import structlog

from diagnosis_server.agents.base import Agent, AgentReply, AgentRequest, AgentRole
from diagnosis_server.api import configure_logging
from tests.support.fakes import PassProvider
from tests.support.rpc import eventually

from .conftest import ApiFactory

TOKEN = "acme-token-7f3e9c1d"
DIAGNOSE = "diagnosis.v1.DiagnosisService/Diagnose"


class _LoggingPlanner(PassProvider):
    """The planner writes a line of its own from inside the run's task, then answers as PassProvider's does."""

    def agent(self, role: AgentRole) -> Agent:
        agent = super().agent(role)
        if role != "planner":
            return agent

        class Logged:
            async def run(self, request: AgentRequest) -> AgentReply:
                structlog.get_logger("test").info("planner_inside_the_run")
                return await agent.run(request)

        return Logged()


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]


async def test_a_line_logged_inside_a_run_carries_method_tenant_and_run_id(api_factory: ApiFactory) -> None:
    api = await api_factory(auth_tokens=f"acme:{TOKEN}", provider=_LoggingPlanner())
    stream = io.StringIO()
    saved = structlog.get_config()
    configure_logging("info", stream=stream)
    try:
        responses = await api.diagnose(metadata=(("authorization", f"Bearer {TOKEN}"),))
        run_id = responses[-1].run.run_id
        await eventually(lambda: any(line["event"] == "rpc" for line in _lines(stream)))
    finally:
        structlog.configure(**saved)  # the suite's own (JSON on stderr), not the console default on stdout
    lines = _lines(stream)
    (inside,) = [line for line in lines if line["event"] == "planner_inside_the_run"]
    assert (inside["method"], inside["tenant"], inside["run_id"]) == (DIAGNOSE, "acme", run_id)
    (rpc,) = [line for line in lines if line["event"] == "rpc"]
    assert (rpc["method"], rpc["tenant"], rpc["run_id"], rpc["code"]) == (DIAGNOSE, "acme", run_id, "OK")
