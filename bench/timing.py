"""Small timing helpers: best-of-N wall or CPU time per operation, bounded in count; percentiles."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Sequence


def per_op(fn: Callable[[], object], *, ops: int, repeats: int = 5) -> float:
    """Best seconds per call of ``fn`` over ``repeats`` rounds of ``ops`` calls (best-of filters noise)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(ops):
            fn()
        best = min(best, (time.perf_counter() - start) / ops)
    return best


async def per_op_async(fn: Callable[[], Awaitable[object]], *, ops: int, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(ops):
            await fn()
        best = min(best, (time.perf_counter() - start) / ops)
    return best


def cpu_per_op(fn: Callable[[], object], *, ops: int, repeats: int = 3) -> float:
    """Best process CPU seconds per call."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(ops):
            fn()
        best = min(best, (time.process_time() - start) / ops)
    return best


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``values``, nearest-rank; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


async def cpu_per_op_async(fn: Callable[[], Awaitable[object]], *, ops: int, repeats: int = 3) -> float:
    """Best process CPU seconds per awaited call (every thread of the process counts, e.g. a driver's)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(ops):
            await fn()
        best = min(best, (time.process_time() - start) / ops)
    return best
