"""The guarded Verifier: whichever Verifier ran (a model, a script, the embedded one), no claim is classified
above what its verified evidence shows (R-V-1..R-V-5).

After the Verifier's claim checks are parsed, the deterministic checks run on the same verified input and
each claim's classification becomes the lowest of:

- the Verifier's own classification;
- the derivability check (``verification.derivability``): a fabricated fact is ``contradicted``, nothing
  concrete is ``unsupported``, words beyond the evidence are ``overstated``, a conclusion is at most a
  ``reasonable_inference``;
- ``unsupported`` when a binding of the claim failed the Gatekeeper (its Executor asserted text that is not
  in the output), when its evidence reads as an instruction (``evidence.instruction_text``), or when its
  statement holds bidi control characters (it would read differently from what it holds).

Each lowering is recorded as a ClassificationChange from the guard. ``fabricated`` names the critical claims whose
statement names a fact no recorded output of the run holds, or one its evidence contradicts: such a run is
REJECT (R-V-4). A non-critical claim that fails is excluded by itself, its reason recorded; it never decides the
run's verdict. A fact of the run's outputs that the claim did not bind makes it ``unsupported``, never
``contradicted``: the audit says where the fact was found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonValue, value_text
from diagnosis_server.gatekeeper.pointer import PointerError, is_array_index, resolve
from diagnosis_server.gatekeeper.rules import INSTRUCTION_TEXT
from diagnosis_server.protocols.facts import derive_facts_checked
from diagnosis_server.text.normalize import has_bidi_control
from diagnosis_server.verification.derivability import Record, RunEvidence

_C = contracts_pb2.ClaimClassification
GUARD_SOURCE = "guard"
# The longest string a bound excerpt stands for whole (a log line, an event's message).
_WHOLE_STRING = 4096
# The type or status of one of an object's status conditions (Kubernetes' ``status.conditions[i]``).
_CONDITION_FIELD = re.compile(r"/conditions/\d+/(type|status)$")

_RANK: dict[int, int] = {
    _C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION: 5,
    _C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE: 4,
    _C.CLAIM_CLASSIFICATION_OVERSTATED: 3,
    _C.CLAIM_CLASSIFICATION_UNSUPPORTED: 2,
    _C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN: 2,
    _C.CLAIM_CLASSIFICATION_CONTRADICTED: 0,
}


def rank(classification: int) -> int:
    """How strong a classification is; an unspecified or unknown one is weaker than any (fail closed)."""
    return _RANK.get(classification, -1)


@dataclass(frozen=True, slots=True)
class Ceiling:
    """The strongest classification the evidence allows one claim, and why."""

    classification: int
    reason: str
    fabricated: bool
    # A conclusion shown only as a possible direction (``Derivation.direction_only``).
    direction_only: bool = False


class Ceilings:
    """The ceilings of a verified input's claims: its evidence and its Gatekeeper audit read once for all of them
    (``RunEvidence``; the claims whose binding failed; the evidence items that read as instructions).

    ``bound_values`` are the whole recorded values its evidence was found in, by (invocation id, raw path):
    they may ground a statement's words (a log line's other words), never its facts.
    """

    def __init__(
        self,
        verifier_input: contracts_pb2.VerifierInput,
        bound_values: Mapping[tuple[str, str], str] | None = None,
    ) -> None:
        self._question = verifier_input.diagnosis_context.question
        evidence = verifier_input.verified_evidence
        self._evidence = RunEvidence(evidence)
        audit = verifier_input.gatekeeper_audit.checked_bindings
        self._failed = {b.claim_id for b in audit if not b.passed}
        values = bound_values or {}
        instructions = {i for i, b in enumerate(audit) if INSTRUCTION_TEXT in b.warning_rules}
        # The whole recorded outputs (the value at the empty pointer of each invocation), where a fact the claim
        # did not bind may stand.
        self._outputs = {invocation: text for (invocation, path), text in values.items() if path == ""}
        self._documents: dict[str, JsonValue] = {}
        self._names: frozenset[str] | None = None
        # Per claim: its values' texts (grounding), the outputs it bound, and whether any of its evidence reads
        # as an instruction.
        self._grounding: dict[str, list[str]] = {}
        self._bound_outputs: dict[str, set[str]] = {}
        # The list each bound array element stands in (a count of its items is a fact of the claim).
        self._lists: dict[str, list[str]] = {}
        self._conditions: dict[str, list[str]] = {}
        self._instruction: set[str] = set()
        # Per claim, per (invocation, condition's path): the condition's type and status it bound.
        conditions: dict[str, dict[tuple[str, str], dict[str, str]]] = {}
        # Per claim: each bound scalar as "name: value" (its polarity and counts are facts of the claim).
        self._fields: dict[str, list[str]] = {}
        # Per claim: the records it bound (the list element each value stands in, or the whole output), named.
        self._scopes: dict[str, dict[str, Record]] = {}
        # Per claim: the whole text of each string it bound an excerpt of (a message cut short): a fact of the
        # very value at the pointer it bound is a fact of its bound text.
        self._whole: dict[str, list[str]] = {}
        # Per claim: what its bindings name besides their values (the tool, the pointer's keys), and the counts it
        # may state (how many items of one list it bound: "the 3 pods" it names).
        self._named: dict[str, list[str]] = {}
        self._stated: dict[str, list[str]] = {}
        self._counts: dict[str, set[int]] = {}
        taken: dict[str, dict[tuple[str, str], set[str]]] = {}
        self._paths: dict[str, list[str]] = {}
        for e in evidence:
            claim_id = e.claim_id
            self._paths.setdefault(claim_id, []).append(e.raw_path)
            self._named.setdefault(claim_id, []).extend(_names_of(e))
            siblings = self._siblings(e.source_invocation_id, e.raw_path)
            self._named[claim_id].extend(siblings)
            # What the value is a field of says its state too (an event's reason beside its message).
            self._stated.setdefault(claim_id, []).extend(siblings)
            for parent, index, _ in self._arrays_along(e.source_invocation_id, e.raw_path):
                taken.setdefault(claim_id, {}).setdefault((e.source_invocation_id, parent), set()).add(index)
            if (sibling := self._pair_sibling(e.source_invocation_id, e.raw_path)) is not None:
                self._whole.setdefault(claim_id, []).append(sibling)
            if (condition := _CONDITION_FIELD.search(e.raw_path)) is not None and e.matched_text:
                where = (e.source_invocation_id, e.raw_path[: condition.start()])
                conditions.setdefault(claim_id, {}).setdefault(where, {})[condition.group(1)] = e.matched_text
            grounding = self._grounding.setdefault(claim_id, [])
            self._bound_outputs.setdefault(claim_id, set()).add(e.source_invocation_id)
            if (key := (e.source_invocation_id, e.raw_path)) in values:
                grounding.append(values[key])
            # The bound scalar as "name: value" (its whole value where known, else what the claim matched).
            if (named := _field_of(e.raw_path, values.get(key, e.matched_text))) is not None:
                self._fields.setdefault(claim_id, []).append(named)
            if (whole := self._whole_string(e)) is not None:
                self._whole.setdefault(claim_id, []).append(whole)
            elif _whole_value(values.get(key), e.matched_text):
                # (the whole value at the pointer, as recorded for the run when its output is not at hand)
                self._whole.setdefault(claim_id, []).append(values[key])
            if (scope := self._scope_of(e)) is not None:
                self._scopes.setdefault(claim_id, {}).setdefault(scope.name, scope)
                # A value of a record is said of what the record is of (a log line of its stream's app, a field of
                # its pod, an event of its object and its reporter): the record's names are the claim's own evidence.
                self._named[claim_id].extend(scope.identity)
                self._named[claim_id].extend(_described(self._element(scope)))
            if (items := self._list_of(e.source_invocation_id, e.raw_path)) is not None:
                self._lists.setdefault(claim_id, []).append(items)
            if e.checked_binding_index in instructions:
                self._instruction.add(claim_id)
        for claim_id, lists in taken.items():
            self._counts.setdefault(claim_id, set()).update(
                len(indexes) for indexes in lists.values() if len(indexes) > 1
            )
        # Per claim: each list it bound a value of every element of ("all 3 pods are OOMKilled"): its count, and
        # what every item holds, are facts of the claim (never its polarity: the items' other fields are unbound).
        self._covered = {claim_id: self._covered_lists(scopes.values()) for claim_id, scopes in self._scopes.items()}
        # A condition read whole ("Ready: Unknown"): its type alone ("Ready") takes no stance, its status does.
        for claim_id, bound in conditions.items():
            for fields in bound.values():
                if "type" in fields and "status" in fields:
                    self._conditions.setdefault(claim_id, []).append(f"{fields['type']}: {fields['status']}")

    def _run_names(self) -> frozenset[str]:
        """The names of the run's things: what its outputs' name fields hold (services, apps, pods, containers,
        jobs, nodes, dependencies, log streams' and series' labels). A word a conclusion blames that is one of them
        is a name, however ordinary a word it is ("psp", "search")."""
        if self._names is None:
            found: set[str] = set()
            for invocation_id in self._outputs:
                _collect_names(self._document(invocation_id), "", found)
            self._names = frozenset(found)
        return self._names

    def _document(self, invocation_id: str) -> JsonValue:
        if invocation_id not in self._documents:
            self._documents[invocation_id] = _parsed(self._outputs[invocation_id])
        return self._documents[invocation_id]

    def _arrays_along(self, invocation_id: str, raw_path: str) -> list[tuple[str, str, int]]:
        """(the array's pointer, the index taken, its size) of each array ``raw_path`` passes through."""
        if invocation_id not in self._outputs or not raw_path:
            return []
        document = self._document(invocation_id)
        out: list[tuple[str, str, int]] = []
        keys = raw_path.split("/")[1:]
        node: JsonValue = document
        for depth, key in enumerate(keys):
            token = key.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list) and is_array_index(token) and int(token) < len(node):
                out.append(("/" + "/".join(keys[:depth]), token, len(node)))
                node = node[int(token)]
            elif isinstance(node, dict) and token in node:
                node = node[token]
            else:
                break
        return out

    def _element(self, record: Record) -> JsonValue:
        try:
            return resolve(self._document(record.output), record.pointer)
        except PointerError:
            return None

    def _siblings(self, invocation_id: str, raw_path: str) -> list[str]:
        """The name, type and kind beside a bound value in its object (a condition's ``type`` beside its ``reason``,
        a container's ``name`` beside its ``restartCount``): what the value is a field of."""
        parent = raw_path.rpartition("/")[0]
        if invocation_id not in self._outputs or not raw_path:
            return []
        try:
            holder = resolve(self._document(invocation_id), parent)
        except PointerError:
            return []
        if not isinstance(holder, dict):
            return []
        return _strings(holder, ("name", "type", "kind", "reason"))

    def _pair_sibling(self, invocation_id: str, raw_path: str) -> str | None:
        """The other element of a pair a bound value stands in (a Loki line's timestamp, a Prometheus sample's
        time): what the output writes of that very line or sample."""
        parent, _, last = raw_path.rpartition("/")
        if last not in ("0", "1") or invocation_id not in self._outputs:
            return None
        try:
            pair = resolve(self._document(invocation_id), parent)
        except PointerError:
            return None
        if not isinstance(pair, list) or len(pair) != 2 or any(isinstance(v, (dict, list)) for v in pair):
            return None
        # A pair opens with its time (Loki's nanoseconds as a string, Prometheus' seconds): two log lines are not one.
        if not _TIME_OF_PAIR.fullmatch(value_text(pair[0])):
            return None
        return value_text(pair[1 - int(last)])

    def _list_of(self, invocation_id: str, raw_path: str) -> str | None:
        """The JSON text of the array that ``raw_path`` (an element of it) stands in, or None."""
        parent, _, last = raw_path.rpartition("/")
        if not is_array_index(last) or invocation_id not in self._outputs:
            return None
        try:
            found = resolve(self._document(invocation_id), parent)
        except PointerError:
            return None
        return value_text(found) if isinstance(found, list) else None

    def _whole_string(self, evidence: contracts_pb2.VerifiedEvidence) -> str | None:
        """The whole string at a bound pointer whose excerpt the claim bound (one message, one log line, at most
        ``_WHOLE_STRING`` characters), or None: a list, an object or a whole output is never one value's text."""
        if evidence.source_invocation_id not in self._outputs or not evidence.raw_path:
            return None
        try:
            found = resolve(self._document(evidence.source_invocation_id), evidence.raw_path)
        except PointerError:
            return None
        if not isinstance(found, str) or len(found) > _WHOLE_STRING or found == evidence.matched_text:
            return None
        return found

    def _covered_lists(self, records: Iterable[Record]) -> list[str]:
        """The JSON text of each outermost list whose every element is a record among ``records``."""
        elements: dict[tuple[str, str], set[str]] = {}
        for record in records:
            if record.pointer:
                parent, _, index = record.pointer.rpartition("/")
                elements.setdefault((record.output, parent), set()).add(index)
        out = []
        for (invocation_id, parent), indexes in elements.items():
            try:
                found = resolve(self._document(invocation_id), parent)
            except PointerError:
                continue
            if isinstance(found, list) and indexes == {str(i) for i in range(len(found))}:
                out.append(value_text(found))
        return out

    def _scope_of(self, evidence: contracts_pb2.VerifiedEvidence) -> Record | None:
        """The record a bound value stands in, named, with its text: the element of the output's outermost list
        that holds it (an event, a pod, a log stream), or the whole output for a value outside any list."""
        invocation_id = evidence.source_invocation_id
        if invocation_id not in self._outputs:
            return None
        keys = evidence.raw_path.split("/")
        index = next((i for i, key in enumerate(keys) if i and is_array_index(key)), None)
        tool = evidence.tool_name or "tool"
        document = self._document(invocation_id)
        # A value outside any list stands in the output's own fields (a log output's pod and container), not in
        # the records its lists hold (each of its lines is a record of its own).
        own: str | None = None
        if isinstance(document, dict) and any(isinstance(v, list) for v in document.values()):
            # A value outside any list stands in the output's own fields (a log output's pod and container): its
            # stances are theirs, not those of the records its lists hold (each log line is a record of its own).
            header: JsonValue = {k: v for k, v in document.items() if not isinstance(v, list)}
            own = _leaves(header)
        whole = Record(
            invocation_id,
            f"the whole {tool} output ({invocation_id})",
            self._outputs[invocation_id],
            identity=_identity(document),
            stated=own,
        )
        if index is None:
            return whole
        pointer = "/".join(keys[: index + 1])
        try:
            found = resolve(self._document(invocation_id), pointer)
        except PointerError:
            return whole
        return Record(invocation_id, f"{tool} ({invocation_id}) {pointer}", _leaves(found), pointer, _identity(found))

    def of(self, claim: contracts_pb2.Claim) -> Ceiling:
        """The deterministic ceiling of one verified claim (see the module docstring)."""
        claim_id = claim.claim_id
        values = self._grounding.get(claim_id)
        if values is None:
            return Ceiling(_C.CLAIM_CLASSIFICATION_UNSUPPORTED, "no verified evidence for this claim", False)
        mine = self._bound_outputs.get(claim_id, set())
        outputs = (
            (
                [text for invocation, text in self._outputs.items() if invocation in mine],
                [text for invocation, text in self._outputs.items() if invocation not in mine],
            )
            if self._outputs
            else None
        )
        derivation = self._evidence.derive_claim(
            claim,
            grounding=values,
            question=self._question,
            bound=[
                *values,
                *self._conditions.get(claim_id, ()),
                *self._fields.get(claim_id, ()),
                *self._stated.get(claim_id, ()),
            ],
            lists=self._lists.get(claim_id, ()),
            fields=self._fields.get(claim_id, ()),
            scopes=list(self._scopes.get(claim_id, {}).values()),
            whole=self._whole.get(claim_id, ()),
            names=list(dict.fromkeys(self._named.get(claim_id, ()))),
            covered=self._covered.get(claim_id, ()),
            outputs=outputs,
            counts=self._counts.get(claim_id, set()),
            run_names=self._run_names(),
            run_records=[r for other, scopes in self._scopes.items() if other != claim_id for r in scopes.values()],
            paths=self._paths.get(claim_id, ()),
        )
        ceiling = Ceiling(
            derivation.classification, derivation.reason(), derivation.fabricated, derivation.direction_only
        )
        capped = _C.CLAIM_CLASSIFICATION_UNSUPPORTED
        if rank(ceiling.classification) <= rank(capped):
            return ceiling
        if has_bidi_control(claim.statement):
            return Ceiling(capped, "its statement holds bidi control characters", ceiling.fabricated)
        if claim_id in self._instruction:
            return Ceiling(
                capped, "its evidence reads as an instruction to the diagnosis, not as an observation", False
            )
        if claim_id in self._failed:
            return Ceiling(capped, "a binding of this claim failed the Gatekeeper", False)
        return ceiling


