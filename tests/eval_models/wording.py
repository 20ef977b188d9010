"""Claims as a model writes them from facts: honest wording, the imperfections real models show, one untruth.

Every writer returns the statement, the fact roles it binds (each a real pointer of the recorded output) and, for
the typical wording, the imperfections it uses. The choice among wordings turns on a seed, so two incidents of the
same kind do not read alike.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

from tests.eval_models.harvest import Fact

ZONES = (("CET", timezone(timedelta(hours=1))), ("EST", timezone(timedelta(hours=-5))))


@dataclass
class Wording:
    statement: str
    roles: list[str]
    imperfections: list[str] = field(default_factory=list)
    # The part of the message the statement quotes (its binding copies the line that holds it).
    quoted: str = ""


def pick(seed: int, *options: Wording) -> Wording:
    return options[seed % len(options)]


def quote(fact: Fact, key: str = "") -> str:
    """The part of a message a model quotes: of a JSON log line its error or message field, of a long or
    multi-line message the line holding ``key`` (else its first line), else the whole message."""
    text = json_message(fact.text("message"), key) or fact.text("message")
    if key and key in text:
        line = next(line for line in text.splitlines() if key in line).strip()
        return line if len(line) <= 160 else key
    first = text.strip().splitlines()[0].strip() if text.strip() else text
    return first[:160] if len(text) > 160 or "\n" in text else text


def json_message(text: str, key: str = "") -> str:
    """A JSON log line's telling text: the field holding ``key``, else an error field, else one that reads as an
    error, else its msg."""
    if not text.lstrip().startswith("{"):
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    fields: list[tuple[str, str]] = []

    def walk(value: object, name: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, str) and value and name not in ("ts", "time", "level", "caller", "logger"):
            fields.append((name, value))

    walk(data, "")
    holding = [v for _, v in fields if key and key in v]
    named = ("error", "err", "exception", "message", "msg", "stack_trace")
    errors = [v for k, v in fields if k in named and ERRORISH.search(v)]
    erring = sorted((v for _, v in fields if ERRORISH.search(v)), key=len, reverse=True)
    messages = [v for k, v in fields if k in ("msg", "message")]
    return (holding or errors or erring or messages or [""])[0]


ERRORISH = re.compile(
    r"(?i)error|fail|refused|timed? ?out|panic|exception|denied|killed|unable|cannot|can't|not found|no such|"
    r"exceeded|invalid|fatal|unhealthy|back-?off|oom|insufficient|unbound|forbidden|too many|no more|null|crash|"
    r"bad |missing|lock|loop|unknown|expired|mismatch|no space|enospc|unauthorized|not available|deadline"
)


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def times(count: str) -> str:
    return "once" if count == "1" else f"{count} times"


def a_time(stamp: str) -> str:
    """An RFC 3339 UTC time written as people write it ("12:25 UTC")."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return moment.astimezone(UTC).strftime("%H:%M UTC")


def zoned(stamp: str, seed: int) -> str:
    """The same moment in another zone ("13:25 CET")."""
    name, zone = ZONES[seed % len(ZONES)]
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return moment.astimezone(zone).strftime(f"%H:%M {name}")


def mebibytes(quantity: str) -> str | None:
    """A Kubernetes quantity in another unit ("384Mi" -> "384 MiB", "2Gi" -> "2048 MiB")."""
    match = re.fullmatch(r"(\d+)(Mi|Gi)", quantity)
    if not match:
        return None
    number, unit = int(match.group(1)), match.group(2)
    return f"{number} MiB" if unit == "Mi" else f"{number * 1024} MiB"


def service_of(pod: str, service: str) -> str:
    return service if pod.startswith(service) else pod


