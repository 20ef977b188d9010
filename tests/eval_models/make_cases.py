"""Write the model-answer cases: run the planned tools on each incident's pack, read the outputs, play the agents.

``python -m tests.eval_models.make_cases [INCIDENT ...]`` rewrites ``cases/<incident>.json`` (deterministic). The
plan is what a careful Planner asks of the question and the tools listed (the service's topology, events, logs,
deploys, its namespace's pods and warning events, and its logs in Loki where the pack has them); the Executor adds
the previous container's log of a restarting pod, as a result plainly asks. The claims are written from the facts
the outputs hold (``harvest``), in the three variants' words (``wording``).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tomllib
import zlib
from pathlib import Path
from typing import Any

from diagnosis_server.api.components import pack_tools_for
from diagnosis_server.tools.base import ToolError
from diagnosis_server.tools.scenario import Scenario, load_user_scenarios
from tests.eval_models.harvest import MAX_MATCHED, Fact, Json, Reader, matched
from tests.eval_models.wording import ERRORISH, Untruth, Wording, honest, typical, untrue
from tests.eval_models.wording import quote as wording_quote

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"
INCIDENTS = HERE.parent / "incidents"
PACKS_DIR = INCIDENTS / "packs"
EXPECTED = INCIDENTS / "expected.toml"
KIND_ORDER = ("termination", "waiting", "event", "log", "pod_log", "unscheduled", "pod_status", "limit", "deploy")


# ------------------------------------------------------------------------------------------------ the plan
ERROR_FILTER = "(?i)(error|fatal|panic|exception|refused|timed out|timeout|failed|unavailable|denied)"


def targets(scenario: Scenario, root: str) -> list[str]:
    """The services a Planner looks at: those the question names, then along their dependency chain (what they
    call and what calls them), at most four; the chain reaches the cause's service."""
    services = {s.name: s for s in scenario.topology.services}
    question = scenario.question.lower()
    named = sorted(
        (n for n in services if re.search(rf"(?<![\w-]){re.escape(n.lower())}(?![\w-])", question)),
        key=lambda n: question.index(n.lower()),
    )
    chain = [*named]
    for name in named:
        chain += list(services[name].depends_on)
        chain += [s.name for s in services.values() if name in s.depends_on]
    ordered = list(dict.fromkeys(chain))
    if root not in ordered[:4]:
        ordered = [*[n for n in ordered if n != root][:3], root]
    return ordered[:4] or [root]


def plan_steps(
    scenario: Scenario, tools: dict[str, Any], services: list[str], namespaces: list[str], root_ns: str
) -> list[Json]:
    steps: list[Json] = []

    def add(name: str, arguments: Json, purpose: str) -> None:
        if name in tools:
            steps.append({"tool_name": name, "arguments": arguments, "purpose": purpose})

    first = services[0]
    add("topology.dependencies", {"service": first}, f"What {first} depends on and what calls it.")
    for service in services:
        add("logs.search", {"service": service, "level": "WARN"}, f"Warnings and errors {service} logged.")
    add("k8s.events", {}, "Kubernetes events in the window, to see which objects are failing.")
    add("deploys.list", {}, "Recent rollouts that could have changed behaviour.")
    for namespace in namespaces:
        add("kubernetes.pods", {"namespace": namespace}, f"Pod and container states in {namespace}.")
        add("kubernetes.events", {"namespace": namespace}, f"Events in {namespace}: probes, scheduling, volumes.")
    if root_ns:
        add(
            "loki.query_range",
            {"query": f'{{namespace="{root_ns}"}} |~ `{ERROR_FILTER}`', "limit": 200},
            f"Error lines of {root_ns} in Loki.",
        )
    pods = "|".join(services)
    add(
        "prometheus.query",
        {"query": f'kube_pod_container_status_last_terminated_reason{{pod=~"({pods})-.*"}}'},
        "Why the containers last terminated, from kube-state-metrics.",
    )
    return steps[:16]


