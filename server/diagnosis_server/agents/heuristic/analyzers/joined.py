"""How a cluster analyzer states what it found: the workload, the fault, and the object that shows it, bound.

A joined cause reads "<workload> <fault phrase>: <what the objects show>", then the controller's own text quoted
in parentheses when there is one. The part before the parentheses holds no quote, so the cause claim
(``findings.cause_statement``) keeps the object's facts whole. An ended condition is context with its time
(``ended``): a SUPPORT finding whose ``ends`` names the kind of finding it settles.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from diagnosis_server.agents.heuristic.findings import Finding, Role, excerpt, one_line, quote
from diagnosis_server.agents.heuristic.observations import Binding

JOINED = 5
MAX_SAID = 160


def joined(
    kind: str,
    service: str,
    phrase: str,
    facts: str,
    bindings: Iterable[Binding],
    *,
    said: str = "",
    role: Role = Role.CAUSE,
    strength: int = JOINED,
    onset: datetime | None = None,
    pod: str = "",
) -> Finding:
    statement = f"{service} {phrase}: {facts}"
    if said:
        statement += f" ({quote(one_line(excerpt(said, MAX_SAID)))})"
    return Finding(
        kind=kind,
        role=role,
        service=service,
        statement=statement,
        bindings=tuple(dict.fromkeys(bindings)),
        strength=strength if role is Role.CAUSE else min(strength, 1),
        onset=onset,
        pod=pod,
    )


def said_binding(bind: Binding, message: str) -> tuple[str, Binding | None]:
    """The start of a message a statement quotes and its binding (a substring of the bound text)."""
    said = excerpt(message, MAX_SAID)
    if not said:
        return "", None
    return said, Binding(bind.invocation_id, bind.tool_name, bind.raw_path, said)
