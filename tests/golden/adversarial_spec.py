"""Reading one case of ``adversarial_cases.toml`` into the agent outputs of its run.

A case names its world and what it adds to the world's clean run:

- ``plant``: tool output appended to the world's (``log`` or ``event``, in the upstream's shape), an excluded
  claim's evidence (``excluded``), an injected instruction (``injected``), the claims of every kind that must
  not be confirmed (``dirty``); ``edit`` and ``append`` change a recorded value in place;
- ``claims``: claims by id, bound to the world's invocations (``[tool, path, text]``, ``"planted"`` for the
  planted entry, ``{at}`` its pointer), riding on a clean fact (``ride``), a clean fact renamed (``from_fact``);
- ``run``: the Executor and Verifier outputs (``adversarial_outputs.run``) with the ``extra`` claims, gaps,
  rationale and Executor additions given; ``patch`` changes them; ``executor``, ``verifier``, ``planner`` and
  ``composer`` list every attempt's output where the case scripts them itself;
- the rest is what ``adversarial_cases.add`` records (vectors, requirements, markers and expectations).

A text is a string, a list of texts (joined), or a table naming what is done to a text: ``rlo`` (written
backwards behind a right-to-left override), ``rli`` (inside a right-to-left isolate), ``fullwidth``, ``zwsp``
(a zero-width space between every two characters), ``cyrillic`` (Cyrillic look-alike letters), ``variant``
(a normalization vector's form), ``statement`` (a claim's statement), ``char`` (one invisible character).
"""

from __future__ import annotations

import json
from typing import Any

from .adversarial_cases import ROUTES, add, fell_back, verified
from .adversarial_outputs import answer, benign_gap, check, dirty_claims, executor, facts_of, gap, riding, run, verifier
from .adversarial_worlds import WORLDS, World, bind, copy, k8s_event, log_line, plant
from .agent_json import Json, claim, composer, item
from .disguises import CYRILLIC, LRO, PDF, PDI, RLI, ZWSP, fullwidth, reversed_behind_override, variant

CHARS = {"ZWSP": ZWSP, "LRO": LRO, "PDF": PDF}
# The keys of a case that ``add`` records as they are, beside those ``build`` reads.
RECORDED = (
    *("vectors", "reqs", "fallback", "excluded", "not_confirmed", "inferred_only"),
    *("inferred_shown", "at_most", "parse_status", "extra_expect"),
)


def _tokens(pointer: str) -> list[str | int]:
    return [int(t) if t.lstrip("-").isdigit() else t for t in pointer.split("/")[1:]]


def set_at(document: Any, pointer: str, value: Any) -> None:
    """Sets the value at the JSON pointer ``pointer`` (a negative index counts from the end)."""
    *parents, last = _tokens(pointer)
    for token in parents:
        document = document[token]
    document[last] = value


def _value_at(document: Any, pointer: str) -> Any:
    for token in _tokens(pointer):
        document = document[token]
    return document


def _patched(document: Json, patches: list[list[Any]]) -> Json:
    out: Json = copy(document)
    for pointer, value in patches:
        set_at(out, pointer, value)
    return out