# The first element of a [time, value] pair: seconds or nanoseconds since the epoch, or an RFC 3339 time.
_TIME_OF_PAIR = re.compile(r"\d{9,20}(?:\.\d{1,9})?|\d{4}-\d\d-\d\d[T ][\d:.]{5,18}(?:Z|[+-]\d\d:?\d\d)?")


# The labels of a log stream or a series that name what it is of.
_IDENTITY_LABELS = ("pod", "app", "service", "container", "job", "instance", "deployment", "statefulset", "node")


_NAME_KEYS = frozenset(
    {"service", "app", "name", "pod", "container", "job", "component", "deployment", "statefulset", "daemonset",
     "node", "host", "depends_on", "dependents", "services", "upstream", "target"}
)  # fmt: skip
_SIMPLE_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


@lru_cache(maxsize=64)
def _parsed(output: str) -> JsonValue:
    """A recorded output's document, read once for a run's guards (each reads it; none changes it)."""
    try:
        parsed: JsonValue = json.loads(output)
    except ValueError:
        return None
    return parsed


def _collect_names(value: JsonValue, key: str, found: set[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _collect_names(v, k, found)
    elif isinstance(value, list):
        for v in value:
            _collect_names(v, key, found)
    elif isinstance(value, str) and key in _NAME_KEYS and 3 <= len(value) <= 63 and _SIMPLE_NAME.fullmatch(value):
        found.add(value)


def _leaves(element: JsonValue) -> str:
    """A record as its facts are looked for in it: each scalar as "key: value", one a line (a string as written, not
    JSON-escaped: a quoted message is found as the claim quotes it)."""
    lines: list[str] = []

    def walk(value: JsonValue, key: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif value is not None:
            lines.append(f"{key}: {value_text(value) if not isinstance(value, str) else value}")

    walk(element, "")
    return "\n".join(lines)


def _identity(element: JsonValue) -> tuple[str, ...]:
    """The names a list element is of, the most specific ones: an object's name (``metadata.name``), an event's
    object (``involvedObject.name``, a pack event's ``object``), a record's ``pod`` or ``name``; else what it is of
    more broadly (a log stream's or series' pod, app or service labels, a record's ``service`` or ``app``)."""
    if not isinstance(element, dict):
        return ()
    out: list[str] = []
    for key in ("metadata", "involvedObject", "regarding"):
        holder = element.get(key)
        if isinstance(holder, dict):
            out += _strings(holder, ("name",))
    out += _strings(element, ("object", "pod", "name"))
    if not out:
        for key in ("stream", "metric"):
            labels = element.get(key)
            if isinstance(labels, dict):
                out += _strings(labels, _IDENTITY_LABELS)
        out += _strings(element, ("service", "app"))
    return tuple(dict.fromkeys(v for v in out if v))


def _described(element: JsonValue) -> list[str]:
    """What an element says it is besides its names: its kind, and who reported it (an event's source component
    and reporting controller, its object's kind)."""
    if not isinstance(element, dict):
        return []
    out = _strings(element, ("kind", "reportingComponent", "reportingController", "service", "app"))
    for key in ("stream", "metric"):
        labels = element.get(key)
        if isinstance(labels, dict):
            out += _strings(labels, _IDENTITY_LABELS)
    for key in ("involvedObject", "regarding", "source"):
        holder = element.get(key)
        if isinstance(holder, dict):
            out += _strings(holder, ("kind", "component", "host"))
    return out


def _strings(holder: dict[str, JsonValue], keys: Iterable[str]) -> list[str]:
    """The string values of ``holder`` under ``keys``, in their order."""
    return [value for key in keys if isinstance(value := holder.get(key), str)]


def _whole_value(value: str | None, matched: str) -> bool:
    """A recorded value the matched text is an excerpt of, and one string of text (no object or list)."""
    if not value or value == matched:
        return False
    return len(value) <= _WHOLE_STRING and value.lstrip()[:1] not in ("{", "[")


def _names_of(evidence: contracts_pb2.VerifiedEvidence) -> list[str]:
    """What a binding names besides its value: its tool, and the keys of its pointer (``restartCount``,
    ``nodeSelector``, ``app.kubernetes.io/name``): a statement may name the field it read."""
    keys = [k.replace("~1", "/").replace("~0", "~") for k in evidence.raw_path.split("/")[1:]]
    return [evidence.tool_name, *(k for k in keys if k and not is_array_index(k))]


def _field_of(raw_path: str, value: str) -> str | None:
    """A bound scalar as "name: value" ("restartCount: 4", "ready: false"), named by its pointer's last key."""
    keys = [k.replace("~1", "/").replace("~0", "~") for k in raw_path.split("/")[1:] if not is_array_index(k)]
    if not keys or not value or len(value) > 80 or "\n" in value or value.lstrip().startswith(("{", "[")):
        return None
    return f"{keys[-1]}: {value}"


def claim_ceiling(
    claim: contracts_pb2.Claim,
    verifier_input: contracts_pb2.VerifierInput,
    bound_values: Mapping[tuple[str, str], str] | None = None,
) -> Ceiling:
    """The deterministic ceiling of one verified claim (``Ceilings``, for one claim)."""
    return Ceilings(verifier_input, bound_values).of(claim)


def guard_claim_checks(
    output: contracts_pb2.VerifierOutput,
    verifier_input: contracts_pb2.VerifierInput,
    bound_values: Mapping[tuple[str, str], str] | None = None,
) -> tuple[contracts_pb2.VerifierOutput, frozenset[str]]:
    """A copy of ``output`` with every classification capped by its claim's ceiling (each change recorded),
    and the ids of the claims that fabricate a fact."""
    claims = {claim.claim_id: claim for claim in verifier_input.verified_executor_output.claims}
    ceilings = Ceilings(verifier_input, bound_values)
    guarded = contracts_pb2.VerifierOutput()
    guarded.CopyFrom(output)
    fabricated: set[str] = set()
    changed = False
    for check in guarded.claim_checks:
        claim = claims.get(check.claim_id)
        if claim is None:
            continue
        ceiling = ceilings.of(claim)
        if ceiling.fabricated and claim.critical:
            # Only a critical claim decides the run's verdict (R-V-4); another is excluded by itself.
            fabricated.add(claim.claim_id)
        if rank(check.classification) <= rank(ceiling.classification):
            continue
        guarded.classification_changes.append(
            contracts_pb2.ClassificationChange(
                claim_id=check.claim_id,
                from_classification=check.classification,
                to_classification=ceiling.classification,  # type: ignore[arg-type]
                reason=ceiling.reason[:300],
                source=GUARD_SOURCE,
                direction_only=ceiling.direction_only,
            )
        )
        check.classification = ceiling.classification  # type: ignore[assignment]
        changed = True
    if changed:
        # facts_checked follows the guarded classifications (R-V-6).
        del guarded.facts_checked[:]
        guarded.facts_checked.extend(derive_facts_checked(guarded.claim_checks, list(claims.values())))
    return guarded, frozenset(fabricated)


def lowest_classification(classifications: Sequence[int]) -> int:
    return min(classifications, key=rank)
