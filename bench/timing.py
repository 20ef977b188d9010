"""Small timing helpers: best-of-N wall time per operation, bounded in count and time."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable


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
