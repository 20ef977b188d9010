"""The in-cluster addresses a workload is configured with (its pods' env values): who a caller's unnamed
dependency is, when its log says "failed to get cart" and its env holds ``CART_SERVICE_ADDR=cartservice:7070``.

A value is an address when it is ``host[:port]``, a URL's host, or ``user@host``, and the host is a name
(``cartservice``) or an in-cluster one (``redis-cart.shop.svc.cluster.local``); its first label is the workload or
Service it names. A variable's own words, without the generic ones (``SERVICE``, ``ADDR``, ``HOST``, ``URL``...),
are what the caller's lines call that dependency (``CART`` -> "cart", ``PRODUCT_CATALOG`` -> "product catalog").
Values are read as found; a value that is no address (a flag, a number, a secret) says nothing here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from diagnosis_server.agents.heuristic.analyzers.evidence import Evidence, Obj, workload_of
from diagnosis_server.agents.heuristic.observations import Binding, BindingError, Observation
from diagnosis_server.agents.heuristic.shapes import is_object_name

_ADDRESS = re.compile(
    r"(?:[a-z][a-z0-9+.-]{0,15}://)?(?:[^@/\s:]{1,64}(?::[^@/\s]{0,128})?@)?"
    r"(?P<host>[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?P<rest>(?:\.[a-z0-9-]{1,63}){0,5})"
    r"(?::(?P<port>\d{1,5}))?(?:[/?#][^\s]{0,512})?",
    re.IGNORECASE,
)
_IN_CLUSTER = re.compile(r"(?:\.[a-z0-9-]+(?:\.svc(?:\.cluster\.local)?)?)?", re.IGNORECASE)
# The words of a variable's name that say what kind of setting it is, not what it addresses.
_GENERIC = frozenset(
    {
        "addr",
        "address",
        "api",
        "endpoint",
        "grpc",
        "host",
        "hostname",
        "http",
        "https",
        "name",
        "port",
        "server",
        "service",
        "svc",
        "target",
        "uri",
        "url",
    }
)
_MIN_STEM = 3


@dataclass(frozen=True, slots=True)
class Configured:
    """One env value of a workload's pod that addresses ``host`` (a workload or Service name)."""

    workload: str
    variable: str
    value: str
    host: str
    port: int | None
    # The words of the variable that name the dependency (``("product", "catalog")``).
    stem: tuple[str, ...]
    pod: Obj
    path: tuple[str | int, ...]
    # Where the pod names its workload (a label, or its name).
    named_by: Binding

    def bindings(self) -> tuple[Binding, ...]:
        """The variable's name and its value, where the pod holds them, and the pod's workload name."""
        return (self.pod.bind(*self.path, "name"), self.pod.bind(*self.path, "value"), self.named_by)


def address_host(value: str) -> tuple[str, int | None] | None:
    """(first label, port) of an address value, or None: ``redis-cart:6379`` -> ("redis-cart", 6379)."""
    match = _ADDRESS.fullmatch(value.strip())
    if match is None:
        return None
    host, rest, port = match.group("host").lower(), match.group("rest"), match.group("port")
    if rest and not _IN_CLUSTER.fullmatch(rest):
        return None
    if not rest and port is None and "://" not in value and "@" not in value:
        return None  # a bare word is a setting's value, not an address
    if host.isdigit() or not is_object_name(host):
        return None
    return host, int(port) if port else None


def _stem(variable: str) -> tuple[str, ...]:
    words = [w for w in re.split(r"[_\W]+", variable.lower()) if w]
    return tuple(w for w in words if w not in _GENERIC and not w.isdigit())


def _of_pod(pod: Obj, workload: str, named_by: Binding) -> list[Configured]:
    out: list[Configured] = []
    containers = pod.get("spec", "containers")
    for c, container in enumerate(containers if isinstance(containers, list) else []):
        env = container.get("env") if isinstance(container, dict) else None
        for e, item in enumerate(env if isinstance(env, list) else []):
            if not isinstance(item, dict):
                continue
            variable, value = item.get("name"), item.get("value")
            if not isinstance(variable, str) or not isinstance(value, str):
                continue
            found = address_host(value)
            if found is None or found[0] == workload:
                continue
            out.append(
                Configured(
                    workload,
                    variable,
                    value,
                    found[0],
                    found[1],
                    _stem(variable),
                    pod,
                    ("spec", "containers", c, "env", e),
                    named_by,
                )
            )
    return out


# What a workload's name says besides its kind: ``shippingservice`` is called "shipping" in its callers' lines.
_NAME_SUFFIX = re.compile(r"[-_]?(?:service|svc|server|api|app)$")


