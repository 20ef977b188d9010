"""The peer a user would pick: LangGraph with ``langgraph-checkpoint-sqlite``'s ``SqliteSaver``, in-process runs/s.

The peer graph has our six nodes and our routes (planner -> executor -> gatekeeper -> verified-input builder
-> verifier -> composer, each edge a conditional one chosen from the node's outcome, as our routing table
does); each node returns the canned output of the captured real run (``bench.capture``: the agents' replies,
the tool outputs, the Verifier's input, the final record), so its state is as large as ours. It checkpoints
every node (a superstep) with ``SqliteSaver`` on a WAL file at synchronous=NORMAL, ``durability="sync"``: the
checkpoint is written before the next node runs, as ours is. The second variant also checkpoints each tool
call (a ``tools`` node looping once per call before the executor node), which is what our rule that every
tool call is persisted before the Executor sees it corresponds to.

Ours: the same captured run replayed by the scripted provider with the SQLite store, and the heuristic
provider with the SQLite store. Rounds alternate between the four; each round's ratio is one sample.
"""

from __future__ import annotations

import itertools
import json
import operator
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

from bench.capture import QUESTION, SCENARIO, CapturedRun, orchestrator, scripted_provider
from bench.profiling import ProfileSummary, profile_async
from diagnosis.v1 import run_pb2
from diagnosis_server.conversions import from_value, message_to_json
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import RunStore, open_repository


class PeerState(TypedDict, total=False):
    question: str
    route: str
    plan: str
    pending: int
    tool_outputs: Annotated[list[Any], operator.add]
    executor_output: str
    gatekeeper: str
    verifier_input: str
    verifier_output: str
    answer: str
    run: str


NODES = ("planner", "executor", "gatekeeper", "builder", "verifier", "composer")


def canned(captured: CapturedRun) -> dict[str, Any]:
    """What each peer node returns: the captured run's outputs."""
    final = captured.final or run_pb2.DiagnosisRun()
    verifier_input = b"".join(captured.inputs.get("verifier", [])).decode("utf-8")
    return {
        "plan": "".join(captured.replies.get("planner", [])),
        "tool_outputs": [from_value(i.output) for i in captured.invocations],
        "executor_output": "".join(captured.replies.get("executor", [])),
        "gatekeeper": message_to_json(final.self_evaluation),
        "verifier_input": verifier_input,
        "verifier_output": "".join(captured.replies.get("verifier", [])),
        "answer": "".join(captured.replies.get("composer", [])),
        "run": message_to_json(final),
    }


def peer_graph(outputs: dict[str, Any], *, checkpointer: Any, per_tool_call: bool) -> Any:
    from langgraph.graph import END, START, StateGraph

    tool_outputs: list[Any] = outputs["tool_outputs"]

    def planner(state: PeerState) -> PeerState:
        return {"plan": outputs["plan"], "route": "ok", "pending": len(tool_outputs)}

    def tools(state: PeerState) -> PeerState:
        index = len(tool_outputs) - state["pending"]
        return {"tool_outputs": [tool_outputs[index]], "pending": state["pending"] - 1}

    def executor(state: PeerState) -> PeerState:
        out: PeerState = {"executor_output": outputs["executor_output"], "route": "ok"}
        if not per_tool_call:
            out["tool_outputs"] = list(tool_outputs)
        return out

    def gatekeeper(state: PeerState) -> PeerState:
        return {"gatekeeper": outputs["gatekeeper"], "route": "ceiling_pass"}

    def builder(state: PeerState) -> PeerState:
        return {"verifier_input": outputs["verifier_input"], "route": "ok"}

    def verifier(state: PeerState) -> PeerState:
        return {"verifier_output": outputs["verifier_output"], "route": "verdict_pass"}

    def composer(state: PeerState) -> PeerState:
        return {"answer": outputs["answer"], "run": outputs["run"], "route": "ok"}

    functions: dict[str, Any] = {
        "planner": planner,
        "executor": executor,
        "gatekeeper": gatekeeper,
        "builder": builder,
        "verifier": verifier,
        "composer": composer,
    }
    builder_ = StateGraph(PeerState)
    for name, function in functions.items():
        builder_.add_node(name, function)
    builder_.add_edge(START, "planner")

    def route_of(nxt: str) -> Callable[[PeerState], str]:
        # The route chosen from the node's outcome, as in our routing table (a failure would go elsewhere).
        return lambda state: nxt if state.get("route") in ("ok", "ceiling_pass", "verdict_pass") else END

    sequence = list(NODES)
    if per_tool_call:
        builder_.add_node("tools", tools)
        builder_.add_conditional_edges(
            "planner", lambda state: "tools" if state.get("pending") else "executor", ["tools", "executor"]
        )
        builder_.add_conditional_edges(
            "tools", lambda state: "tools" if state.get("pending") else "executor", ["tools", "executor"]
        )
        sequence = sequence[1:]
    for current, nxt in itertools.pairwise(sequence):
        builder_.add_conditional_edges(current, route_of(nxt), [nxt, END])
    builder_.add_edge("composer", END)
    return builder_.compile(checkpointer=checkpointer)


