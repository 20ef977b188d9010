"""One module a node. ``default_nodes()`` is the graph's node set, keyed by node name."""

from __future__ import annotations

from typing import Any

from diagnosis_server.graph.nodes.base import Node, NodeResult
from diagnosis_server.graph.nodes.builder import VerifiedInputBuilderNode
from diagnosis_server.graph.nodes.composer import ComposerNode
from diagnosis_server.graph.nodes.executor import ExecutorNode
from diagnosis_server.graph.nodes.fallbacks import PostVerificationFallbackNode, PreVerificationFallbackNode
from diagnosis_server.graph.nodes.gatekeeper import GatekeeperNode
from diagnosis_server.graph.nodes.planner import PlannerNode
from diagnosis_server.graph.nodes.verifier import VerifierNode

__all__ = ["Node", "NodeResult", "default_nodes"]


def default_nodes() -> dict[int, Node[Any]]:
    nodes: list[Node[Any]] = [
        PlannerNode(),
        ExecutorNode(),
        GatekeeperNode(),
        VerifiedInputBuilderNode(),
        VerifierNode(),
        ComposerNode(),
        PreVerificationFallbackNode(),
        PostVerificationFallbackNode(),
    ]
    return {node.name: node for node in nodes}
