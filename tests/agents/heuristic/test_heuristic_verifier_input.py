"""The heuristic Verifier reads the VerifierInput message its bytes were made from: the same input, unparsed.

The node hands the agent the canonical bytes (R-VI-4) and, beside them, the message they were serialized
from; the heuristic Verifier reads that message instead of parsing the bytes back. These tests prove the two
are the same input on every bundled scenario, and that the reply does not depend on which one it read.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import Agent, AgentProvider, AgentReply, AgentRequest, AgentRole
from diagnosis_server.agents.heuristic import create_provider
from diagnosis_server.agents.heuristic.verifier import parse_verifier_input
from diagnosis_server.store import Repository

from ._support import SCENARIOS, run_scenario


class _Checking:
    """The heuristic Verifier, run both ways on every request: from the message and from the bytes alone."""

    def __init__(self, inner: Agent, seen: list[contracts_pb2.VerifierInput]) -> None:
        self._inner = inner
        self._seen = seen

    async def run(self, request: AgentRequest) -> AgentReply:
        message = request.input_message
        assert isinstance(message, contracts_pb2.VerifierInput)
        assert parse_verifier_input(request.input_bytes) == message
        from_bytes = await self._inner.run(replace(request, input_message=None))
        reply = await self._inner.run(request)
        assert reply.text == from_bytes.text
        self._seen.append(message)
        return reply


class _Provider:
    name = "heuristic"

    def __init__(self, seen: list[contracts_pb2.VerifierInput]) -> None:
        self._inner: AgentProvider = create_provider()
        self._seen = seen

    def agent(self, role: AgentRole) -> Agent:
        agent = self._inner.agent(role)
        return _Checking(agent, self._seen) if role == "verifier" else agent


@pytest.mark.requirement("R-VI-4")
@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_the_message_is_what_the_bytes_say_on_every_scenario(name: str, repository: Repository) -> None:
    seen: list[contracts_pb2.VerifierInput] = []
    run = await run_scenario(repository, name, provider=_Provider(seen))
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    assert seen, "the Verifier ran"
