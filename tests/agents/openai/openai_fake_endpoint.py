"""A small OpenAI-compatible endpoint on a loopback port, for the openai provider's tests.

POST /v1/chat/completions answers from a per-role script (replies or callables, consumed in order),
then from the role's default behaviour: a realistic agent over the checkout-oom scenario. The role of a
request is told by its system message (the rendered catalog prompt). Every request is recorded, so a
test can assert what was sent (model, response_format, tools, messages) and how often.

The default Executor is a real tool-calling loop: it first asks for the plan's tool calls, then builds
its executor_evidence_v2 JSON from the tool results it received in the conversation, so its bindings
carry the invocation ids the run's tool runner made.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from diagnosis_server.agents.base import AGENT_ROLES
from diagnosis_server.agents.prompts import PLACEHOLDER, default_catalog

ROLES = AGENT_ROLES
DEFAULT_MODEL = "fake-model"
PROMPT_TOKENS = 11
COMPLETION_TOKENS = 7


# ------------------------------------------------------------------------------------------ replies
@dataclass
class Reply:
    status: int = 200
    body: Any = None
    raw: bytes | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def _completion(message: dict[str, Any], finish_reason: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": PROMPT_TOKENS,
            "completion_tokens": COMPLETION_TOKENS,
            "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
        },
    }


def answer(content: str | dict[str, Any], *, model: str = DEFAULT_MODEL, finish_reason: str = "stop") -> Reply:
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(body=_completion({"role": "assistant", "content": text}, finish_reason, model))


_call_ids = itertools.count(1)


def tool_calls(*calls: tuple[str, dict[str, Any] | str], model: str = DEFAULT_MODEL) -> Reply:
    """An assistant turn calling functions: (function name, arguments object or raw argument text)."""
    items = [
        {
            "id": f"call_{next(_call_ids)}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for name, args in calls
    ]
    return Reply(body=_completion({"role": "assistant", "content": None, "tool_calls": items}, "tool_calls", model))


def error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> Reply:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return Reply(status=status, body={"error": {"message": message, "type": kind, "param": param, "code": code}})


def refusal(text: str = "I can't help with that request.") -> Reply:
    message = {"role": "assistant", "content": None, "refusal": text}
    return Reply(body=_completion(message, "stop", DEFAULT_MODEL))


def content_filter() -> Reply:
    return Reply(body=_completion({"role": "assistant", "content": ""}, "content_filter", DEFAULT_MODEL))


def slow(seconds: float, reply: Reply) -> Reply:
    return Reply(status=reply.status, body=reply.body, raw=reply.raw, delay_s=seconds, headers=reply.headers)


def malformed() -> Reply:
    return answer("Sure! The checkout service looks unhealthy; I would restart it.")


# ------------------------------------------------------------------------------------------ requests
def _prompt_parts() -> dict[str, tuple[str, str]]:
    catalog = default_catalog()
    parts: dict[str, tuple[str, str]] = {}
    for role in ROLES:
        prefix, _, suffix = catalog.prompt(role).text.partition(PLACEHOLDER)
        parts[role] = (prefix, suffix)
    return parts


@dataclass
class Call:
    """One recorded request."""

    index: int
    role: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def model(self) -> str:
        return str(self.body.get("model"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        return next((str(m.get("content")) for m in self.messages if m.get("role") == "system"), "")

    @property
    def response_format_type(self) -> str | None:
        fmt = self.body.get("response_format")
        return fmt.get("type") if isinstance(fmt, dict) else None

    @property
    def function_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.body.get("tools") or []]

    def input(self) -> dict[str, Any]:
        """The node's input JSON, cut out of the rendered prompt."""
        prefix, suffix = _prompt_parts()[self.role]
        text = self.system[len(prefix) : len(self.system) - len(suffix) if suffix else None]
        value: dict[str, Any] = json.loads(text)
        return value

    def tool_results(self) -> list[dict[str, Any]]:
        return [json.loads(m["content"]) for m in self.messages if m.get("role") == "tool"]


Behaviour = Callable[[Call], Reply]


# ------------------------------------------------------------------------------------------ default agents
def plan_default(call: Call) -> Reply:
    data = call.input()
    if data.get("mode") == "EVIDENCE_GAP_ONLY":
        steps = [
            {
                "tool_name": "logs.search",
                "arguments": {"service": "web-frontend", "query": "POST /api/checkout", "level": "ERROR", "limit": 5},
                "purpose": "the symptom the gap names",
            }
        ]
    else:
        steps = [
            {
                "tool_name": "k8s.events",
                "arguments": {"service": "checkout-api", "reason": "OOMKilled"},
                "purpose": "kills",
            },
            {
                "tool_name": "k8s.events",
                "arguments": {"service": "checkout-api", "reason": "BackOff"},
                "purpose": "loops",
            },
        ]
    return answer({"steps": steps})


_POINTERS = {"k8s.events": ("events", "message"), "logs.search": ("lines", "message")}