class Reading:
    """One case being read: its world, its claims by id, and the entry it last planted."""

    def __init__(self, spec: Json) -> None:
        self.spec = spec
        self.world: World = WORLDS[spec["world"]]
        self.claims: dict[str, Json] = {}
        self.target: Json = {}
        self.at = ""

    # ------------------------------------------------------------------ texts, items, gaps, claims
    def text(self, spec: Any) -> str:
        if isinstance(spec, str):
            return spec
        if isinstance(spec, list):
            return "".join(self.text(part) for part in spec)
        if "variant" in spec:
            return variant(spec["variant"], self.text(spec["text"]), spec["marker"])[0]
        ((op, inner),) = spec.items()
        if op == "statement":
            return str(self.claim_of(inner)["statement"])
        if op == "char":
            return CHARS[inner]
        text = self.text(inner)
        if op == "rlo":
            return reversed_behind_override(text)
        if op == "rli":
            return RLI + text + PDI
        if op == "fullwidth":
            return fullwidth(text)
        if op == "zwsp":
            return ZWSP.join(text)
        assert op == "cyrillic", op
        return text.translate(CYRILLIC)

    def claim_of(self, claim_id: str) -> Json:
        """A claim of the case, else a clean claim of the world."""
        if claim_id in self.claims:
            return self.claims[claim_id]
        return next(c for c in [*self.world.facts, self.world.inference] if c["claim_id"] == claim_id)

    def item(self, spec: Any) -> Json:
        if isinstance(spec, str):
            return item(spec)
        if "of" in spec:
            return facts_of(self.claim_of(spec["of"]))[0]
        return item(self.text(spec["text"]), *spec.get("ids", []))

    def items(self, specs: list[Any]) -> list[Json]:
        return [self.item(s) for s in specs]

    def gap(self, spec: Any) -> Json:
        if spec == "benign":
            return benign_gap(self.world)
        description, *rest = spec
        return gap(self.text(description), *rest)

    def gaps(self, specs: list[Any]) -> list[Json]:
        return [self.gap(s) for s in specs]

    def binding(self, spec: Any) -> Json:
        if isinstance(spec, list):
            tool, path, text = spec
            invocation = self.target if tool == "planted" else self.world.inv(tool)
            return bind(invocation, path.replace("{at}", self.at), text)
        if "raw_path" in spec:
            return dict(spec)
        return {**bind(self.world.inv(spec["tool"]), spec["path"], spec["text"]), **spec["set"]}

    def claim(self, spec: Json) -> Json:
        cid = spec["id"]
        if "ride" in spec:
            ride = spec["ride"]
            clause = self.text(ride["clause"])
            return riding(self.world, ride["fact"], clause, critical=spec.get("critical", False), cid=cid)
        if "from_fact" in spec:
            return dict(self.world.facts[spec["from_fact"]], claim_id=cid)
        if "bindings_of" in spec:
            bindings = self.claim_of(spec["bindings_of"])["evidence_bindings"]
        else:
            bindings = [self.binding(b) for b in spec.get("bind", [])]
        statement = self.text(spec["statement"])
        return claim(
            cid, statement, *bindings, critical=spec.get("critical", True), status=spec.get("status", "confirmed")
        )

    # ------------------------------------------------------------------ the world's tool output
    def plant(self, invocations: list[Json], spec: Json) -> list[Json]:
        if "excluded" in spec:
            invs, bad = self.world.excluded_claim(
                invocations, spec["claim"], spec["excluded"], critical=spec["critical"]
            )
            self.claims[bad["claim_id"]] = bad
            return invs
        if "injected" in spec:
            invs, self.target, self.at = self.world.injected(spec["injected"], spec["extra"])
            return invs
        if "dirty" in spec:
            invs, dirty = dirty_claims(self.world, spec["dirty"])
            self.claims.update((c["claim_id"], c) for c in dirty)
            return invs
        if "log" in spec:
            ts, level, message = spec["log"]
            entry = log_line(ts, level, self.text(message), **spec.get("with", {}))
        else:
            entry = k8s_event(*spec["event"])
        invs, self.target, self.at = plant(invocations, spec["tool"], entry)
        return invs

    def invocations(self) -> list[Json]:
        invocations = self.world.invocations
        for p in self.spec.get("plant", []):
            invocations = self.plant(invocations, p)
        if "edit" in self.spec or "append" in self.spec:
            invocations = copy(invocations)
        for pointer, value in self.spec.get("edit", []):
            set_at(invocations, pointer, value)
        for pointer, value in self.spec.get("append", []):
            set_at(invocations, pointer, _value_at(invocations, pointer) + value)
        return invocations

    # ------------------------------------------------------------------ the agents' outputs
    def run(self, spec: Json, verdict: str) -> tuple[Json, Json]:
        extra = [(self.claims[cid], cls) for cid, cls in spec.get("extra", [])]
        executor_extra = {
            k: self.text(v) if isinstance(v, (str, list)) else v for k, v in spec.get("executor_extra", {}).items()
        }
        return run(
            self.world,
            spec.get("verdict", verdict),
            *extra,
            gaps=self.gaps(spec.get("gaps", [])),
            rationale=spec.get("rationale", ""),
            executor_gaps=self.gaps(spec.get("executor_gaps", [])),
            executor_extra=executor_extra,
            inference=spec.get("inference", True),
        )

    def answer(self, spec: Json, verdict: str) -> Json:
        summary = self.text(spec["summary"]) if "summary" in spec else None
        return answer(
            self.world,
            spec.get("verdict", verdict),
            summary=summary,
            facts=self.items(spec.get("facts", [])),
            dirs=self.items(spec.get("dirs", [])),
            gaps=self.items(spec.get("gaps", [])),
            steps=self.items(spec.get("steps", [])),
            clean=spec.get("clean", True),
        )

    def composer_output(self, spec: Any, verdict: str) -> Any:
        if isinstance(spec, str):
            return spec
        if "composer" in spec:
            raw = spec["composer"]
            return composer(self.text(raw["summary"]), self.items(raw.get("facts", [])))
        out = self.answer(spec["answer"], verdict)
        if "truncate" in spec:  # a reply cut short
            return json.dumps(out)[: -spec["truncate"]]
        return {**out, **spec.get("merge", {})}

    def executor_output(self, spec: Any, ran: Json) -> Any:
        if spec == "run":
            return ran
        return executor(*(self.claims[c] for c in spec["claims"]), gaps=self.gaps(spec.get("gaps", [])))

    def verifier_output(self, spec: Any, ran: Json, verdict: str) -> Any:
        if spec == "run":
            return ran
        if isinstance(spec, str):
            return spec
        if "patch" in spec:
            return _patched(ran, spec["patch"])
        if "run" in spec:
            return self.run(spec["run"], verdict)[1]
        checks = [check(self.claim_of(cid), cls) for cid, cls in spec["checks"]]
        return verifier(checks, spec["verdict"])

    def planner_output(self, spec: Any) -> Any:
        if isinstance(spec, str):
            return spec
        return _patched(self.world.plan, spec["plan"])


