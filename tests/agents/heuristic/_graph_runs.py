"""A written incident pack run through the whole graph: the Orchestrator with the heuristic provider over the tools
the server gives a recorded pack (``api.components.pack_tools_for``)."""

from __future__ import annotations

import asyncio

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.heuristic import HeuristicProvider
from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import MemoryStore
from diagnosis_server.tools.scenario import Scenario
from tests.incidents.corpus.kit import Pack


def run_pack(pack: Pack) -> tuple[run_pb2.DiagnosisRun, list[contracts_pb2.ToolInvocation]]:
    """The run of the pack's question (its truth left out of the scenario) and the tool invocations it recorded."""
    doc = pack.build()
    doc.pop("truth", None)
    scenario = Scenario.model_validate(doc)

    async def go() -> tuple[run_pb2.DiagnosisRun, list[contracts_pb2.ToolInvocation]]:
        store = MemoryStore(owner="test")
        runner = Orchestrator(
            store=store, provider=HeuristicProvider(), tools_for=pack_tools_for({pack.name: scenario})
        )
        run = await runner.run(question=str(doc["question"]), scenario=pack.name)
        return run, list(await store.list_tool_invocations(run.run_id))

    return asyncio.run(go())
