"""The heuristic analyses run off the event loop (issue 33 item 4): while the Executor analyses large crafted
outputs, the loop that serves health checks and other calls keeps turning."""

from __future__ import annotations

import asyncio
import time

from diagnosis_server.agents.heuristic.executor import HeuristicExecutor
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.tools.base import Toolset

from ..agents.heuristic._support import Recorded, executor_payload, request

_PODS = [f"checkout-api-7f9c6d8b5-{suffix}" for suffix in ("tr6zn", "x2kqp", "m8w4d", "b5c7f", "q9r2s", "z4t6v")]


def _crafted_line(i: int) -> str:
    # Long lines that touch many rules' first words without matching them, then a real error at the end.
    filler = " ".join(f"timed out lookup no such host connect{i % 7} refused" for _ in range(40))
    return (
        f"2026-12-02T12:00:{i % 60:02d}Z ERROR {filler} dial tcp orders-db.shop.svc:5432: connect: connection refused"
    )


class _Logs:
    name = "kubernetes.pod_logs"
    description = "a pod's log lines"

    @property
    def input_schema(self) -> JsonObject:
        return {"type": "object"}

    async def call(self, arguments: JsonObject) -> JsonValue:
        pod = str(arguments.get("pod"))
        lines: list[JsonValue] = [_crafted_line(i) for i in range(120)]
        return {"namespace": "shop", "pod": pod, "container": "app", "previous": False, "lines": lines}


async def test_the_loop_keeps_turning_while_the_executor_analyses() -> None:
    recorded = Recorded(Toolset([_Logs()]))
    steps: list[JsonValue] = [
        {"tool_name": "kubernetes.pod_logs", "arguments": {"namespace": "shop", "pod": pod}} for pod in _PODS
    ]
    agent_request = request("executor", executor_payload(steps), tools=recorded.runner())
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    started = time.perf_counter()
    reply = await HeuristicExecutor().run(agent_request)
    took = time.perf_counter() - started
    done.set()
    await ticking
    assert "connection refused" in reply.text  # the analysis ran and found the lines' failure
    assert len(recorded.invocations) == len(_PODS)
    # The loop turned all along: no pause near the 1 s a health check may wait, whatever the analysis took.
    assert max(gaps) < 0.5, (max(gaps), took)