# ------------------------------------------------------------------------------------------------- honest
def honest(fact: Fact, seed: int, key: str = "") -> Wording:
    k = fact.kind
    if k == "termination":
        pod, container, reason = fact.text("pod"), fact.text("container"), fact.text("reason")
        code = fact.text("code") if fact.has("code") else ""
        when = "last terminated" if fact.extra.get("last") else "terminated"
        options = [
            Wording(
                f"Container {container} of pod {pod} {when} with reason {reason} and exit code {code}",
                ["pod", "container", "reason", "code"],
            ),
            Wording(
                f"Pod {pod} reports container {container} {when} with reason {reason}, exit code {code}",
                ["pod", "container", "reason", "code"],
            ),
            Wording(
                f"The {container} container of pod {pod} {when} with exit code {code} and reason {reason}",
                ["pod", "container", "code", "reason"],
            ),
        ]
        if fact.has("restarts") and fact.text("restarts") != "0":
            options.append(
                Wording(
                    f"In pod {pod}, container {container} has restarted {fact.text('restarts')} times and "
                    f"{when} with reason {reason} (exit code {code})",
                    ["pod", "container", "restarts", "reason", "code"],
                )
            )
        if not code:
            options = [
                Wording(
                    f"Container {container} of pod {pod} {when} with reason {reason}", ["pod", "container", "reason"]
                )
            ]
        return pick(seed, *options)
    if k == "waiting":
        pod, container, reason = fact.text("pod"), fact.text("container"), fact.text("reason")
        if fact.has("message"):
            return pick(
                seed,
                Wording(
                    f'Container {container} of pod {pod} is waiting with reason {reason}: "{quote(fact, key)}"',
                    ["pod", "container", "reason", "message"],
                ),
                Wording(
                    f'Pod {pod} has container {container} waiting in {reason} with the message "{quote(fact, key)}"',
                    ["pod", "container", "reason", "message"],
                ),
            )
        return Wording(
            f"Container {container} of pod {pod} is waiting with reason {reason}", ["pod", "container", "reason"]
        )
    if k == "event":
        obj, reason = fact.text("object"), fact.text("reason")
        msg = quote(fact, key) if fact.has("message") else ""
        options = [
            Wording(f'{obj} has {article(reason)} {reason} event: "{msg}"', ["object", "reason", "message"]),
            Wording(f'The {reason} event of {obj} says "{msg}"', ["object", "reason", "message"]),
            Wording(f'Event {reason} was recorded for {obj} with the message "{msg}"', ["object", "reason", "message"]),
        ]
        if fact.has("count"):
            options.append(
                Wording(
                    f'{obj} has {article(reason)} {reason} event seen {times(fact.text("count"))}: "{msg}"',
                    ["object", "reason", "count", "message"],
                )
            )
        return pick(seed, *options)
    if k == "log":
        service, msg = (fact.text("service") if fact.has("service") else ""), quote(fact, key)
        roles = ["service", "message"] if service else ["message"]
        if fact.has("level") and seed % 3 == 2:
            level = fact.text("level")
            return Wording(f'{service} logged {article(level)} {level} line: "{msg}"', [*roles, "level"])
        return pick(
            seed,
            Wording(f'{service} logged "{msg}"', roles),
            Wording(f'The logs of {service} contain "{msg}"', roles),
            Wording(f'A log line of {service} reads "{msg}"', roles),
        )
    if k == "pod_log":
        pod, msg = fact.text("pod"), quote(fact, key)
        prev = "previous " if fact.extra.get("previous") else ""
        return pick(
            seed,
            Wording(f'The {prev}container log of pod {pod} holds the line "{msg}"', ["pod", "message"]),
            Wording(f'Pod {pod} logged "{msg}" in its {prev}container', ["pod", "message"]),
        )
    if k in ("unscheduled", "pod_status"):
        pod, reason = fact.text("pod"), fact.text("reason")
        msg = quote(fact, key) if fact.has("message") else ""
        what = "is not scheduled" if k == "unscheduled" else "has status reason"
        if k == "unscheduled":
            return Wording(f'Pod {pod} {what} ({reason}): "{msg}"', ["pod", "reason", "message"])
        return Wording(f'Pod {pod} {what} {reason}: "{msg}"', ["pod", "reason", "message"])
    if k == "deploy":
        service, version = fact.text("service"), fact.text("version")
        prev = fact.text("previous") if fact.has("previous") else ""
        return pick(
            seed,
            Wording(
                f"{service} was deployed at version {version} (previous version {prev}) at {fact.text('ts')}",
                ["service", "version", "previous", "ts"],
            ),
            Wording(f"A deploy of {service} moved it from {prev} to {version}", ["service", "previous", "version"]),
        )
    if k == "topology":
        service = fact.text("service")
        if fact.has("dep"):
            return pick(
                seed,
                Wording(f"{service} depends on {fact.text('dep')}", ["service", "dep"]),
                Wording(f"{service} calls {fact.text('dep')}", ["service", "dep"]),
            )
        return Wording(f"{service} is called by {fact.text('dependent')}", ["service", "dependent"])
    if k == "limit":
        return Wording(
            f"Container {fact.text('container')} of pod {fact.text('pod')} has a memory limit of {fact.text('memory')}",
            ["pod", "container", "memory"],
        )
    raise ValueError(f"no wording for {k}")


