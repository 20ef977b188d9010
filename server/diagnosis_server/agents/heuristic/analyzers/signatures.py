"""Log analyzers: the lines an operator greps for, from the rules file, turned into findings.

A rule is about the line's own workload (``ENOSPC`` on search-es) or about a target the line names (a service
of the topology, or a host: ``lookup orders-db.shop.svc.cluster.local: no such host``). The statement quotes
the part of the line that matched and binds that exact substring of the line. Besides the rules:

- an ERROR or FATAL line no rule explains, or one without a level whose words report a failure, is a symptom of
  its workload ("logs errors"), quoted;
- a line that reports a call's duration above the slow-call threshold, at any level (INFO included), is a
  symptom ("logs slow calls").

Every line is read once; rules are tried on it through one combined pattern per rule.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from diagnosis_server.agents.heuristic.addresses import Dependencies
from diagnosis_server.agents.heuristic.analyzers.rules import LogRule, Rules, current_rules
from diagnosis_server.agents.heuristic.findings import Finding, Role, one_line, quote
from diagnosis_server.agents.heuristic.findings import excerpt as text_excerpt
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, LogLine

ERROR_LEVELS = frozenset({"ERROR", "FATAL"})
# What a line without a level token says when it reports a failure (most real lines write no level).
_ERROR_TEXT = re.compile(
    r"\b(?:error|exception|traceback|panic|fatal|failed|failure|refused|denied|unavailable|timed out"
    r"|could not|cannot|unable to|unreachable)\b",
    re.IGNORECASE,
)


def reads_as_error(line: LogLine, *, by_text: bool = False) -> bool:
    """Whether a line reports an error: its level says so (ERROR, FATAL), or it writes no level, and then (with
    ``by_text``) its words do. A level only adds: a rule matches a line's text with or without one; only a line
    that says it is routine (INFO, DEBUG, WARN) is not read as an error."""
    if line.level in ERROR_LEVELS:
        return True
    if line.level:
        return False
    return not by_text or _ERROR_TEXT.search(line.message) is not None


_GATEWAY_TIMEOUT = re.compile(r"\b504\b")
_ACCESS_5XX = re.compile(r"HTTP/[\d.]+\" 5\d\d\b")
# A host a failing line names: dial tcp HOST:PORT, lookup HOST, resolve host: HOST, 'HOST', URLs, user@HOST (not
# a JSON key such as "@timestamp"), connect to [host] HOST, connection to server at "HOST".
_HOST = re.compile(
    r"(?:dial tcp |(?P<lookup>lookup )|Could not resolve host: |ENOTFOUND |EAI_AGAIN |host='?|server on '|resolve '|"
    r"connect(?:ion)? to (?:host |server at \"?|node -?\d+ \()?|UnknownHostException: |https?://|(?<=[\w.-])@)"
    r"(?P<host>[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*)",
    re.IGNORECASE,
)
# After ``lookup HOST``, what makes it a resolver's message (Go's ``lookup HOST on 10.96.0.10:53: ...``, ``lookup
# HOST: no such host``, ``lookup HOST: i/o timeout``), not an application's own word ("session lookup failed").
_RESOLVER_TAIL = re.compile(
    r" on \[?[0-9a-f.:]+\]?:\d+\b"
    r"|: (?:no such host|i/o timeout|server misbehaving|Temporary failure in name resolution|Name or service not "
    r"known|no answer from DNS server|operation was canceled|connection refused|read udp |dial udp |"
    r"getaddrinfow?: )",
    re.IGNORECASE,
)
# ``<name>.<namespace>.svc[.cluster.local]``: a Service's in-cluster name, in that namespace.
_SERVICE_HOST = re.compile(
    r"^(?P<name>[a-z0-9][a-z0-9-]*)\.(?P<namespace>[a-z0-9][a-z0-9-]*)\.svc(?:\.cluster\.local)?$"
)
# A host-shaped word where a service name starts in a line.
_HOST_AT = re.compile(r"[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*", re.IGNORECASE)
# Words of a library's message where a host may stand ("could not connect to server: Connection refused"): no host
# unless a workload has that name.
# Words after "connect to" that are English, not a host ("connect to the redis server(s)").
_NOT_HOSTS = frozenset(
    {"server", "host", "the", "a", "an", "any", "all", "some", "this", "that", "its", "their", "our", "your", "remote"}
)
_NOT_ALSO_TIMEOUTS = frozenset({"dns", "app_pool"})
_IP = re.compile(r"^\d+(?:\.\d+){3}$")
# A two-label host is a public name when it ends in a common top-level domain (``api.sendgrid.com``), else
# ``<service>.<namespace>``.
_TLD = re.compile(r"\.(?:com|net|org|io|dev|app|cloud|co|example|test|local|internal|[a-z]{2})$")
_DURATION = re.compile(
    r"(?:took|duration|latency|elapsed|completed in|finished in|responded in|response_time|request_time)"
    # (spaces bounded: two unbounded runs around one separator backtrack quadratically in a long run of spaces)
    r"[\"']?[ \t]{0,8}[=: ][ \t]{0,8}[\"']?(?P<value>\d+(?:\.\d+)?)\s?(?P<unit>ms|s|sec|seconds|milliseconds)\b",
    re.IGNORECASE,
)
# A duration under a key that carries its unit (``"http.resp.took_ms": 2870``, ``duration_s=3.2``).
_KEYED_DURATION = re.compile(
    r"(?:took|duration|latency|elapsed|response_time|request_time)_(?P<unit>ms|s|sec|seconds)[\"']?\s*[=:]\s*"
    r"[\"']?(?P<value>\d+(?:\.\d+)?)(?![\d.])",
    re.IGNORECASE,
)
_MAX_EXCERPT = 120


class ServiceNames:
    """Finds whole service names in text (``warehouse-gateway`` in ``warehouse-gateway.logistics.svc``,
    never in ``warehouse-gateway-config``) with one compiled pattern."""

    def __init__(self, services: Iterable[str], namespaces: Mapping[str, Iterable[str]] | None = None) -> None:
        names = sorted({s for s in services if s}, key=lambda s: (-len(s), s))
        alternation = "|".join(re.escape(name) for name in names)
        self._pattern = re.compile(rf"(?<![A-Za-z0-9-])(?:{alternation})(?![A-Za-z0-9-])") if names else None
        # The namespaces each workload was seen in (its pods, its log streams, the topology's labels).
        self._namespaces = {name: frozenset(found) for name, found in (namespaces or {}).items() if found}

    def knows(self, name: str) -> bool:
        return self._pattern is not None and self._pattern.fullmatch(name) is not None

    def misplaced(self, host: str) -> bool:
        """Whether ``host`` is ``<name>.<namespace>.svc[.cluster.local]`` of a known workload that was seen only in
        other namespaces: a Service name that does not exist (the workload moved, or the caller's namespace is
        wrong), not that workload."""
        match = _SERVICE_HOST.match(host.lower())
        if match is None or not self.knows(match.group("name")):
            return False
        seen = self._namespaces.get(match.group("name"))
        return seen is not None and match.group("namespace") not in seen

    def first_other(self, message: str, own: str) -> str:
        """The first service other than ``own`` named in ``message``, or '' (not a name that only stands in a
        misplaced Service host: ``sms-gateway.comms.svc`` while sms-gateway runs in comms-v2)."""
        if self._pattern is None:
            return ""
        for match in self._pattern.finditer(message):
            name = match.group(0)
            if name == own:
                continue
            host = _HOST_AT.match(message, match.start())
            if host is not None and self.misplaced(host.group(0).rstrip(".")):
                continue
            return name
        return ""


def mentioned(message: str, own: str, services: Sequence[str]) -> str:
    """The first service (other than ``own``) named in ``message`` as a whole name, or ''."""
    return ServiceNames(services).first_other(message, own)


_CLUSTER_SUFFIXES = (".svc", ".svc.cluster.local", ".cluster.local")


def named_host(message: str, own: str, names: ServiceNames | None = None) -> str:
    """What a failing line's host names: the workload of an in-cluster name (``orders-db`` of
    ``orders-db.shop.svc:5432``, of a bare ``orders-db``, or of any host whose first label is a known workload),
    else the whole host (``api.partner.example``: not a workload of ours), or ''."""
    for match in _HOST.finditer(message):
        host = match.group("host").lower().rstrip(".")
        if _IP.match(host) or host in ("localhost", "127.0.0.1"):
            continue
        if host in _NOT_HOSTS and not (names is not None and names.knows(host)):
            continue
        if match.group("lookup") and not _resolver_lookup(message, match, host, names):
            continue
        if names is not None and names.misplaced(host):
            if host.split(".")[0] != own:
                return host
            continue
        name = host.split(".")[0]
        local = "." not in host or host.endswith(_CLUSTER_SUFFIXES) or (host.count(".") == 1 and not _TLD.search(host))
        if names is not None and names.knows(name):
            local = True
        chosen = name if local else host
        if chosen and name != own and len(name) >= 2:
            return chosen
    return ""


def _resolver_lookup(message: str, match: re.Match[str], host: str, names: ServiceNames | None) -> bool:
    """Whether ``lookup HOST`` is a resolver's: HOST has a dot or is a known workload, or the resolver's own words
    follow it (``on 10.96.0.10:53``, ``: no such host``). "session lookup failed" names no host."""
    if "." in host or (names is not None and names.knows(host)):
        return True
    return _RESOLVER_TAIL.match(message, match.end("host")) is not None


# An address a line may dial (a Service's cluster IP, a pod's IP, a host an Ingress routes or a Certificate is
# named after) -> the workload it is and the bindings that show it.
Addresses = Mapping[str, tuple[str, tuple[Binding, ...]]]


def addressed(message: str, own: str, addresses: Addresses) -> tuple[str, str, tuple[Binding, ...]] | None:
    """(ip, workload, bindings) of the first IP the line dials that is a known address of another workload."""
    for match in _HOST.finditer(message):
        host = match.group("host")
        known = addresses.get(host) if _IP.match(host) else None
        if known is not None and known[0] != own:
            return host, known[0], known[1]
    return None


@dataclass(frozen=True, slots=True)
class _Hit:
    """A rule found in a line, before any binding is made (most hits repeat an earlier one)."""

    rule: LogRule
    kind: str
    service: str
    blamed: str
    excerpt: str
    # Set when the finding is about the caller after all (``unknown_host_phrase``, or no target named).
    phrase: str = ""
    role: Role | None = None
    # The target named by an address the line dials, or by the words of the caller's variable that addresses it:
    # those (as the line writes them) and what shows whose it is.
    ip: str = ""
    shown_by: tuple[Binding, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.service, self.blamed)


# A structured (JSON) line's message and error fields: what it says, without its timestamp and caller.
_JSON_MESSAGE = re.compile(r'"(?:msg|message|error|err|exception)"\s*:\s*"((?:[^"\\]|\\.){3,})"')


MAX_PARTS = 2


def message_parts(message: str) -> list[str]:
    """What an error line says, verbatim: for a JSON line, its message and error fields (``invalid
    configuration``, ``required key SMTP_RELAY_HOST missing value``), else its start."""
    if message.lstrip().startswith("{"):
        parts = [text_excerpt(m.group(1), _MAX_EXCERPT) for m in _JSON_MESSAGE.finditer(message)]
        parts = [p for p in dict.fromkeys(parts) if p.strip()]
        if parts:
            return parts[:MAX_PARTS]
    return [text_excerpt(message, _MAX_EXCERPT)]


def _hits(
    line: LogLine,
    names: ServiceNames,
    rules: Rules,
    addresses: Addresses | None = None,
    dependencies: Dependencies | None = None,
) -> list[_Hit]:
    message = line.message
    erroring = reads_as_error(line) or _ACCESS_5XX.search(message) is not None
    out: list[_Hit] = []
    # One hit per kind and line: the first rule of a kind that matches says what the line means (a name that does
    # not exist, not also a name that cannot be resolved).
    kinds: set[str] = set()
    for rule in rules.log:
        if rule.kind in kinds or (rule.errors_only and not erroring):
            continue
        match = rule.compiled.search(message)
        if match is None:
            continue
        excerpt = match.group(0)
        kinds.add(rule.kind)
        if rule.about == "self":
            out.append(_Hit(rule, rule.kind, line.service, "", excerpt))
            continue
        target = names.first_other(message, line.service)
        host = "" if target else named_host(message, line.service, names)
        misplaced = rule.misplaced_host_phrase or rule.unknown_host_phrase
        wrong = ""
        if host and misplaced and names.misplaced(host):
            wrong = misplaced
        elif host and rule.unknown_host_phrase and not names.knows(host):
            wrong = rule.unknown_host_phrase
        if wrong:
            # The workload configured with that host is the one whose setting is wrong (the caller of the line
            # may only relay its failure).
            holder = dependencies.holder(host) if dependencies is not None else None
            if holder is not None and holder.workload != line.service:
                out.append(
                    _Hit(rule, rule.kind, holder.workload, "", excerpt, wrong, ip=host, shown_by=holder.bindings())
                )
            else:
                out.append(_Hit(rule, rule.kind, line.service, "", excerpt, wrong))
            continue
        target = target or host
        ip = ""
        shown_by: tuple[Binding, ...] = ()
        if host and target == host and addresses:
            # A host the outputs show to be a workload's (an Ingress's host, a Certificate named after it).
            owner = addresses.get(host.lower()) or addresses.get(host.lower().replace(".", "-"))
            if owner is not None and owner[0] != line.service:
                ip, target, shown_by = host, owner[0], owner[1]
        if not target and addresses:
            found = addressed(message, line.service, addresses)
            if found is not None:
                ip, target, shown_by = found
        if not target and dependencies is not None and erroring:
            dependency = dependencies.named(" ".join(message_parts(message)), line.service)
            if dependency is not None:
                ip, target, shown_by = dependency
        if not target:
            # The line does not say what it called: its calls fail, the rule's phrase about a target aside.
            if rule.kind != "access_5xx":
                out.append(_Hit(rule, rule.kind, line.service, "", excerpt, "calls fail", Role.SUPPORT))
            continue
        kind = rule.kind
        # A gateway timeout is a timeout, whichever way the caller words it.
        if kind in ("error_status", "access_5xx") and _GATEWAY_TIMEOUT.search(excerpt):
            kind = "timeout"
        if rule.role == "cause":
            out.append(_Hit(rule, kind, target, line.service, excerpt, ip=ip, shown_by=shown_by))
        else:
            out.append(_Hit(rule, kind, line.service, target, excerpt, ip=ip, shown_by=shown_by))
    if kinds & _NOT_ALSO_TIMEOUTS:
        # A lookup that timed out is a DNS failure, a pool that timed out is an empty pool: not also a call that
        # timed out.
        out = [hit for hit in out if hit.kind != "timeout"]
    return out


def _own_finding(line: LogLine, hit: _Hit, role: Role, phrase: str, strength: int) -> Finding:
    """A finding about the line's own workload: what it does (``phrase``), the matched part quoted."""
    return Finding(
        kind=hit.kind,
        role=role,
        service=line.service,
        statement=f"{line.service} {phrase} ({quote(one_line(hit.excerpt))})",
        bindings=(line.bind_service(), line.bind_message(hit.excerpt)),
        strength=strength,
        onset=line.ts,
        detail=hit.excerpt,
        cause_with=hit.rule.cause_with,
        cause_with_own=hit.rule.cause_with_own,
    )


