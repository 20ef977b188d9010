"""The four incidents the adversarial cases run over (``adversarial_worlds.json``), and the tool output a case
plants in one: a log line, a Kubernetes event, an excluded claim's evidence, an injected instruction.

A world is its question, its recorded tool invocations (Kubernetes events, log searches, Prometheus queries,
deploy lists, topology), a plan reading them, three clean observations (c1..c3) and a clean inference (c4),
each bound to the invocations. Its templates say how a case plants material in it: ``excluded`` (a line and a
claim naming ``{marker}``, bound to it), ``injection`` (an instruction naming ``{marker}``, then ``{extra}``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .agent_json import Json, claim

HERE = Path(__file__).resolve().parent

# Where each tool keeps the entries a case may append to.
_LISTS = {"logs.search": "lines", "k8s.events": "items", "deploys.list": "deploys"}


def copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def bind(invocation: Json, path: str, text: str) -> Json:
    return {
        "source_invocation_ids": [invocation["invocation_id"]],
        "tool_name": invocation["tool_name"],
        "raw_path": path,
        "matched_text": text,
    }


def log_line(ts: str, level: str, message: str, **extra: Any) -> Json:
    return {"ts": ts, "level": level, **extra, "message": message}


def k8s_event(kind: str, name: str, typ: str, reason: str, message: str, count: int, first: str, last: str) -> Json:
    return {
        "type": typ,
        "reason": reason,
        "involvedObject": {"kind": kind, "name": name},
        "message": message,
        "count": count,
        "firstTimestamp": first,
        "lastTimestamp": last,
        "source": {"component": "default-scheduler" if reason == "FailedScheduling" else "kubelet"},
    }


def plant(invocations: list[Json], tool: str, entry: Json) -> tuple[list[Json], Json, str]:
    """The invocations with ``entry`` appended to ``tool``'s list: (invocations, the invocation, pointer)."""
    out = copy(invocations)
    target = next(i for i in out if i["tool_name"] == tool)
    items = target["output"][_LISTS[tool]]
    items.append(entry)
    return out, target, f"/{_LISTS[tool]}/{len(items) - 1}"


def _filled(value: Any, **fields: str) -> Any:
    """``value`` with each ``{name}`` of ``fields`` filled in, in every string inside it."""
    if isinstance(value, str):
        for name, text in fields.items():
            value = value.replace("{" + name + "}", text)
        return value
    if isinstance(value, list):
        return [_filled(v, **fields) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, **fields) for k, v in value.items()}
    return value


class World:
    """One incident: its question, recorded invocations, plan, clean observations (c1..c3), a clean inference (c4)."""

    def __init__(self, key: str, spec: Json) -> None:
        self.key = key
        self.question: str = spec["question"]
        self.invocations: list[Json] = spec["invocations"]
        self.facts = [self._claim(c) for c in spec["facts"]]
        self.inference = self._claim(spec["inference"])
        self.benign_gap: list[str] = spec["benign_gap"]
        self._excluded: Json = spec["excluded"]
        self._injection: Json = spec["injection"]
        self.plan = {
            "steps": [
                {"tool_name": i["tool_name"], "arguments": i["arguments"], "purpose": f"read {i['tool_name']}"}
                for i in self.invocations
            ]
        }

    def _claim(self, spec: Json) -> Json:
        by_id = {i["invocation_id"]: i for i in self.invocations}
        bindings = [bind(by_id[invocation], path, text) for invocation, path, text in spec["bind"]]
        return claim(spec["claim_id"], spec["statement"], *bindings, critical=spec.get("critical", True))

    def inv(self, tool: str) -> Json:
        return next(i for i in self.invocations if i["tool_name"] == tool)

    def clean_texts(self) -> list[str]:
        texts = [self.question]
        for c in [*self.facts, self.inference]:
            texts.append(c["statement"])
            texts.extend(b["matched_text"] for b in c["evidence_bindings"])
        texts.extend(i["invocation_id"] for i in self.invocations)
        texts.extend(i["tool_name"] for i in self.invocations)
        return texts

    def excluded_claim(
        self, invocations: list[Json], cid: str, marker: str, *, critical: bool
    ) -> tuple[list[Json], Json]:
        """A claim the Verifier will not allow, each of whose identifiers its own evidence holds: a line naming
        ``marker`` is planted in the tool output and bound (the Verifier judges the claim, no rule does)."""
        template = _filled(self._excluded, marker=marker)
        invs, target, at = plant(invocations, template["tool"], template["entry"])
        bindings = [bind(target, path.replace("{at}", at), text) for path, text in template["bind"]]
        return invs, claim(cid, template["statement"], *bindings, critical=critical)

    def injected(self, marker: str, extra: str) -> tuple[list[Json], Json, str]:
        """The world's tool output with a line that holds an injected instruction naming ``marker`` as the root
        cause, then ``extra``: (invocations, the invocation, pointer)."""
        template = _filled(self._injection, marker=marker, extra=extra)
        return plant(self.invocations, template["tool"], template["entry"])


WORLDS = {
    key: World(key, spec)
    for key, spec in json.loads((HERE / "adversarial_worlds.json").read_text(encoding="utf-8")).items()
}
CHECKOUT, PAYMENTS, ORDERS, SEARCH = (WORLDS[key] for key in ("checkout", "payments", "orders", "search"))