class Peer:
    """The LangGraph peer with its SqliteSaver on a file, one thread id a run."""

    def __init__(self, outputs: dict[str, Any], path: Path, *, per_tool_call: bool) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.conn = sqlite3.connect(path, check_same_thread=False)
        saver = SqliteSaver(self.conn)
        saver.setup()
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.graph = peer_graph(outputs, checkpointer=saver, per_tool_call=per_tool_call)
        self._serial = 0

    def run(self) -> dict[str, Any]:
        self._serial += 1
        config = {"configurable": {"thread_id": f"thread-{self._serial}"}, "recursion_limit": 200}
        result: dict[str, Any] = self.graph.invoke({"question": QUESTION}, config, durability="sync")
        return result

    def runs_per_s(self, runs: int) -> float:
        start = time.perf_counter()
        for _ in range(runs):
            self.run()
        return runs / (time.perf_counter() - start)

    def close(self) -> None:
        self.conn.close()


async def _ours_per_s(make: Callable[[], Orchestrator], runs: int) -> float:
    start = time.perf_counter()
    for _ in range(runs):
        run = await make().run(question=QUESTION, scenario=SCENARIO)
        if run.status != run_pb2.RUN_STATUS_SUCCESS:
            raise RuntimeError(f"the bench run ended {run_pb2.RunStatus.Name(run.status)}: {run.failure_reason}")
    return runs / (time.perf_counter() - start)


def checkpoint_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        total = 0
        for table, columns in (("checkpoints", "checkpoint, metadata"), ("writes", "value")):
            expression = " + ".join(f"coalesce(length({c.strip()}), 0)" for c in columns.split(","))
            total += int(conn.execute(f"SELECT coalesce(sum({expression}), 0) FROM {table}").fetchone()[0])
        return total
    finally:
        conn.close()


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def _rounds(values: list[float]) -> list[float]:
    return [round(v, 3) for v in values]


