"""A loopback HTTP server answering from recorded responses: the Kubernetes API server and Loki for the tests.

``FakeUpstream(handler)`` serves on 127.0.0.1 on a free port in a thread; ``handler(request)`` returns
(status, headers, body). Every request is kept (method, path, query, headers) for the tests to assert on.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


Response = tuple[int, dict[str, str], bytes]
Handler = Callable[[Request], Response]


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode()


def text_response(status: int, text: str) -> Response:
    return status, {"Content-Type": "text/plain; charset=utf-8"}, text.encode()


@dataclass
class FakeUpstream:
    handler: Handler
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        upstream = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
                request = Request("GET", parts.path, query, {k.lower(): v for k, v in self.headers.items()})
                upstream.requests.append(request)
                status, headers, body = upstream.handler(request)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
