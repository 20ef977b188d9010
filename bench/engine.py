"""Our graph engine's per-run overhead vs the same 6-node topology on LangGraph's StateGraph.

Both run no-op nodes (agents and tools replaced by no-ops): what is measured is the engine itself:
routing, state updates, event emission.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

from diagnosis.v1 import run_pb2
from diagnosis_server.agents.prompts import default_catalog
from diagnosis_server.graph.context import RunContext, ToolEnvironment
from diagnosis_server.graph.engine import GraphEngine
from diagnosis_server.graph.nodes import default_nodes
from diagnosis_server.graph.nodes.base import NodeResult
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.tools.base import Toolset

from bench.timing import per_op_async

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741

_TOPOLOGY = (
    (N.NODE_NAME_PLANNER, O.NODE_OUTCOME_OK),
    (N.NODE_NAME_EXECUTOR, O.NODE_OUTCOME_OK),
    (N.NODE_NAME_GATEKEEPER, O.NODE_OUTCOME_CEILING_PASS),
    (N.NODE_NAME_VERIFIED_INPUT_BUILDER, O.NODE_OUTCOME_OK),
    (N.NODE_NAME_VERIFIER, O.NODE_OUTCOME_VERDICT_PASS),
    (N.NODE_NAME_COMPOSER, O.NODE_OUTCOME_OK),
)


class _NoOp:
    def __init__(self, name: int, outcome: int) -> None:
        self.name = name
        self._result = NodeResult(outcome)

    def project(self, state: DiagnosisState) -> None:
        return None

    async def run(self, inputs: Any, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        return self._result


class _NoStore:
    async def add_tool_invocation(self, invocation: Any) -> None:
        return None

    async def list_tool_invocations(self, run_id: str) -> list[Any]:
        return []


class _NoProvider:
    name = "none"

    def agent(self, role: Any) -> Any:
        raise NotImplementedError


def our_engine() -> tuple[GraphEngine, RunContext]:
    nodes: dict[int, Any] = dict(default_nodes())
    for name, outcome in _TOPOLOGY:
        nodes[name] = _NoOp(name, outcome)
    ctx = RunContext(
        run_id="run-bench",
        provider=_NoProvider(),
        catalog=default_catalog(),
        tools=ToolEnvironment(toolset=Toolset([])),
        invocations=_NoStore(),
    )
    return GraphEngine(nodes), ctx


class _LGState(TypedDict, total=False):
    step: int


def langgraph_graph() -> Any:
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(_LGState)
    names = ["planner", "executor", "gatekeeper", "builder", "verifier", "composer"]
    for name in names:
        builder.add_node(name, lambda state: {"step": state.get("step", 0) + 1})
    builder.add_edge(START, names[0])
    for current, nxt in zip(names, names[1:], strict=False):
        # Conditional edges, as our routing table is: the route is chosen from the node's outcome.
        builder.add_conditional_edges(current, lambda state, nxt=nxt: nxt, {nxt: nxt})
    builder.add_edge(names[-1], END)
    return builder.compile()


async def measure() -> dict[str, float]:
    engine, ctx = our_engine()

    async def ours() -> object:
        return await engine.run(DiagnosisState(run_id="run-bench", question="q", scenario=""), ctx)

    graph = langgraph_graph()

    async def theirs() -> object:
        return await graph.ainvoke({"step": 0})

    await ours()
    await theirs()
    ours_s = await per_op_async(ours, ops=2000)
    theirs_s = await per_op_async(theirs, ops=300)
    return {
        "engine_run_us": ours_s * 1e6,
        "langgraph_run_us": theirs_s * 1e6,
        "engine_vs_langgraph": ours_s / theirs_s,
    }


if __name__ == "__main__":
    print(asyncio.run(measure()))