async def call(tools: dict[str, Any], name: str, arguments: Json) -> Any:
    try:
        return await tools[name].call(arguments)
    except ToolError:
        return None


async def record(scenario: Scenario, root: str) -> tuple[list[Json], list[Json]]:
    env = pack_tools_for({scenario.name: scenario})(scenario.name)
    tools = dict(env.toolset.as_mapping())
    context: Any = env.context
    kube: Any = context.get("kubernetes") or {}
    all_ns = [str(n) for n in kube.get("namespaces", [])]
    services = targets(scenario, root)
    namespaces: list[str] = []
    for namespace in all_ns:
        pods = await call(tools, "kubernetes.pods", {"namespace": namespace}) if "kubernetes.pods" in tools else None
        text = json.dumps(pods) if pods else ""
        if any(f'"{s}-' in text for s in services):
            namespaces.append(namespace)
    if not namespaces and all_ns:
        namespaces = [str(kube.get("default_namespace") or all_ns[0])]
    namespaces = namespaces[:2]
    root_ns = next((s.labels.get("namespace", "") for s in scenario.topology.services if s.name == root), "")
    root_ns = root_ns or (namespaces[0] if namespaces else str(kube.get("default_namespace") or ""))
    steps = plan_steps(scenario, tools, services, namespaces, root_ns)
    invocations: list[Json] = []
    for step in steps:
        output = await call(tools, step["tool_name"], step["arguments"])
        if output is not None:
            invocations.append(_invocation(len(invocations) + 1, step["tool_name"], step["arguments"], output))
    # The Executor adds the previous container's log of a pod of the service that restarted, as a result asks.
    for fact in [f for inv in invocations for f in Reader(inv).facts()]:
        if (
            fact.kind == "termination"
            and fact.has("namespace")
            and fact.text("pod").startswith(root)
            and "kubernetes.pod_logs" in tools
        ):
            namespace = fact.text("namespace")
            arguments = {
                "namespace": namespace,
                "pod": fact.text("pod"),
                "container": fact.text("container"),
                "previous": True,
            }
            output = await call(tools, "kubernetes.pod_logs", arguments)
            if output is not None and output.get("lines"):
                invocations.append(_invocation(len(invocations) + 1, "kubernetes.pod_logs", arguments, output))
            break
    return steps, invocations


def _invocation(number: int, tool: str, arguments: Json, output: Any) -> Json:
    return {
        "invocation_id": f"inv-{number:04d}",
        "tool_name": tool,
        "arguments": arguments,
        "output": json.loads(json.dumps(output)),
    }


# ----------------------------------------------------------------------------------------- the findings
SLOW = re.compile(r"(?i)duration|elapsed|took \d|in \d+ ?ms|answered in")
QUIET_REASONS = {
    "Pulled",
    "Pulling",
    "Scheduled",
    "Created",
    "Started",
    "Killing",
    "SuccessfulCreate",
    "ScalingReplicaSet",
    "SuccessfulDelete",
    "Completed",
    "SawCompletedJob",
}


def relates(fact: Fact, root: str) -> bool:
    for role in ("service", "object", "pod"):
        if fact.has(role) and (fact.text(role) == root or fact.text(role).startswith(root + "-")):
            return True
    return False


def rank(fact: Fact) -> int:
    return KIND_ORDER.index(fact.kind) if fact.kind in KIND_ORDER else len(KIND_ORDER)


def telling(fact: Fact) -> bool:
    """Whether a fact shows trouble: a warning event, an error line, a waiting or failed container."""
    if fact.kind == "event":
        return (
            fact.has("reason")
            and fact.text("reason") not in QUIET_REASONS
            and (not fact.has("etype") or fact.text("etype") == "Warning")
        )
    if fact.kind in ("log", "pod_log"):
        level = fact.text("level").upper() if fact.has("level") else ""
        return fact.has("message") and level not in ("INFO", "DEBUG") and bool(ERRORISH.search(fact.text("message")))
    if fact.kind == "termination":
        return fact.has("reason") and fact.text("reason") != "Completed"
    return fact.kind in ("waiting", "unscheduled", "pod_status")