def _finding(line: LogLine, hit: _Hit) -> Finding:
    rule = hit.rule
    quoted = quote(one_line(hit.excerpt))
    if hit.phrase and hit.service != line.service:
        # About the workload configured with the host the line names (``hit.shown_by``: its variable and value).
        variable, value = (b.matched_text for b in hit.shown_by[:2])
        return Finding(
            kind=hit.kind,
            role=hit.role or rule.role_value,
            service=hit.service,
            statement=(
                f"{hit.service} {hit.phrase}: its {variable} is {value} ({line.service} calls fail with {quoted})"
            ),
            bindings=(*hit.shown_by, line.bind_service(), line.bind_message(hit.excerpt)),
            strength=rule.strength,
            onset=line.ts,
            detail=hit.excerpt,
        )
    if hit.phrase:
        return _own_finding(line, hit, hit.role or rule.role_value, hit.phrase, rule.strength)
    if rule.about == "self":
        return _own_finding(line, hit, rule.role_value, rule.phrase, rule.strength)
    # A host whose workload only a naming convention shows (a Certificate named after it): an observation names
    # the host as the line writes it; only the cause, a conclusion, names the workload.
    host = hit.ip if hit.ip and not _IP.match(hit.ip) and not _holds(hit.shown_by, hit.ip) else ""
    if rule.role == "cause" and hit.blamed:
        # About the service the line names (hit.service); the line is its caller's (hit.blamed).
        statement = f"{host or hit.service} {rule.phrase} ({line.service} calls to it fail with {quoted})"
        found = _naming(line, hit, hit.service, role=Role.CAUSE, statement=statement, detail=hit.excerpt)
        return dataclasses.replace(found, subject_as=host) if host else found
    if not hit.blamed:
        return _own_finding(line, hit, Role.SUPPORT, rule.phrase, 0)
    statement = f"{line.service} calls to {host or hit.blamed} fail with {quoted}"
    return _naming(line, hit, hit.blamed, role=Role.LINK, statement=statement, blamed=hit.blamed)


