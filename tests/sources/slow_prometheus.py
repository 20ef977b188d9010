"""A slow loopback Prometheus HTTP API: each answer after a set delay, counting requests and calls in flight."""

from __future__ import annotations

import threading
import time

from .fake_http import FakeUpstream, Request, Response, json_response


class SlowPrometheus:
    """A loopback Prometheus HTTP API whose answer to ``query`` comes after ``delays[query]`` seconds (default
    ``delay_s``), naming the query in the sample's labels; it counts requests and the most in flight at once."""

    def __init__(self, delay_s: float, delays: dict[str, float] | None = None) -> None:
        self.delay_s = delay_s
        self.delays = delays or {}
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self.upstream = FakeUpstream(self._answer)

    def _answer(self, request: Request) -> Response:
        query = request.query.get("query", "")
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            time.sleep(self.delays.get(query, self.delay_s))
        finally:
            with self._lock:
                self._in_flight -= 1
        result = [{"metric": {"query": query}, "value": [time.time(), "1"]}]
        return json_response(200, {"status": "success", "data": {"resultType": "vector", "result": result}})

    @property
    def requests(self) -> int:
        return len(self.upstream.requests)