def signature(fact: Fact) -> tuple[str, ...]:
    """What makes two facts the same finding (one event read through two tools, say)."""
    return (fact.kind, *(fact.text(r) for r in ("object", "pod", "reason", "message") if fact.has(r)))


def choose(
    facts: list[Fact], root: str, keys: tuple[str, ...]
) -> tuple[list[tuple[Fact, str]], Fact | None, Fact | None]:
    """The key facts (each holding a key evidence text), a symptom fact of the service, a context fact."""
    chosen: list[tuple[Fact, str]] = []
    seen: set[tuple[str, ...]] = set()
    for key in keys:
        holders = [f for f in facts if f.kind not in ("topology", "deploy", "limit") and key in f.haystack()]
        holders.sort(key=lambda f: (not relates(f, root), not telling(f), rank(f)))
        for fact in holders:
            if signature(fact) not in seen:
                chosen.append((fact, key))
                seen.add(signature(fact))
                break
        if len(chosen) == 2:
            break
    symptoms = [f for f in facts if signature(f) not in seen and relates(f, root) and telling(f)]
    kinds = {f.kind for f, _ in chosen}
    symptoms.sort(key=lambda f: (f.kind in kinds, rank(f)))
    symptom = symptoms[0] if symptoms else None
    context = next(
        (f for f in facts if f.kind == "topology" and f.has("service") and (f.has("dep") or f.has("dependent"))), None
    )
    if context is None:
        context = next((f for f in facts if f.kind in ("deploy", "limit") and relates(f, root)), None)
    return chosen, symptom, context


def binding(fact: Fact, role: str, statement: str, key: str) -> Json:
    """A binding as the prompt asks: the value at the pointer, or of a long one the line the statement rests on."""
    leaf = fact.leaves[role]
    text = leaf.text
    if len(text) > MAX_MATCHED:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        quoted = re.findall(r'"([^"]{6,})"', statement)
        text = (
            next((line for line in lines if line in statement), "")
            or next((line for line in lines for q in quoted if q in line), "")
            or matched(text, key)
        )
    return {
        "source_invocation_ids": [leaf.invocation_id],
        "tool_name": leaf.tool_name,
        "raw_path": leaf.path,
        "matched_text": text,
    }


# ------------------------------------------------------------------------------------------------ causes
_EVENT_CAUSES = {
    "FailedScheduling": ("has pods that cannot be scheduled", "can't get its pods scheduled"),
    "NotTriggerScaleUp": ("has pods that cannot be scheduled", "can't get its pods scheduled"),
    "FailedMount": ("has pods that cannot mount a volume", "can't mount its volume"),
    "FailedAttachVolume": ("has pods that cannot attach their volume", "can't attach its volume"),
    "ProvisioningFailed": ("has a volume that cannot be provisioned", "can't get its volume provisioned"),
    "Evicted": ("has pods that were evicted", "keeps getting its pods evicted"),
    "DeadlineExceeded": ("has a job that ran past its deadline", "had a job that didn't finish within its deadline"),
    "BackoffLimitExceeded": ("has a job that failed", "had a job that gave up after its retries"),
    "FailedCreate": ("has pods that cannot be created", "can't create its pods"),
    "OOMKilling": ("has processes that were killed for memory", "keeps getting OOM-killed"),
}


def excerpt(fact: Fact, key: str) -> str:
    """What a cause quotes: the key text when it reads as an error, else the message line that holds it."""
    line = wording_quote(fact, key)
    readable = len(key) >= 12 and " " in key and not key.startswith('"')
    return key if readable or len(line) > 120 else line