def _holds(bindings: Sequence[Binding], host: str) -> bool:
    """Whether a binding's text writes the host itself (an Ingress's host), not a name made from it."""
    return any(host.lower() in b.matched_text.lower() for b in bindings)


def _naming(
    line: LogLine, hit: _Hit, named: str, *, role: Role, statement: str, blamed: str = "", detail: str = ""
) -> Finding:
    """A finding about ``hit.service`` from a line that names another workload (``named``): the line's service,
    that name and the matched part are its bindings. A cause carries its rule's strength; a link its blamed."""
    # A target named by an address: the address in the line, and the object that has it (the Service, the pod).
    naming = (line.bind_message(hit.ip), *hit.shown_by) if hit.ip else (line.bind_message(named),)
    return Finding(
        kind=hit.kind,
        role=role,
        service=hit.service,
        statement=statement,
        bindings=(line.bind_service(), *naming, line.bind_message(hit.excerpt)),
        strength=hit.rule.strength if role is Role.CAUSE else 0,
        onset=line.ts,
        blamed=blamed,
        detail=detail,
    )


def _generic(line: LogLine, rules: Rules) -> Finding | None:
    """An error line no rule explains (``reads_as_error``), or a slow call: a symptom of the line's workload."""
    duration = _DURATION.search(line.message) or _KEYED_DURATION.search(line.message)
    if duration is not None:
        value = float(duration.group("value"))
        unit = duration.group("unit").lower()
        millis = value if unit in ("ms", "milliseconds") else value * 1000
        if millis >= rules.thresholds.slow_call_ms:
            excerpt = duration.group(0)
            return Finding(
                kind="slow_calls",
                role=Role.SYMPTOM,
                service=line.service,
                statement=f"{line.service} logs slow calls ({quote(excerpt)})",
                bindings=(line.bind_service(), line.bind_message(excerpt)),
                onset=line.ts,
            )
    if reads_as_error(line, by_text=True):
        parts = message_parts(line.message)
        said = ", ".join(quote(one_line(part)) for part in parts)
        return Finding(
            kind="error_log",
            role=Role.SYMPTOM,
            service=line.service,
            statement=f"{line.service} logs errors ({said})",
            bindings=(line.bind_service(), *(line.bind_message(part) for part in parts)),
            onset=line.ts,
            detail=parts[-1],
        )
    return None


