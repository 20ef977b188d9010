"""Our graph engine's per-run overhead vs the same 6-node topology on LangGraph's StateGraph.

Both run no-op nodes (agents and tools replaced by no-ops): what is measured is the engine itself:
routing, state updates, event emission.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
from typing import Any, TypedDict

from bench.profiling import ProfileSummary, profile_async
from bench.timing import per_op_async
from diagnosis.v1 import run_pb2
from diagnosis_server.agents.prompts import default_catalog
from diagnosis_server.graph.context import RunContext, ToolEnvironment
from diagnosis_server.graph.engine import GraphEngine
from diagnosis_server.graph.nodes import default_nodes
from diagnosis_server.graph.nodes.base import NodeResult
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.store import MemoryStore
from diagnosis_server.tools.base import Toolset

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
        invocations=MemoryStore(owner="bench", copies=False),
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
    for current, nxt in itertools.pairwise(names):
        # Conditional edges, as our routing table is: the route is chosen from the node's outcome.
        builder.add_conditional_edges(current, lambda state, nxt=nxt: nxt, {nxt: nxt})
    builder.add_edge(names[-1], END)
    return builder.compile()


def langgraph_available() -> bool:
    return importlib.util.find_spec("langgraph") is not None


async def measure_ours(*, ops: int = 2000, repeats: int = 5) -> float:
    """Seconds per no-op run of our engine (best of ``repeats`` rounds of ``ops`` runs)."""
    engine, ctx = our_engine()

    async def ours() -> object:
        return await engine.run(DiagnosisState(run_id="run-bench", question="q", scenario=""), ctx)

    await ours()
    return await per_op_async(ours, ops=ops, repeats=repeats)


async def measure(*, ops: int = 2000, langgraph_ops: int = 100, repeats: int = 5) -> dict[str, float]:
    """Per-run overhead of our engine and of LangGraph's StateGraph on the same no-op topology.

    Rounds alternate between the two so that noise on the machine falls on both; the best round counts.
    """
    graph = langgraph_graph()

    async def theirs() -> object:
        return await graph.ainvoke({"step": 0})

    await theirs()
    ours_s = theirs_s = float("inf")
    for _ in range(repeats):
        ours_s = min(ours_s, await measure_ours(ops=ops, repeats=1))
        theirs_s = min(theirs_s, await per_op_async(theirs, ops=langgraph_ops, repeats=1))
    return {
        "engine_run_us": ours_s * 1e6,
        "langgraph_run_us": theirs_s * 1e6,
        "engine_vs_langgraph": ours_s / theirs_s,
    }


async def profile(*, ops: int = 2000) -> ProfileSummary:
    """A cProfile of our engine's no-op runs."""
    engine, ctx = our_engine()

    async def ours() -> object:
        return await engine.run(DiagnosisState(run_id="run-bench", question="q", scenario=""), ctx)

    return await profile_async(ours, ops=ops, what=f"{ops} no-op runs of our graph engine")


if __name__ == "__main__":
    print(asyncio.run(measure()))
