"""Every bound of a run and of a read, defined once: the graph's, its agents' and tools', a CheckEvidence
request's, the read RPCs' pages.

``Limits`` holds a run's bounds (the graph specification carries its defaults, the server sets the backoff
from its settings) and what one CheckEvidence request may hold; the page sizes bound what one read returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Limits:
    # Node attempts of one run before it is ended through the pre-verification fallback (R-R-7).
    recursion_limit: int = 25
    # Orchestration events kept in a run's state (later ones are counted as dropped).
    max_events: int = 64
    agent_timeout_s: float = 60.0
    # The Executor's attempt covers its whole tool-calling loop, so it gets a longer bound.
    executor_timeout_s: float = 300.0
    tool_timeout_s: float = 10.0
    max_tool_output_bytes: int = 256 * 1024
    max_tool_calls: int = 64
    # Independent tool calls of one Executor step run concurrently: at most this many at once in a run, and
    # at most max_concurrent_calls_per_source of them on one source (one Prometheus, one cluster, ...).
    max_concurrent_tool_calls: int = 8
    max_concurrent_calls_per_source: int = 4
    # The first technical retry's backoff after a transient failure (doubling, jittered, at least any
    # Retry-After, at most the node's timeout); 0 retries at once. The server sets it from its settings.
    retry_backoff_s: float = 0.0
    # What one CheckEvidence request may hold, so that its cost is bounded (not only its 4 MiB size).
    check_max_invocations: int = 256
    check_max_claims: int = 256
    check_max_bindings: int = 1024
    check_max_source_ids: int = 2048
    check_max_response_bytes: int = 1 << 20


DEFAULT_LIMITS: Final = Limits()

# A read RPC's page (AIP-158): 0 asks for the default, more than the maximum gets the maximum.
DEFAULT_PAGE_SIZE: Final = 20
MAX_PAGE_SIZE: Final = 100
