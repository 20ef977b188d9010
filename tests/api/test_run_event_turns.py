"""A run's task gives its watchers a turn after each event it publishes: every subscriber waiting on the run takes
the event (and a WatchRun stream sends it) before the run's next node runs, however long that node computes.

Without that turn a run whose nodes never wait (an in-process agent, a store on the event loop) holds the loop
from one event to the next, and its watchers get its events in a burst behind the run's CPU.
"""

from __future__ import annotations

import asyncio

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.agents.base import Agent, AgentReply, AgentRequest, AgentRole
from diagnosis_server.api.hub import EventHub, Signal, Subscription
from diagnosis_server.api.metrics import Metrics
from diagnosis_server.api.runs import RunManager
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import MemoryStore
from tests.support.fakes import PassProvider, tools_for


class _Noting:
    """PassProvider's agents, each call noting how many of the run's events the watcher has taken by then."""

    name = "noting"

    def __init__(self, taken: list[int]) -> None:
        self._inner = PassProvider()
        self._taken = taken
        self.at_call: dict[AgentRole, int] = {}

    def agent(self, role: AgentRole) -> Agent:
        inner, taken, at_call = self._inner.agent(role), self._taken, self.at_call

        class Noted:
            async def run(self, request: AgentRequest) -> AgentReply:
                at_call[role] = len(taken)
                return await inner.run(request)

        return Noted()


async def _take(subscription: Subscription, taken: list[int]) -> None:
    while (item := await subscription.next()) is not Signal.END:
        if isinstance(item, run_pb2.OrchestrationEvent):
            taken.append(item.sequence)


@pytest.mark.parametrize("watchers", [1, 3])
async def test_every_watcher_takes_each_event_before_the_next_node_runs(watchers: int) -> None:
    """Planner, Executor, Gatekeeper, Builder, Verifier, Composer publish events 1..6 in turn: when the Executor's
    agent is called the watchers hold event 1, the Verifier's 1-4, the Composer's 1-5 (nothing in these agents or
    in the in-memory store waits, so no other turn of the loop comes in between)."""
    store = MemoryStore(owner="test")
    hub = EventHub()
    taken: list[list[int]] = [[] for _ in range(watchers)]
    provider = _Noting(taken[-1])
    runs = RunManager(
        Orchestrator(store=store, provider=provider, tools_for=tools_for),
        store,
        hub,
        Metrics(),
        max_concurrent_runs=1,
    )
    started = runs.start(question="Why is checkout-api failing?", scenario="", tenant="")
    others = [hub.subscribe(started.run_id) for _ in range(watchers - 1)]
    takers = [asyncio.create_task(_take(s, t)) for s, t in zip([*others, started.subscription], taken, strict=True)]
    await runs.wait(started.run_id)
    await asyncio.wait_for(asyncio.gather(*takers), timeout=10)

    assert provider.at_call == {"planner": 0, "executor": 1, "verifier": 4, "composer": 5}
    assert taken == [[1, 2, 3, 4, 5, 6]] * watchers
    stored = await store.get_run(started.run_id)
    assert stored is not None and stored.status == run_pb2.RUN_STATUS_SUCCESS
