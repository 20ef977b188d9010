"""The `heuristic` provider: the embedded default, four deterministic agents that diagnose honestly.

They read only their input projection and, for the Executor, the outputs of the tool calls it makes
through the run's tool runner; never a scenario file, its ``truth`` block or its name. They keep no
state between calls, so one provider serves any number of concurrent runs. The same input (and the
same tool outputs) gives the same reply.
"""

from __future__ import annotations

from diagnosis_server.agents.base import Agent, AgentRole
from diagnosis_server.agents.heuristic.analyzers.rules import current_rules
from diagnosis_server.agents.heuristic.composer import HeuristicComposer, compose
from diagnosis_server.agents.heuristic.diagnosis import Assessment, assess, detect
from diagnosis_server.agents.heuristic.executor import HeuristicExecutor
from diagnosis_server.agents.heuristic.findings import Finding, Role
from diagnosis_server.agents.heuristic.gaps import NextCall, format_next, parse_next, strip_next
from diagnosis_server.agents.heuristic.planner import HeuristicPlanner, full_plan, gap_plan
from diagnosis_server.agents.heuristic.verifier import HeuristicVerifier, verify

__all__ = [
    "Assessment",
    "Finding",
    "HeuristicComposer",
    "HeuristicExecutor",
    "HeuristicPlanner",
    "HeuristicProvider",
    "HeuristicVerifier",
    "NextCall",
    "Role",
    "assess",
    "compose",
    "create_provider",
    "detect",
    "format_next",
    "full_plan",
    "gap_plan",
    "parse_next",
    "strip_next",
    "verify",
]


class HeuristicProvider:
    """The four heuristic agents; stateless, so one instance serves concurrent runs."""

    name = "heuristic"

    def __init__(self) -> None:
        self._agents: dict[AgentRole, Agent] = {
            "planner": HeuristicPlanner(),
            "executor": HeuristicExecutor(),
            "verifier": HeuristicVerifier(),
            "composer": HeuristicComposer(),
        }

    def agent(self, role: AgentRole) -> Agent:
        return self._agents[role]


def create_provider() -> HeuristicProvider:
    """The provider, once the rules in force load: an operator's bad rules file (``RulesError``, a ValueError
    naming the file and the field) stops start-up instead of failing every run's Executor."""
    current_rules()
    return HeuristicProvider()