def cause_phrase(fact: Fact, key: str, root: str, style: str) -> tuple[str, list[str]]:
    """What the service suffers, as a cause (a predicate of the service), from its key fact; the roles it binds."""
    k, typical_style = fact.kind, style == "typical"
    named = ["service"] if fact.has("service") else []
    if k == "termination":
        reason = fact.text("reason")
        roles = [*named, "pod", "reason", "code"]
        if typical_style:
            return (f"keeps getting {reason}" if reason == "OOMKilled" else f"keeps exiting with {reason}"), roles
        return f"has containers that terminated with {reason}", roles
    who = {"event": "object", "log": "service", "pod_log": "pod"}.get(k, "pod")
    roles = list(dict.fromkeys([*named, who, "reason", "message"]))
    text = excerpt(fact, key) if fact.has("message") else key
    reason = fact.text("reason") if fact.has("reason") else ""
    if k == "unscheduled":
        reason = "FailedScheduling"
    if k == "event" and reason == "Unhealthy":
        probe = next((p for p in ("Liveness", "Readiness", "Startup") if p.lower() in fact.text("message").lower()), "")
        return (
            f'fails its {probe.lower()} probe ("{text}")'
            if not typical_style
            else f"keeps failing its {probe.lower()} probe: {text}"
        ), roles
    if reason in _EVENT_CAUSES:
        honest_words, typical_words = _EVENT_CAUSES[reason]
        return (f'{honest_words} ("{text}")' if not typical_style else f"{typical_words}: {text}"), roles
    image = "image" in text.lower() or "ErrImagePull" in text or reason in ("ErrImagePull", "ImagePullBackOff")
    if image:
        return (f'cannot pull its image ("{text}")' if not typical_style else f"can't pull its image ({text})"), roles
    slow = bool(SLOW.search(text))
    if typical_style:
        return (f"is slow: its logs show {text}" if slow else f"keeps failing with {text}"), roles
    return (f'is slow ("{text}")' if slow else f'fails with "{text}"'), roles


def caller_of(fact: Fact, root: str) -> str:
    """The service whose output shows the failure, when it is not the cause's service (a caller's log)."""
    if fact.has("service") and not relates(fact, root):
        return fact.text("service")
    return ""


def cause_claim(fact: Fact, key: str, root: str, seed: int, style: str) -> Wording:
    phrase, roles = cause_phrase(fact, key, root, style)
    caller = caller_of(fact, root)
    if caller:
        text = excerpt(fact, key)
        honest_options = [
            f'Calls from {caller} to {root} fail with "{text}", which explains the observed symptoms',
            f'{root} is the root cause of the reported problem: {caller} fails with "{text}" when it calls it',
        ]
        typical_options = [
            f"{caller} can't talk to {root} ({text}), and that's the root cause.",
            f"{root} is what's broken: {caller}'s calls to it fail with {text}.",
        ]
        options = honest_options if style == "honest" else typical_options
        return Wording(
            options[seed % len(options)],
            ["service", "message"],
            ["causal conclusion"] if style == "honest" else ["possessive", "contraction", "unquoted"],
        )
    if style == "honest":
        options = [
            f"{root} {phrase}, which explains the observed symptoms",
            f"{root} {phrase}; this is the root cause of the reported problem",
            f"The root cause of the reported problem is that {root} {phrase}",
        ]
    else:
        options = [
            f"{root} is the problem: it {phrase}.",
            f"Root cause: {root} {phrase}, and that's what users are seeing.",
            f"{root}'s failure comes down to this: it {phrase}.",
        ]
    statement = options[seed % len(options)]
    return Wording(statement, roles, ["causal conclusion"] if style == "honest" else noticed(statement))


def noticed(statement: str) -> list[str]:
    """The imperfections a typical cause statement shows."""
    found = []
    if re.search(r"\w's\b(?! a)", statement) and "it's" not in statement:
        found.append("possessive")
    if re.search(r"n't|it's|that's|what's", statement):
        found.append("contraction")
    if re.search(r"[-a-z]+-[a-z]+", statement.split(":")[-1]):
        found.append("hyphenated word")
    if not re.search(r'"', statement):
        found.append("unquoted message")
    if statement.endswith("."):
        found.append("trailing period")
    return found