@dataclass(frozen=True, slots=True)
class Dependencies:
    """Each workload's configured addresses, and each listed workload with the binding that names it."""

    configured: Mapping[str, tuple[Configured, ...]]
    workloads: Mapping[str, Binding]

    def holder(self, host: str) -> Configured | None:
        """The one workload's address whose host is ``host`` (``shipping-service`` of ``SHIPPING_SERVICE_ADDR=
        shipping-service:50051``), when only one workload is configured with it."""
        found = [a for addresses in self.configured.values() for a in addresses if a.host == host.split(".")[0]]
        return found[0] if len({a.workload for a in found}) == 1 else None

    def callers(self, workload: str) -> list[str]:
        """The workloads configured with an address of ``workload`` (its callers, as their settings say)."""
        return [w for w, addresses in self.configured.items() if any(a.host == workload for a in addresses)]

    def named(self, message: str, own: str) -> tuple[str, str, tuple[Binding, ...]] | None:
        """(the words of the line that name it, the dependency, the bindings that show it is the one) of the
        dependency an error line of ``own`` calls by a name of its own: the words of a variable of ``own`` that
        addresses it, else, when no variable of ``own`` is so called, the last workload whose name without its
        kind ("shipping" of ``shippingservice``) the line writes as a word."""
        dependency = _by_variable(message, own, self.configured.get(own, ()))
        if dependency is _SEVERAL:
            return None  # the line names more than one of the caller's dependencies: which one failed is unsaid
        if isinstance(dependency, tuple):
            said, address = dependency
            return said, address.host, address.bindings()
        last: tuple[int, str, str] | None = None
        for workload in self.workloads:
            pattern = _name_pattern(workload) if workload != own else None
            for match in pattern.finditer(message) if pattern is not None else ():
                if last is None or match.start() > last[0]:
                    last = (match.start(), match.group(0), workload)
        if last is None:
            return None
        return last[1], last[2], (self.workloads[last[2]],)


_MIN_NAME_STEM = 4


@lru_cache(maxsize=1024)
def _name_pattern(workload: str) -> re.Pattern[str] | None:
    """How a line writes a workload by its name without its kind ("shipping" of ``shippingservice``), or None."""
    stem = _NAME_SUFFIX.sub("", workload)
    if stem == workload or len(stem) < _MIN_NAME_STEM:
        return None
    return _stem_pattern(tuple(re.split(r"[-_]", stem)))


def dependencies(observations: Sequence[Observation] | Evidence) -> Dependencies:
    """Each workload's configured addresses (from the first listed pod of it that has any) and the workloads, made
    once an Evidence (the detectors, the follow-ups and several analyzers ask)."""
    evidence = observations if isinstance(observations, Evidence) else Evidence.of(observations)
    return evidence.shared("dependencies", lambda: _dependencies(evidence))


def _dependencies(evidence: Evidence) -> Dependencies:
    configured: dict[str, tuple[Configured, ...]] = {}
    workloads: dict[str, Binding] = {}
    for pod in evidence.objects("Pod"):
        workload, binding = workload_of(pod)
        if not is_object_name(workload):
            continue
        workloads.setdefault(workload, binding)
        if workload in configured:
            continue
        found = _of_pod(pod, workload, binding)
        if found:
            configured[workload] = tuple(found)
    return Dependencies(configured, workloads)


@lru_cache(maxsize=1024)
def _stem_pattern(stem: tuple[str, ...]) -> re.Pattern[str] | None:
    if not stem or len("".join(stem)) < _MIN_STEM:
        return None
    *head, last = stem
    # The last word as callers write it of many too ("currencies" of CURRENCY, "carts" of CART).
    plural = re.escape(last[:-1]) + "(?:y|ies)" if last.endswith("y") else re.escape(last) + "(?:e?s)?"
    words = [*(re.escape(w) for w in head), plural]
    return re.compile(r"(?<![\w/-])" + r"[\s_-]?".join(words) + r"(?![\w/-])", re.IGNORECASE)


_SEVERAL = "several"


def _by_variable(message: str, own: str, configured: Sequence[Configured]) -> tuple[str, Configured] | str | None:
    """(the words of the line that name it, the address) of the one configured dependency of ``own`` that the
    line calls by its variable's words; ``_SEVERAL`` when several are; None when none is."""
    found: list[tuple[str, Configured]] = []
    for address in configured:
        pattern = _stem_pattern(address.stem)
        match = pattern.search(message) if pattern is not None else None
        if match is not None and address.host != own:
            found.append((match.group(0), address))
    if not found:
        return None
    if len({a.host for _, a in found}) > 1:
        return _SEVERAL
    said, address = found[0]
    try:
        address.bindings()
    except BindingError:
        return None
    return said, address