def _optional(value: Any) -> Any:
    """TOML has no null: ``false`` stands for none."""
    return None if value is False else value


def build(spec: Json) -> None:
    """Adds the case ``spec`` (kind ``verified``, ``fell_back`` or ``add``)."""
    reading = Reading(spec)
    kind = spec.get("kind", "verified")
    invocations = reading.invocations()
    for c in spec.get("claims", []):
        reading.claims[c["id"]] = reading.claim(c)
    verdict = spec.get("verdict", "PASS")
    ex, ver = reading.run(spec.get("run", {}), verdict)
    patches = spec.get("patch", {})
    ex, ver = _patched(ex, patches.get("executor", [])), _patched(ver, patches.get("verifier", []))
    more: Json = {key: spec[key] for key in RECORDED if key in spec}
    more["invocations"] = invocations
    for key in ("route", "route_prefix"):
        if key in spec:
            value = _optional(spec[key])
            more[key] = ROUTES[value] if isinstance(value, str) else value
    if "effective" in spec:
        more["effective"] = _optional(spec["effective"])
    if "allowed" in spec:
        more["allowed"] = [reading.claim_of(cid) for cid in spec["allowed"]]
    composed = [reading.composer_output(c, verdict) for c in spec.get("composer", [])]
    if "verifier" in spec:
        more["verifier_outputs"] = [reading.verifier_output(v, ver, verdict) for v in spec["verifier"]]
    if "planner" in spec:
        more["planner_outputs"] = [reading.planner_output(p) for p in spec["planner"]]
    executor_outputs = [reading.executor_output(e, ex) for e in spec.get("executor", ["run"])]
    if kind == "verified":
        verified(spec["id"], reading.world, verdict, (ex, ver), composed, **more)
        return
    more["composer_outputs"] = composed
    if kind == "fell_back":
        fallback = more.pop("fallback")
        fell_back(spec["id"], reading.world, fallback, executor_outputs, **more)
    else:
        assert kind == "add", kind
        add(spec["id"], world=reading.world, verdict=verdict, executor_outputs=executor_outputs, **more)