def invented_cause(fact: Fact, key: str, root: str, herring: str) -> Untruth:
    phrase, roles = cause_phrase(fact, key, root, "honest")
    return Untruth(
        f"{herring} is the root cause: {root} {phrase} since {herring} stopped answering",
        roles,
        "invented cause",
        f"the cause is {root}'s own: no recorded output ties the failure to {herring}",
    )


# ------------------------------------------------------------------------------------------------- a case
def claim(cid: str, wording: Wording | Untruth, fact: Fact, critical: bool, key: str, also: Json | None = None) -> Json:
    bound = [binding(fact, role, wording.statement, key) for role in wording.roles if role in fact.leaves]
    if also is not None and all(
        also["raw_path"] != b["raw_path"] or also["source_invocation_ids"] != b["source_invocation_ids"] for b in bound
    ):
        bound.append(also)
    return {
        "claim_id": cid,
        "statement": wording.statement,
        "critical": critical,
        "status": "confirmed",
        "evidence_bindings": bound,
    }


def build(name: str, scenario: Scenario, expected: Json, steps: list[Json], invocations: list[Json]) -> Json | None:
    truth = scenario.truth
    assert truth is not None and truth.root_cause.service
    root = truth.root_cause.service
    seed = zlib.crc32(name.encode())
    facts = [f for inv in invocations for f in Reader(inv).facts()]
    chosen, symptom, context = choose(facts, root, tuple(truth.key_evidence))
    if not chosen:
        return None
    herrings = list(expected.get("red_herring_services", ())) or [s for s in scenario.service_names if s != root]
    pods = sorted(
        {
            f.text(r)
            for f in facts
            for r in ("pod", "object")
            if f.has(r) and not f.text(r).startswith(root) and "-" in f.text(r)
        }
    )
    other_pod = pods[seed % len(pods)] if pods else None
    # What the outputs record, so that an untruth is checked false: (pod or object, reason) pairs, and all texts.
    recorded_pairs = {
        (f.text(r), f.text("reason")) for f in facts for r in ("pod", "object") if f.has(r) and f.has("reason")
    }
    texts = [leaf.text for f in facts for leaf in f.leaves.values()]

    # (claim id, fact, critical, role): the symptom first, the key observations, context, then the cause.
    slots: list[tuple[str, Fact, bool, str, str]] = []
    if symptom is not None:
        slots.append(("symptom", symptom, True, "observation", ""))
    for fact, key in chosen:
        slots.append(("key", fact, True, "observation", key))
    if context is not None:
        slots.append(("context", context, False, "observation", ""))
    cause_fact, cause_key = chosen[0]
    # A cause names its service: a careful Executor binds a value that holds the name when the key fact does not.
    root_leaf = next(
        (
            f.leaves[r]
            for f in facts
            for r in ("service", "dep", "dependent")
            if r in f.leaves and f.leaves[r].text == root
        ),
        None,
    )
    also = None
    if root_leaf is not None and not any(root in leaf.text for leaf in cause_fact.leaves.values()):
        also = {
            "source_invocation_ids": [root_leaf.invocation_id],
            "tool_name": root_leaf.tool_name,
            "raw_path": root_leaf.path,
            "matched_text": root_leaf.text,
        }

    variants: Json = {}
    for variant in ("honest", "typical", "untrue"):
        claims: list[Json] = []
        marks: Json = {}
        target = _untrue_target(slots, seed) if variant == "untrue" else None
        for n, (slot, fact, critical, _, key) in enumerate(slots, start=1):
            cid = f"c{n}"
            written = typical(fact, seed + n, key) if variant == "typical" else honest(fact, seed + n, key)
            wording: Wording | Untruth = written
            mark: Json = {"true": True, "slot": slot}
            if variant == "typical":
                mark["imperfections"] = written.imperfections
            if target == n:
                mine = {fact.text(r) for r in ("service", "pod", "object") if fact.has(r)}
                others = [h for h in herrings if h not in mine and h != root] or [
                    o for o in scenario.service_names if o not in mine and o != root
                ]
                reason = fact.text("reason") if fact.has("reason") else ""
                wrong_pod = other_pod if (other_pod, reason) not in recorded_pairs else None
                lie = untrue(fact, seed + n, key, wrong_pod, others)
                if lie is not None and not still_true(lie, texts):
                    wording = lie
                    mark = {"true": False, "slot": slot, "untruth": lie.kind, "why": lie.why, "critical": critical}
            claims.append(claim(cid, wording, fact, critical, key))
            marks[cid] = mark
        cause_id = f"c{len(slots) + 1}"
        style = "typical" if variant == "typical" else "honest"
        cause: Wording | Untruth = cause_claim(cause_fact, cause_key, root, seed, style)
        cause_mark: Json = {"true": True, "slot": "cause"}
        if variant == "typical" and isinstance(cause, Wording):
            cause_mark["imperfections"] = cause.imperfections
        if variant == "untrue" and not any(not m["true"] for m in marks.values()):
            herring = herrings[seed % len(herrings)]
            cause = invented_cause(cause_fact, cause_key, root, herring)
            cause_mark = {"true": False, "slot": "cause", "untruth": cause.kind, "why": cause.why, "critical": True}
        claims.append(claim(cause_id, cause, cause_fact, True, cause_key, also))
        marks[cause_id] = cause_mark
        variants[variant] = {
            "executor": {"contract": "executor_evidence_v2", "claims": claims, "evidence_gaps": []},
            "marks": marks,
            "cause_claim": cause_id,
            "verifier": {
                c["claim_id"]: {
                    "classification": "reasonable_inference" if c["claim_id"] == cause_id else "direct_observation",
                    "rationale": "Follows from the observations it is bound to."
                    if c["claim_id"] == cause_id
                    else "Its bound output states it.",
                }
                for c in claims
            },
            "composer": {
                "summary": f"{root}: the evidence points at one cause.",
                "headline": cause_id,
                "order": [c["claim_id"] for c in claims if c["claim_id"] != cause_id],
            },
        }
    return {
        "incident": name,
        "question": scenario.question,
        "scenario": name,
        "root_service": root,
        "plan": {"steps": steps},
        "tool_invocations": invocations,
        "variants": variants,
    }