# ------------------------------------------------------------------------------------------------ typical
def respell(text: str) -> tuple[str, list[str]]:
    """A message as a model retells it: milliseconds as seconds, Kubernetes quantities in MiB/GiB."""
    used: list[str] = []

    def seconds(match: re.Match[str]) -> str:
        used.append("another unit")
        value = int(match.group(1)) / 1000
        return f"{value:g} s"

    def mib(match: re.Match[str]) -> str:
        used.append("another unit")
        return f"{match.group(1)} {'MiB' if match.group(2) == 'Mi' else 'GiB'}"

    text = re.sub(r"(?<![\w.])(\d{3,})ms\b", seconds, text)
    text = re.sub(r"(?<![\w.])(\d+)(Mi|Gi)\b", mib, text)
    return text, used


def words(camel: str) -> str:
    """A CamelCase reason written as words ("ImagePullBackOff" -> "image pull back-off")."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", camel).lower()
    return spaced.replace("back off", "back-off")


def typical(fact: Fact, seed: int, key: str = "") -> Wording:
    """True, but as real models write: punctuation after values, possessives, units, neighbouring details..."""
    k = fact.kind
    if k == "termination":
        pod, container, reason = fact.text("pod"), fact.text("container"), fact.text("reason")
        if not fact.has("code"):
            return pick(
                seed,
                Wording(
                    f"{pod}'s {container} container was {reason}.",
                    ["pod", "container", "reason"],
                    ["possessive", "trailing period after a value"],
                ),
                Wording(
                    f"{pod}: last state terminated, reason {reason}.",
                    ["pod", "reason"],
                    ["camelCase field written as words", "trailing period after a value"],
                ),
            )
        code = fact.text("code")
        options = [
            Wording(
                f"{pod}'s {container} container was terminated with {reason} (exit code {code}).",
                ["pod", "container", "reason", "code"],
                ["possessive", "trailing period after a value"],
            ),
            Wording(
                f"The {container} container in {pod} didn't stay up: it ended with {reason}, exit code {code}.",
                ["pod", "container", "reason", "code"],
                ["contraction", "trailing period after a value"],
            ),
        ]
        if fact.has("restarts") and fact.text("restarts") not in ("0", ""):
            options.append(
                Wording(
                    f"{pod} has restarted {fact.text('restarts')} times; its last exit was {reason} with exit code "
                    f"{code}.",
                    ["pod", "restarts", "reason", "code"],
                    ["possessive pronoun", "trailing period"],
                )
            )
        if fact.has("image"):
            options.append(
                Wording(
                    f"{pod}'s {container} container, running {fact.text('image')}, was {reason} (exit code {code}).",
                    ["pod", "container", "reason", "code"],
                    ["detail from a neighbouring field (the image, not bound)", "possessive", "trailing period"],
                )
            )
        if fact.has("finished"):
            options.append(
                Wording(
                    f"{pod} last exited with {reason} (code {code}) at {zoned(fact.text('finished'), seed)}",
                    ["pod", "reason", "code", "finished"],
                    ["time in another zone"],
                )
            )
        return pick(seed, *options)
    if k == "waiting":
        pod, container, reason = fact.text("pod"), fact.text("container"), fact.text("reason")
        if reason == "CrashLoopBackOff":
            return pick(
                seed,
                Wording(
                    f"{pod} is crash-looping: its {container} container is in CrashLoopBackOff.",
                    ["pod", "container", "reason"],
                    ["hyphenated word", "possessive pronoun", "trailing period after a value"],
                ),
                Wording(
                    f"The {container} container of {pod} is stuck in back-off ({reason}).",
                    ["pod", "container", "reason"],
                    ["hyphenated word", "trailing period"],
                ),
            )
        if fact.has("message"):
            return pick(
                seed,
                Wording(
                    f"{pod}'s {container} container can't start: {reason}, {quote(fact, key)}.",
                    ["pod", "container", "reason", "message"],
                    ["possessive", "contraction", "unquoted message", "trailing period"],
                ),
                Wording(
                    f"The {container} container of {pod} is stuck in {words(reason)}.",
                    ["pod", "container", "reason"],
                    ["CamelCase reason written as words", "trailing period"],
                ),
            )
        return Wording(
            f"{pod}'s {container} container is waiting in {reason}.",
            ["pod", "container", "reason"],
            ["possessive", "trailing period after a value"],
        )
    if k == "event":
        obj, reason = fact.text("object"), fact.text("reason")
        msg = quote(fact, key) if fact.has("message") else ""
        retold, units = respell(msg)
        options = [
            Wording(
                f"{obj}'s events show {reason}: {retold.rstrip('.')}.",
                ["object", "reason", "message"],
                ["possessive", "unquoted message", "trailing period", "plural", *units],
            ),
            Wording(
                f"Kubernetes reported {reason} for {obj} ('{msg}').",
                ["object", "reason", "message"],
                ["single quotes", "trailing period"],
            ),
        ]
        if fact.has("count") and int(float(fact.text("count"))) > 1:
            options.append(
                Wording(
                    f"{obj} has had {fact.text('count')} {reason} events: {msg.rstrip('.')}.",
                    ["object", "reason", "message"],
                    ["detail from a neighbouring field (the count, not bound)", "plural", "unquoted message"],
                )
            )
        if fact.has("count") and int(float(fact.text("count"))) >= 20:
            rounded = round(int(float(fact.text("count"))), -1)
            options.append(
                Wording(
                    f"{obj} keeps getting {reason} events (about {rounded} so far).",
                    ["object", "reason", "count"],
                    ["rounded number", "plural", "trailing period"],
                )
            )
        if fact.has("count") and fact.has("ts"):
            options.append(
                Wording(
                    f"{reason} for {obj} was seen {times(fact.text('count'))}, last at {a_time(fact.text('ts'))}.",
                    ["object", "reason", "count", "ts"],
                    ["time in another format", "trailing period"],
                )
            )
        return pick(seed, *options)
    if k == "log":
        service, msg = (fact.text("service") if fact.has("service") else "the service"), quote(fact, key)
        roles = ["service", "message"] if fact.has("service") else ["message"]
        retold, units = respell(msg)
        options = [
            Wording(
                f"{service}'s logs show {retold.rstrip('.')}.",
                roles,
                ["possessive", "unquoted message", "trailing period", *units],
            ),
            Wording(
                f'{service} logged an error, "{msg}", which points at the failure.',
                roles,
                ["causal words in an observation", "plural"],
            ),
        ]
        if fact.has("ts"):
            options.append(
                Wording(
                    f"At {zoned(fact.text('ts'), seed)} {service} logged: {msg}",
                    [*roles, "ts"],
                    ["time in another zone", "unquoted message"],
                )
            )
        return pick(seed, *options)
    if k == "pod_log":
        pod, msg = fact.text("pod"), quote(fact, key)
        return pick(
            seed,
            Wording(
                f"{pod}'s previous container logged {msg.rstrip('.')}.",
                ["pod", "message"],
                ["possessive", "unquoted message", "trailing period"],
            ),
            Wording(
                f"Before its last restart, {pod} printed: {msg}",
                ["pod", "message"],
                ["causal words in an observation", "unquoted message"],
            ),
        )
    if k in ("unscheduled", "pod_status"):
        pod, reason = fact.text("pod"), fact.text("reason")
        msg = quote(fact, key) if fact.has("message") else ""
        if k == "unscheduled":
            return Wording(
                f"{pod} can't be scheduled ({reason}): {msg}",
                ["pod", "reason", "message"],
                ["contraction", "unquoted message"],
            )
        return Wording(
            f"{pod}'s status reason is {reason}: {msg}",
            ["pod", "reason", "message"],
            ["possessive", "unquoted message"],
        )
    if k == "deploy":
        service, version = fact.text("service"), fact.text("version")
        prev = fact.text("previous") if fact.has("previous") else "?"
        return pick(
            seed,
            Wording(
                f"{service} was rolled out from {prev} to {version} at {a_time(fact.text('ts'))}.",
                ["service", "previous", "version", "ts"],
                ["time in another format", "trailing period"],
            ),
            Wording(
                f"{service}'s version changed to {version} (from {prev}).",
                ["service", "version", "previous"],
                ["possessive", "trailing period"],
            ),
        )
    if k == "topology":
        service = fact.text("service")
        deps = fact.extra.get("depends_on", [])
        if fact.has("dep"):
            if len(deps) > 1:
                return Wording(
                    f"{service} has {len(deps)} upstream dependencies, {fact.text('dep')} among them.",
                    ["service", "dep"],
                    ["count of listed items", "trailing period after a value"],
                )
            return pick(
                seed,
                Wording(
                    f"{service}'s only dependency is {fact.text('dep')}.",
                    ["service", "dep"],
                    ["possessive", "count of listed items", "trailing period after a value"],
                ),
                Wording(
                    f"According to the topology, {service} calls {fact.text('dep')}.",
                    ["service", "dep"],
                    ["ordinary words", "trailing period after a value"],
                ),
            )
        return Wording(
            f"{service} is called by {fact.text('dependent')}.",
            ["service", "dependent"],
            ["trailing period after a value"],
        )
    if k == "limit":
        other = mebibytes(fact.text("memory")) or fact.text("memory")
        return Wording(
            f"{fact.text('pod')}'s {fact.text('container')} container is limited to {other} of memory.",
            ["pod", "container", "memory"],
            ["possessive", "another unit", "trailing period"],
        )
    raise ValueError(f"no wording for {k}")


# ------------------------------------------------------------------------------------------------- untrue
@dataclass
class Untruth:
    statement: str
    roles: list[str]
    kind: str  # wrong number, wrong pod, wrong error code, wrong version, invented cause
    why: str
    quoted: str = ""


def bump(number: str, seed: int) -> str:
    value = int(float(number))
    return str(value + (2 if value > 100 else 3 + seed % 4))


_SWAP = {"503": "502", "502": "504", "401": "403", "403": "401", "404": "400", "500": "503", "137": "139"}
# A number a claim could get wrong: a standalone integer, maybe with a unit (503, 30000ms, 2Gi, 0/5), never part of a
# time, a date, an address or an identifier.
_NUMBER = re.compile(r"(?<![\w.:/\[-])(\d+)(ms|s|Gi|Mi|Ki)?(?![\w.:/\]-]|\.\d)")


def change_code(text: str, seed: int) -> tuple[str, str] | None:
    """A message with one of its codes, counts or quantities changed (503 -> 502, 30000ms -> 20000ms)."""
    for match in _NUMBER.finditer(text):
        number, unit = match.group(1), match.group(2) or ""
        swapped = _SWAP.get(number)
        if swapped is None:
            value = int(number)
            swapped = str(value + 1 if value < 10 else value + (1 if seed % 2 else -1) * max(1, value // 3))
        return (
            text[: match.start(1)] + swapped + text[match.end(1) :],
            f"{number}{unit} is {swapped}{unit} in the claim",
        )
    return None


_REASON_SWAP = {
    "OOMKilled": "Error",
    "Error": "OOMKilled",
    "StartError": "Error",
    "ContainerStatusUnknown": "OOMKilled",
}


def untrue(fact: Fact, seed: int, key: str, other_pod: str | None, others: list[str]) -> Untruth | None:
    """The fact's honest wording with exactly one detail false, or None when the fact has no such detail.

    ``others``: services of the system other than the fact's (for a wrong dependency or a wrong service).
    """
    k = fact.kind
    if k == "topology" and fact.has("dep"):
        deps = set(fact.extra.get("depends_on", []))
        wrong = next((o for o in others if o not in deps and o != fact.text("service")), None)
        if wrong:
            return Untruth(
                f"{fact.text('service')} depends on {wrong}",
                ["service", "dep"],
                "wrong dependency",
                f"{fact.text('service')} depends on {', '.join(sorted(deps))}, not on {wrong}",
            )
    if k == "termination" and not fact.has("code") and fact.text("reason") in _REASON_SWAP:
        wrong = _REASON_SWAP[fact.text("reason")]
        return Untruth(
            f"Container {fact.text('container')} of pod {fact.text('pod')} last terminated with reason {wrong}",
            ["pod", "container", "reason"],
            "wrong reason",
            f"the reason is {fact.text('reason')}, not {wrong}",
        )
    if k == "termination" and fact.has("code"):
        pod, container, reason, code = (fact.text(r) for r in ("pod", "container", "reason", "code"))
        if seed % 2 == 0 or not fact.has("restarts"):
            wrong = bump(code, seed)
            return Untruth(
                f"Container {container} of pod {pod} last terminated with reason {reason} and exit code {wrong}",
                ["pod", "container", "reason", "code"],
                "wrong number",
                f"the exit code is {code}, not {wrong}",
            )
        wrong = bump(fact.text("restarts"), seed)
        return Untruth(
            f"In pod {pod}, container {container} has restarted {wrong} times and last terminated with reason {reason}",
            ["pod", "container", "restarts", "reason"],
            "wrong number",
            f"the restart count is {fact.text('restarts')}, not {wrong}",
        )
    if k in ("event", "waiting", "unscheduled", "pod_status") and other_pod and seed % 2 == 0:
        obj_role = "object" if k == "event" else "pod"
        reason = fact.text("reason")
        return Untruth(
            f"{other_pod} has a {reason} event" if k == "event" else f"Pod {other_pod} reports {reason}",
            [obj_role, "reason"],
            "wrong pod",
            f"{reason} is recorded for {fact.text(obj_role)}, not for {other_pod}",
        )
    if k in ("log", "pod_log", "event", "waiting", "unscheduled", "pod_status") and fact.has("message"):
        msg = quote(fact, key)
        changed = change_code(msg, seed)
        who_role = {"log": "service", "pod_log": "pod", "event": "object"}.get(k, "pod")
        if changed and fact.has(who_role):
            text, why = changed
            return Untruth(f'{fact.text(who_role)} reports "{text}"', [who_role, "message"], "wrong error code", why)
        if k in ("log", "pod_log") and fact.has(who_role) and others:
            wrong = others[seed % len(others)]
            return Untruth(
                f'{wrong} logged "{msg}"',
                [who_role, "message"],
                "wrong service",
                f"the line is {fact.text(who_role)}'s, not {wrong}'s",
            )
        if k == "event" and fact.has("count"):
            wrong = bump(fact.text("count"), seed)
            return Untruth(
                f"{fact.text('object')} has a {fact.text('reason')} event seen {wrong} times",
                ["object", "reason", "count"],
                "wrong number",
                f"the event count is {fact.text('count')}, not {wrong}",
            )
    if k == "deploy" and fact.has("version"):
        version = fact.text("version")
        wrong = re.sub(r"(\d+)$", lambda m: str(int(m.group(1)) + 1), version)
        return Untruth(
            f"{fact.text('service')} was deployed at version {wrong}",
            ["service", "version"],
            "wrong version",
            f"the deployed version is {version}, not {wrong}",
        )
    if k == "limit":
        memory = fact.text("memory")
        match = re.fullmatch(r"(\d+)(\w+)", memory)
        if match:
            wrong = f"{int(match.group(1)) * 2}{match.group(2)}"
            return Untruth(
                f"Container {fact.text('container')} of pod {fact.text('pod')} has a memory limit of {wrong}",
                ["pod", "container", "memory"],
                "wrong number",
                f"the memory limit is {memory}, not {wrong}",
            )
    return None
