"""A run's CPU work off the event loop, on a thread of its own, so health checks and every other call
answer while runs compute (issue 33, item 4).

The nodes' pure parts (the Gatekeeper's checks, the verified-input builder, the derivability guard, parsing and
rendering, the heuristic agents' analyses) run here through ``off_loop``; their awaits (the store, the tools)
stay on the loop. The node's task awaits each piece, so a run's steps stay in order and its state is touched by
one thread at a time: the same calls in the same order as on the loop, with the same results.

Why a pool of its own, of one thread: under the GIL a worker hands the interpreter back every switch interval
(5 ms), but when several threads compute the loop thread is only one of those waiting for it, and each of its
turns (a poll, a callback) waits behind all of them. Measured with six runs over 12 KB hostile log lines at
once on 2 cores: health checks answered in 30 ms (median) and at most 0.2-0.5 s with one thread, 0.1-0.25 s
(median) and up to 0.9 s with two, and more threads compute no faster (the GIL admits one at a time). The
price: runs' CPU pieces take turns in order, so a long piece of one run delays the others' (never the loop).
The switch interval stays Python's: one thread keeps each of the loop's waits within one interval.
Blocking I/O (a Kubernetes client call, a file) keeps the loop's default executor, never queued behind CPU
work.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

# Threads computing runs' CPU work (a run uses one at a time: it awaits each piece).
CPU_THREADS = 1

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    pool = _pool
    if pool is None:
        with _lock:
            pool = _pool
            if pool is None:
                pool = _pool = ThreadPoolExecutor(max_workers=CPU_THREADS, thread_name_prefix="diagnosis-cpu")
    return pool


def _forget_pool() -> None:
    """In a forked child: the parent's threads do not exist there; a new pool is made on first use."""
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


async def off_loop(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)`` on a CPU thread, in a copy of the calling task's context (its log fields, its
    trace span); its result, or its exception raised here.

    A cancelled caller stops waiting at once; the piece already running finishes on its thread and its result
    is dropped (it writes nothing: every write is the caller's, after the await).
    """
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    return await loop.run_in_executor(_executor(), functools.partial(context.run, fn, *args, **kwargs))
