"""Which RUNNING runs are orphans, decided without comparing two clocks (R-S-3).

A heartbeat stamp is another process's wall clock: read against this one's (skewed, or stepped back or
forward) it says nothing about how long ago it was written. So a stamp is only a token here: a run of
another owner is an orphan once this process has watched its heartbeat go unchanged (same owner, same
stamp) for ``stale_after_s`` of its own monotonic clock, and every renewal starts the watch again. A run of
this owner is judged from what this process knows: one it neither created nor took over belongs to a
previous life of the owner (an orphan at once), and one whose task is no longer alive (``LiveRuns``, taken
on the same monotonic clock) is an orphan if it existed when the live runs were counted.

Only time this process could watch counts: after the store failed it (hung or down, when nobody's heartbeat
could be written or read), every watch starts again at its next look, so the runs whose owners renew as soon
as the store is back are never swept for the outage.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from diagnosis_server.store.base import LiveRuns


@dataclass(frozen=True, slots=True)
class Running:
    """A RUNNING run as the store holds it: its owner and heartbeat stamp (compared only for equality)."""

    run_id: str
    owner: str
    heartbeat: object


class OrphanJudge:
    """One store handle's memory of its own runs and of the leases of other owners' runs it has watched."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        # The runs this handle created or took over, with the monotonic time it did.
        self._mine: dict[str, float] = {}
        # Another owner's run -> (the owner and stamp last seen, the monotonic time they were first seen).
        self._leases: dict[str, tuple[tuple[str, object], float]] = {}
        # Set when the store failed this handle: the watches start again at the next look.
        self._lost_sight = False

    def took(self, run_id: str) -> None:
        self._mine.setdefault(run_id, time.monotonic())

    def lost_sight(self) -> None:
        """The store failed a heartbeat or a sweep: what was watched before says nothing about the outage."""
        self._lost_sight = True

    def released(self, run_ids: Collection[str]) -> None:
        for run_id in run_ids:
            self._mine.pop(run_id, None)

    def orphans(self, running: Iterable[Running], *, stale_after_s: float, live: LiveRuns | None) -> list[Running]:
        """The runs of ``running`` (all RUNNING runs of the store) that nobody runs any more."""
        now = time.monotonic()
        if self._lost_sight:
            self._leases, self._lost_sight = {}, False
        leases: dict[str, tuple[tuple[str, object], float]] = {}
        found: list[Running] = []
        for run in running:
            if run.owner != self.owner:
                token = (run.owner, run.heartbeat)
                seen = self._leases.get(run.run_id)
                since = seen[1] if seen is not None and seen[0] == token else now
                leases[run.run_id] = (token, since)
                if now - since >= stale_after_s:
                    found.append(run)
                continue
            took = self._mine.get(run.run_id)
            if took is None:
                found.append(run)  # a previous life's: nothing of this process runs it
            elif live is not None and run.run_id not in live.run_ids and took < live.at:
                found.append(run)  # its task here is gone (its final write was given up, or it crashed)
        self._leases = leases
        return found
