"""Failure modes a statement may name, each with what evidence of it looks like: a statement that names one its run's
evidence never shows says more than its evidence (an "out of memory" cause where no container was OOMKilled).

One row a mode: the words a statement names it by, and the texts tool outputs write when it happens (Kubernetes'
reasons and messages, the kernel's and the runtimes' errors). Matched on the comparison form (``normalize``) with
names also split into their words (``OOMKilled`` is "oom killed"), in linear time (RE2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from diagnosis_server.text.matching import re2_compiled
from diagnosis_server.text.normalize import normalize


@dataclass(frozen=True, slots=True)
class FailureMode:
    name: str
    said: str  # how a statement names it
    shown: str  # what evidence of it writes


MODES = (
    FailureMode(
        "out of memory",
        r"\b(?:out[ -]of[ -]memory|oom|oom[ -]?kill\w*|memory (?:leak|exhaustion)|(?:ran|runs|running|run) out of "
        r"memory|exceed\w* (?:its |their |the |a )?(?:[\d.]+ ?\w+ )?memory limit|memory limit (?:was |is )?"
        r"(?:exceeded|hit|reached))\b",
        r"\boom|out ?of ?memory|memory ?error|bad ?alloc|memory allocation|allowed memory size|cannot allocate memory"
        r"|memory cgroup|heap space|heap out of memory|memory limit exceeded|exceeds the total limit|killed process",
    ),
    FailureMode(
        "insufficient resources",
        r"\b(?:no node (?:has|had|with) (?:room|enough|the (?:cpu|memory|resources))|not enough (?:cpu|memory|"
        r"resources|capacity)|insufficient|(?:has|have|had) (?:no )?room for|"
        r"lack\w* (?:of )?(?:cpu|memory|capacity))\b",
        r"insufficient|too many pods|exceeds? (?:the )?(?:node|allocatable|capacity)|low on resource|"
        r"(?:memory|disk|pid) ?pressure|didn't have free ports",
    ),
    FailureMode(
        "disk full",
        r"\b(?:disk (?:is |was )?full|no (?:disk )?space left|out of (?:disk|space)|ran out of (?:disk|space)|"
        r"(?:volume|filesystem) (?:is |was )?full)\b",
        r"no space left|enospc|disk ?pressure|ephemeral|out of disk|disk (?:is )?full|low on resource|quota exceeded",
    ),
    FailureMode(
        "name resolution",
        r"\b(?:dns|nxdomain|(?:does|did|could|can) ?not resolve|cannot be resolved|unresolvable|name resolution)\b",
        r"no such host|nxdomain|unknown ?host|unknown [\w ]{0,20}host|name resolution|resolv|eai ?again|enotfound|"
        r"not known|servfail|lookup"
        r"|coredns|dns|getaddrinfo|misbehaving|host not found|not found in upstream",
    ),
    FailureMode(
        "certificate",
        r"\b(?:certificate|cert|x509|tls handshake)\b",
        r"certificate|x509|tls|ssl|pkix|cert|subject alternative|common name|hostname mismatch|verify",
    ),
    FailureMode(
        "image not found",
        r"\b(?:(?:tag|image|manifest) (?:is |was )?(?:missing|not found|absent|gone)|(?:tag|image|manifest) "
        r"(?:does|did) ?n[o']?t exist|missing (?:tag|image)|no such (?:tag|image))\b",
        r"not ?found|manifest unknown|does not exist|no such image|name unknown|unknown tag",
    ),
    FailureMode(
        "timeout",
        r"\b(?:time[sd]? ?out|timeouts?|deadline)\b",
        r"time ?out|timed out|deadline|i/o timeout|took longer",
    ),
    FailureMode(
        "permission",
        r"\b(?:permission denied|forbidden|unauthori[sz]ed|access (?:is )?denied|not (?:allowed|permitted))\b",
        r"permission|forbidden|unauthori[sz]ed|denied|403|401|not allowed|not permitted",
    ),
)


@cache
def _said(mode: FailureMode) -> object:
    return re2_compiled(mode.said)


@cache
def _shown(mode: FailureMode) -> object:
    return re2_compiled(mode.shown)


def _search(pattern: object, text: str) -> bool:
    return pattern is not None and pattern.search(text) is not None  # type: ignore[attr-defined]


def named_modes(statement: str) -> tuple[FailureMode, ...]:
    """The failure modes ``statement`` names."""
    said = normalize(statement)
    return tuple(mode for mode in MODES if _search(_said(mode), said))


def shows(mode: FailureMode, text: str) -> bool:
    """Whether ``text`` (as a tool output writes it) shows ``mode``."""
    from diagnosis_server.text.language import name_parts

    return _search(_shown(mode), normalize(name_parts(text)))


def unshown_modes(statement: str, evidence: Iterable[str]) -> tuple[str, ...]:
    """The failure modes ``statement`` names that no ``evidence`` text shows."""
    named = named_modes(statement)
    if not named:
        return ()
    texts = list(evidence)
    return tuple(mode.name for mode in named if not any(shows(mode, text) for text in texts))
