"""The same work on LangGraph: its nodes call our own node functions, and ``AsyncSqliteSaver`` checkpoints each.

The canned peer (``bench.peer``) returns a captured run's outputs, so it skips the safety work our nodes do;
this one does that work too. Each LangGraph node runs our node (its input projection, its agent or pure step,
its state writes) on the run's ``DiagnosisState``, and returns what the node wrote, serialized (protos as their
bytes), with the route our routing table gives, as its state update: the checkpointer writes it before the next
node runs (``durability="sync"``). The Executor's tool calls go through our tool runner into an in-memory store,
and the invocations are part of its update, so they are checkpointed too; the last node also returns the run's
final record (``complete_run``). Ours: the orchestrator with the heuristic provider and the SQLite store, the
same run (the bundled ``checkout-oom`` scenario). Rounds alternate; each round's ratio is one sample.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

from google.protobuf.message import Message

from bench.capture import QUESTION, SCENARIO, orchestrator
from diagnosis.v1 import run_pb2
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.graph.result import complete_run
from diagnosis_server.graph.spec import GRAPH, _End, node_label
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.store import MemoryStore, RunStore, open_repository

END_ROUTE = "__end__"


def _merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    return {**left, **right}


class SameWorkState(TypedDict, total=False):
    thread: str
    route: str
    # What each node wrote, by node: kept for the run (a reducer merges each node's into it).
    outputs: Annotated[dict[str, Any], _merge]


def _serialized(value: Any) -> Any:
    if isinstance(value, Message):
        return value.SerializeToString()
    if isinstance(value, tuple | list):
        return [_serialized(v) for v in value]
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    return repr(value)


class _Run:
    """One peer run's own state (our DiagnosisState: protos, which LangGraph's state does not hold as such)."""

    def __init__(self, base: Orchestrator, run: run_pb2.DiagnosisRun, store: MemoryStore) -> None:
        self.run = run
        self.store = store
        self.state = DiagnosisState(run_id=run.run_id, question=run.question, scenario=run.scenario)
        tools = base.tools_of(scenario=run.scenario, environment="")
        self.ctx = RunContext(
            run_id=run.run_id,
            provider=base.provider,
            catalog=base.catalog,
            tools=tools,
            invocations=store,
            limits=base.limits,
        )
        self.attempts: dict[tuple[int, int], int] = {}


class SameWorkPeer:
    """LangGraph over our nodes, checkpointed by ``AsyncSqliteSaver`` on a WAL file at synchronous=NORMAL."""

    def __init__(self, base: Orchestrator) -> None:
        self.base = base
        self.runs: dict[str, _Run] = {}
        self._serial = 0
        self.graph: Any = None
        self._saver_cm: Any = None

    async def open(self, path: Path) -> None:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        self._saver_cm = AsyncSqliteSaver.from_conn_string(str(path))
        saver = await self._saver_cm.__aenter__()
        await saver.setup()
        await saver.conn.execute("PRAGMA journal_mode = WAL")
        await saver.conn.execute("PRAGMA synchronous = NORMAL")
        self.graph = self._build(saver)

    async def close(self) -> None:
        if self._saver_cm is not None:
            await self._saver_cm.__aexit__(None, None, None)

    def _build(self, saver: Any) -> Any:
        from langgraph.graph import END, START, StateGraph

        builder = StateGraph(SameWorkState)
        labels = {name: node_label(name).lower() for name in GRAPH.names}
        for name, label in labels.items():
            builder.add_node(label, self._node(name, labels))
        builder.add_edge(START, labels[GRAPH.start])
        for label in labels.values():
            targets = [labels[n] for n in GRAPH.names] + [END]
            builder.add_conditional_edges(label, _route, targets)
        return builder.compile(checkpointer=saver)

    def _node(self, name: int, labels: dict[int, str]) -> Any:
        node = self.base.nodes[name]

        async def run_node(state: SameWorkState) -> SameWorkState:
            run = self.runs[state["thread"]]
            ds = run.state
            cycle = ds.evidence_retry_count + 1
            attempt = run.attempts.get((name, cycle), 0) + 1
            recorded = len(await run.store.list_tool_invocations(ds.run_id))
            started = time.perf_counter()
            result = await node.run(node.project(ds), run.ctx, attempt=attempt, cycle=cycle)
            if result.updates:
                ds.write(result.updates)
            nxt = GRAPH.next_node(name, result.outcome, retries_used=attempt - 1)
            if nxt == name:
                run.attempts[(name, cycle)] = attempt
            event = run_pb2.OrchestrationEvent(
                run_id=ds.run_id,
                sequence=len(ds.orchestration_events) + 1,
                node=name,  # type: ignore[arg-type]
                outcome=result.outcome,  # type: ignore[arg-type]
                reason_code=result.reason_code,
                attempt=attempt,
                cycle=cycle,
                duration_ms=int((time.perf_counter() - started) * 1000),
            )
            event.timestamp.GetCurrentTime()
            ds.orchestration_events = (*ds.orchestration_events, event)
            ds.steps += 1
            ds.routed_by = event
            written: dict[str, Any] = {key: _serialized(value) for key, value in (result.updates or {}).items()}
            written["event"] = event.SerializeToString()
            if result.step is not None:
                written["step"] = result.step.SerializeToString()
            invocations = (await run.store.list_tool_invocations(ds.run_id))[recorded:]
            if invocations:
                written["invocations"] = [i.SerializeToString() for i in invocations]
            route = END_ROUTE if isinstance(nxt, _End) else labels[nxt]
            if route == END_ROUTE:
                written["run"] = complete_run(run.run, ds, self.base.catalog.audit()).SerializeToString()
            return {"route": route, "outputs": {labels[name]: written}}

        return run_node

    async def run_once(self) -> None:
        self._serial += 1
        thread = f"thread-{self._serial}"
        store = MemoryStore(owner="bench-samework", copies=False)
        record = self.base.new_run(question=QUESTION, scenario=SCENARIO)
        await store.create_run(record)
        self.runs[thread] = _Run(self.base, record, store)
        try:
            config = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
            result = await self.graph.ainvoke({"thread": thread}, config, durability="sync")
            if "composer" not in result.get("outputs", {}):
                raise RuntimeError(f"the same-work peer's run ended elsewhere: {sorted(result.get('outputs', {}))}")
        finally:
            del self.runs[thread]


def _route(state: SameWorkState) -> str:
    return state.get("route", END_ROUTE)


async def _ours_per_s(base: Orchestrator, runs: int) -> float:
    start = time.perf_counter()
    for _ in range(runs):
        run = await base.run(question=QUESTION, scenario=SCENARIO)
        if run.status != run_pb2.RUN_STATUS_SUCCESS:
            raise RuntimeError(f"the bench run ended {run_pb2.RunStatus.Name(run.status)}: {run.failure_reason}")
    return runs / (time.perf_counter() - start)


async def _peer_per_s(peer: SameWorkPeer, runs: int) -> float:
    start = time.perf_counter()
    for _ in range(runs):
        await peer.run_once()
    return runs / (time.perf_counter() - start)


async def measure(*, runs: int = 15, rounds: int = 5) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-samework-") as tmp:
        folder = Path(tmp)
        repository: RunStore = await open_repository(f"sqlite+aiosqlite:///{folder / 'ours.db'}", owner="bench")
        ours = orchestrator(repository)
        peer = SameWorkPeer(orchestrator(MemoryStore(owner="bench-samework")))
        await peer.open(folder / "peer.db")
        try:
            await _ours_per_s(ours, 2)
            await _peer_per_s(peer, 2)
            figures: dict[str, list[float]] = {"ours": [], "peer": []}
            for _ in range(rounds):
                figures["peer"].append(await _peer_per_s(peer, runs))
                figures["ours"].append(await _ours_per_s(ours, runs))
        finally:
            await peer.close()
            await repository.close()
    ratios = [o / p for o, p in zip(figures["ours"], figures["peer"], strict=True)]
    return {
        "samework_vs_langgraph_sqlite": round(statistics.median(ratios), 3),
        "samework_vs_langgraph_sqlite_rounds": [round(r, 3) for r in ratios],
        "samework_ours_runs_per_s": round(statistics.median(figures["ours"]), 3),
        "samework_ours_runs_per_s_rounds": [round(v, 3) for v in figures["ours"]],
        "samework_langgraph_runs_per_s": round(statistics.median(figures["peer"]), 3),
        "samework_langgraph_runs_per_s_rounds": [round(v, 3) for v in figures["peer"]],
    }