async def measure(captured: CapturedRun, *, runs: int = 20, peer_runs: int = 40, rounds: int = 5) -> dict[str, Any]:
    outputs = canned(captured)
    with tempfile.TemporaryDirectory(prefix="bench-peer-") as tmp:
        folder = Path(tmp)
        repository: RunStore = await open_repository(f"sqlite+aiosqlite:///{folder / 'ours.db'}", owner="bench")
        node_peer = Peer(outputs, folder / "peer-node.db", per_tool_call=False)
        tool_peer = Peer(outputs, folder / "peer-tool.db", per_tool_call=True)
        heuristic = orchestrator(repository)
        try:

            def scripted() -> Orchestrator:
                return Orchestrator(
                    store=repository,
                    provider=scripted_provider(captured),
                    tools_for=heuristic.tools_for,
                    nodes=heuristic.nodes,
                    catalog=heuristic.catalog,
                )

            # Warm-up: imports, caches, the first checkpoint tables' pages.
            await _ours_per_s(scripted, 2)
            await _ours_per_s(lambda: heuristic, 2)
            node_peer.runs_per_s(3)
            tool_peer.runs_per_s(3)
            figures: dict[str, list[float]] = {k: [] for k in ("scripted", "heuristic", "node", "tool")}
            for _ in range(rounds):
                figures["node"].append(node_peer.runs_per_s(peer_runs))
                figures["scripted"].append(await _ours_per_s(scripted, runs))
                figures["tool"].append(tool_peer.runs_per_s(peer_runs))
                figures["heuristic"].append(await _ours_per_s(lambda: heuristic, runs))
            node_bytes = checkpoint_bytes(folder / "peer-node.db") / max(node_peer._serial, 1)
            tool_bytes = checkpoint_bytes(folder / "peer-tool.db") / max(tool_peer._serial, 1)
        finally:
            node_peer.close()
            tool_peer.close()
            await repository.close()
    scripted_ratio = [s / n for s, n in zip(figures["scripted"], figures["node"], strict=True)]
    heuristic_ratio = [h / n for h, n in zip(figures["heuristic"], figures["node"], strict=True)]
    scripted_tool = [s / t for s, t in zip(figures["scripted"], figures["tool"], strict=True)]
    heuristic_tool = [h / t for h, t in zip(figures["heuristic"], figures["tool"], strict=True)]
    return {
        "scripted_vs_langgraph_sqlite": _median(scripted_ratio),
        "scripted_vs_langgraph_sqlite_rounds": _rounds(scripted_ratio),
        "heuristic_vs_langgraph_sqlite": _median(heuristic_ratio),
        "heuristic_vs_langgraph_sqlite_rounds": _rounds(heuristic_ratio),
        "scripted_vs_langgraph_sqlite_per_tool_call": _median(scripted_tool),
        "scripted_vs_langgraph_sqlite_per_tool_call_rounds": _rounds(scripted_tool),
        "heuristic_vs_langgraph_sqlite_per_tool_call": _median(heuristic_tool),
        "heuristic_vs_langgraph_sqlite_per_tool_call_rounds": _rounds(heuristic_tool),
        "scripted_sqlite_runs_per_s": _median(figures["scripted"]),
        "scripted_sqlite_runs_per_s_rounds": _rounds(figures["scripted"]),
        "heuristic_sqlite_runs_per_s": _median(figures["heuristic"]),
        "heuristic_sqlite_runs_per_s_rounds": _rounds(figures["heuristic"]),
        "langgraph_sqlite_runs_per_s": _median(figures["node"]),
        "langgraph_sqlite_runs_per_s_rounds": _rounds(figures["node"]),
        "langgraph_sqlite_per_tool_call_runs_per_s": _median(figures["tool"]),
        "langgraph_sqlite_per_tool_call_runs_per_s_rounds": _rounds(figures["tool"]),
        "langgraph_checkpoint_bytes_per_run": round(node_bytes),
        "langgraph_per_tool_call_checkpoint_bytes_per_run": round(tool_bytes),
        "peer_tool_calls_per_run": len(outputs["tool_outputs"]),
        "peer_state_json_bytes": len(json.dumps(outputs)),
    }


async def profile(captured: CapturedRun, *, runs: int = 10) -> ProfileSummary:
    """A cProfile of our in-process runs with the SQLite store: ``runs`` scripted ones, then ``runs`` heuristic."""
    with tempfile.TemporaryDirectory(prefix="bench-peer-profile-") as tmp:
        repository = await open_repository(f"sqlite+aiosqlite:///{Path(tmp) / 'ours.db'}", owner="bench")
        base = orchestrator(repository)
        made = 0
        try:

            def make() -> Orchestrator:
                nonlocal made
                made += 1
                if made > runs + 2:
                    return base  # the heuristic half
                return Orchestrator(
                    store=repository,
                    provider=scripted_provider(captured),
                    tools_for=base.tools_for,
                    nodes=base.nodes,
                    catalog=base.catalog,
                )

            await _ours_per_s(make, 2)
            what = f"{runs} scripted then {runs} heuristic in-process runs with the SQLite store"
            return await profile_async(lambda: _ours_per_s(make, 1), ops=2 * runs, what=what)
        finally:
            await repository.close()