def evidence_from_results(results: list[dict[str, Any]]) -> dict[str, Any]:
    """An executor_evidence_v2 whose claims restate the first record of each tool result, bound to it."""
    claims: list[dict[str, Any]] = []
    for result in results:
        pointer = _POINTERS.get(result.get("tool_name", ""))
        output = result.get("output")
        if pointer is None or not isinstance(output, dict) or not output.get(pointer[0]):
            continue
        text = output[pointer[0]][0][pointer[1]]
        claims.append(
            {
                "claim_id": f"c{len(claims) + 1}",
                "statement": text,
                "critical": True,
                "status": "confirmed",
                "evidence_bindings": [
                    {
                        "source_invocation_ids": [result["invocation_id"]],
                        "tool_name": result["tool_name"],
                        "raw_path": f"/{pointer[0]}/0/{pointer[1]}",
                        "matched_text": text,
                    }
                ],
            }
        )
    return {"contract": "executor_evidence_v2", "claims": claims, "evidence_gaps": []}


def execute_default(call: Call) -> Reply:
    results = call.tool_results()
    if not results and call.body.get("tools"):
        steps = call.input()["plan"]["steps"]
        return tool_calls(*((s["tool_name"].replace(".", "__"), s["arguments"]) for s in steps))
    return answer(evidence_from_results(results))


def checks_for(call: Call, classification: str = "direct_observation") -> list[dict[str, Any]]:
    data = call.input()
    evidence = data.get("verified_evidence", [])
    checks = []
    for claim in data["verified_executor_output"]["claims"]:
        refs = [
            {k: e[k] for k in ("claim_id", "source_invocation_id", "tool_name", "raw_path")}
            for e in evidence
            if e["claim_id"] == claim["claim_id"]
        ]
        checks.append(
            {
                "claim_id": claim["claim_id"],
                "classification": classification,
                "critical": bool(claim.get("critical")),
                "evidence_refs": refs,
                "rationale": "the matched text states it",
            }
        )
    return checks


def verify_default(call: Call) -> Reply:
    return answer(
        {
            "claim_checks": checks_for(call),
            "verdict": "PASS",
            "groundedness_score": 0.9,
            "rationale": "every critical claim is observed in its verified evidence",
            "evidence_gaps": [],
        }
    )


def compose_default(call: Call) -> Reply:
    material = call.input()
    facts = [{"text": c["statement"], "claim_ids": [c["claim_id"]]} for c in material["confirmed_facts"]]
    directions = [{"text": c["statement"], "claim_ids": [c["claim_id"]]} for c in material["possible_directions"]]
    gaps = [
        {"text": g["description"], "claim_ids": [g["claim_id"]] if g.get("claim_id") else []}
        for g in material["evidence_gaps"]
    ]
    return answer(
        {
            "summary": f"Verdict {material['verdict']}: see the confirmed facts below.",
            "confirmed_facts": facts,
            "possible_directions": directions,
            "evidence_gaps": gaps,
            "next_steps": [{"text": "Watch the pod restarts after the fix.", "claim_ids": []}],
        }
    )


DEFAULTS: dict[str, Behaviour] = {
    "planner": plan_default,
    "executor": execute_default,
    "verifier": verify_default,
    "composer": compose_default,
}


# ------------------------------------------------------------------------------------------ the server
class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            reply = error(404, f"no route {self.path}")
        else:
            reply = fake.handle(json.loads(raw), {k.lower(): v for k, v in self.headers.items()})
        if reply.delay_s:
            fake.stopping.wait(reply.delay_s)
        payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a time-out test)
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI


@dataclass
class FakeOpenAI:
    """Programmable chat-completions endpoint; ``script(role, ...)`` queues replies for that role."""

    behaviours: dict[str, Behaviour] = field(default_factory=lambda: dict(DEFAULTS))
    calls: list[Call] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    reject_json_schema: bool = False
    reject_json_object: bool = False

    def __post_init__(self) -> None:
        self._scripts: dict[str, deque[Reply | Behaviour]] = {role: deque() for role in ROLES}
        self._lock = threading.Lock()
        self._server: _Server | None = None

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        threading.Thread(target=server.serve_forever, args=(0.02,), name="fake-openai", daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    # programming -----------------------------------------------------------------------------
    def script(self, role: str, *replies: Reply | Behaviour) -> None:
        self._scripts[role].extend(replies)

    def calls_of(self, role: str) -> list[Call]:
        return [c for c in self.calls if c.role == role]

    # serving ---------------------------------------------------------------------------------
    def _role(self, body: dict[str, Any]) -> str:
        system = next((str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"), "")
        for role, (prefix, _) in _prompt_parts().items():
            if system.startswith(prefix):
                return role
        return "unknown"

    def handle(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            call = Call(index=len(self.calls), role=self._role(body), body=body, headers=headers)
            self.calls.append(call)
            fmt = call.response_format_type
            if (fmt == "json_schema" and self.reject_json_schema) or (fmt == "json_object" and self.reject_json_object):
                return error(
                    400, f"This model does not support response_format of type '{fmt}'.", param="response_format"
                )
            scripted = self._scripts.get(call.role)
            step: Reply | Behaviour | None = scripted.popleft() if scripted else None
        try:
            if step is None:
                behaviour = self.behaviours.get(call.role)
                if behaviour is None:
                    raise LookupError(f"no behaviour for role {call.role!r}")
                return behaviour(call)
            return step if isinstance(step, Reply) else step(call)
        except Exception as exc:  # a broken test script: reported by the fixture, answered as a 418
            self.errors.append(f"call {call.index} ({call.role}): {type(exc).__name__}: {exc}")
            return error(418, "the fake could not answer")
