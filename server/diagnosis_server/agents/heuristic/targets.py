"""Which services a question is about: named ones, else the entry points (http services nobody calls)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from diagnosis_server.conversions import JsonValue
from diagnosis_server.text.literal import literal_between

# Name parts too generic to say which service a question means.
_GENERIC_PARTS = frozenset(
    {"api", "svc", "service", "services", "app", "server", "srv", "db", "http", "grpc", "v1", "v2", "the", "a"}
)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class ServiceInfo:
    name: str
    kind: str = ""
    depends_on: tuple[str, ...] = ()
    # The service's metric names; None when the context has no metrics catalog.
    metrics: tuple[str, ...] | None = None
    dependents: tuple[str, ...] = ()


def services_from_context(context: JsonValue) -> list[ServiceInfo]:
    """The services of a planner context (``{"services": [{name, kind, depends_on, metrics?}]}``)."""
    raw = context.get("services") if isinstance(context, dict) else None
    if not isinstance(raw, list):
        return []
    parsed: list[ServiceInfo] = []
    for item in raw:
        if isinstance(item, str) and item:
            parsed.append(ServiceInfo(item))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            continue
        kind = item.get("kind")
        deps = item.get("depends_on")
        metrics = item.get("metrics")
        parsed.append(
            ServiceInfo(
                name=str(item["name"]),
                kind=kind if isinstance(kind, str) else "",
                depends_on=tuple(d for d in deps if isinstance(d, str)) if isinstance(deps, list) else (),
                metrics=tuple(m for m in metrics if isinstance(m, str)) if isinstance(metrics, list) else None,
            )
        )
    callers: dict[str, list[str]] = {}
    for service in parsed:
        for dep in service.depends_on:
            callers.setdefault(dep, []).append(service.name)
    return [ServiceInfo(s.name, s.kind, s.depends_on, s.metrics, tuple(callers.get(s.name, ()))) for s in parsed]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _named_in_full(question: str, name: str) -> bool:
    return literal_between(name.lower(), r"(?<![a-z0-9-])", r"(?![a-z0-9-])").search(question.lower()) is not None


def question_words(question: str) -> set[str]:
    """The question's words, each stemmed (``accounts`` and ``account`` read alike)."""
    return {_stem(w) for w in _WORD.findall(question.lower())}


def matches_part(words: set[str], name: str) -> bool:
    """Whether a distinctive part of ``name`` (not ``api``, ``svc``, ...) is one of ``words``."""
    parts = [p for p in re.split(r"[-_.]", name.lower()) if p and p not in _GENERIC_PARTS]
    return any(_stem(p) in words for p in parts)


@dataclass(frozen=True, slots=True)
class Targets:
    primary: tuple[ServiceInfo, ...]
    secondary: tuple[ServiceInfo, ...]
    how: str


def select_targets(question: str, services: Sequence[ServiceInfo], *, max_primary: int = 2) -> Targets:
    """Services named in full win; else services a distinctive name part matches; else the entry points.

    Among matched services the http ones are primary (looked at fully) and the others secondary;
    without a matched http service, the matched ones are primary.
    """
    full = [s for s in services if _named_in_full(question, s.name)]
    if full:
        return Targets(tuple(full[:max_primary]), (), "named in the question")
    words = question_words(question)
    matched = [s for s in services if matches_part(words, s.name)]
    if matched:
        http = [s for s in matched if s.kind == "http"]
        primary = http[:max_primary] if http else matched[:max_primary]
        secondary = [s for s in matched if s not in primary]
        return Targets(tuple(primary), tuple(secondary), "matched by name in the question")
    entries = [s for s in services if s.kind == "http" and not s.dependents]
    if not entries:
        entries = [s for s in services if not s.dependents] or list(services)
    return Targets(tuple(entries[:max_primary]), (), "entry services (no caller)")
