"""A run store behind the event hub's followers: every event committed before it is published, as the
orchestrator does; a run status; a count of the reads a follower makes."""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.api.hub import EventHub


def event(sequence: int, run_id: str) -> run_pb2.OrchestrationEvent:
    return run_pb2.OrchestrationEvent(run_id=run_id, sequence=sequence, node=run_pb2.NODE_NAME_PLANNER)


class FakeStore:
    """``reads`` counts the event reads, and the status reads too with ``count_status_reads``."""

    def __init__(self, run_id: str, *, count_status_reads: bool = False) -> None:
        self.run_id = run_id
        self.count_status_reads = count_status_reads
        self.events: list[run_pb2.OrchestrationEvent] = []
        self.status = run_pb2.RUN_STATUS_RUNNING
        self.reads = 0

    async def get_run(self, run_id: str, *, tenant: str | None = None) -> run_pb2.DiagnosisRun | None:
        if self.count_status_reads:
            self.reads += 1
        return run_pb2.DiagnosisRun(run_id=run_id, status=self.status)

    async def list_events(
        self, run_id: str, *, after_sequence: int = 0, limit: int = 1000
    ) -> list[run_pb2.OrchestrationEvent]:
        self.reads += 1
        return [e for e in self.events if e.sequence > after_sequence][:limit]

    async def list_tool_invocations(self, run_id: str) -> list[contracts_pb2.ToolInvocation]:
        return []  # no tool calls: the followers' replays derive no tool call events

    def watch_run(self, run_id: str) -> None:
        return None  # followers poll, as on SQLite

    def commit(self, hub: EventHub, sequence: int) -> None:
        self.events.append(event(sequence, self.run_id))
        hub.publish(event(sequence, self.run_id))