def log_findings(
    lines: Iterable[LogLine],
    services: Sequence[str],
    rules: Rules | None = None,
    namespaces: Mapping[str, Iterable[str]] | None = None,
    addresses: Addresses | None = None,
    dependencies: Dependencies | None = None,
) -> list[Finding]:
    """Findings of every line, first occurrence of each (kind, service, blamed) only. ``namespaces``: where each
    workload was seen, so that a Service host of another namespace is not taken for it; ``addresses``: the IPs
    known to be a workload's, so that a line dialing one names it; ``dependencies``: each workload's configured
    addresses and the workloads, so that an error line calling a dependency by its own word ("failed to get
    cart", "shipping quote failure") names it."""
    rules = rules or current_rules()
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    names = ServiceNames(services, namespaces)
    # (kind, caller) of every cause a caller's own line puts on another workload: the caller only relays it.
    relayed: set[tuple[str, str]] = set()
    for line in lines:
        if not line.service:
            continue
        hits = _hits(line, names, rules, addresses, dependencies)
        for hit in hits:
            if hit.rule.role == "cause" and hit.blamed:
                relayed.add((hit.kind, hit.blamed))
            if hit.key in seen:
                continue
            try:
                out.append(_finding(line, hit))
                seen.add(hit.key)
            except BindingError:
                continue
        if hits:
            continue
        try:
            generic = _generic(line, rules)
        except BindingError:
            continue
        if generic is not None and generic.key not in seen:
            out.append(generic)
            seen.add(generic.key)
    # A cause put on a workload whose own log puts the same fault on its dependency (the frontend relays
    # cartservice's error, which is Redis's): the dependency's, not the relay's.
    return [f for f in out if not (f.role is Role.CAUSE and f.blamed == "" and (f.kind, f.service) in relayed)]


def self_excerpt(message: str, rules: Rules | None = None) -> str | None:
    """The part of a line a self rule or an HTTP error status matches (deploy analysis quotes it), or None."""
    rules = rules or current_rules()
    for rule in rules.log:
        if rule.about == "self" or rule.kind == "error_status":
            match = rule.compiled.search(message)
            if match is not None:
                return match.group(0)
    return None