def still_true(lie: Untruth, texts: list[str]) -> bool:
    """Whether a changed quote happens to be recorded after all (then it is no untruth)."""
    quoted = re.findall(r'"([^"]{6,})"', lie.statement)
    return lie.kind == "wrong error code" and any(q in t for q in quoted for t in texts)


def _untrue_target(slots: list[tuple[str, Fact, bool, str, str]], seed: int) -> int | None:
    """Which claim is false: rotating over the observations (a critical or a context one) and the cause (None)."""
    choices: list[int | None] = [*range(1, len(slots) + 1), None]
    return choices[seed % len(choices)]


async def main_async(names: list[str]) -> int:
    scenarios = load_user_scenarios(PACKS_DIR)
    expected = tomllib.loads(EXPECTED.read_text(encoding="utf-8"))
    CASES_DIR.mkdir(exist_ok=True)
    wanted = names or sorted(n for n, s in scenarios.items() if s.truth is not None and s.truth.root_cause.service)
    written = 0
    for name in wanted:
        scenario = scenarios[name]
        assert scenario.truth is not None and scenario.truth.root_cause.service, name
        steps, invocations = await record(scenario, scenario.truth.root_cause.service)
        case = build(name, scenario, expected.get(name, {}), steps, invocations)
        if case is None:
            print(f"{name}: no key evidence in the planned tools' outputs, no case", file=sys.stderr)
            continue
        path = CASES_DIR / f"{name}.json"
        path.write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written += 1
    print(f"{written} case files in {CASES_DIR}")
    return 0


def main() -> int:
    return asyncio.run(main_async(sys.argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main())
