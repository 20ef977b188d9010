"""Agent providers by name: `heuristic` (the embedded default), `openai`, `scripted` (tests and evals)."""

from __future__ import annotations

from collections.abc import Callable

from diagnosis_server.agents.base import AgentProvider

_FACTORIES: dict[str, Callable[[], AgentProvider]] = {}


class UnknownProviderError(ValueError):
    pass


def register_provider(name: str, factory: Callable[[], AgentProvider]) -> None:
    _FACTORIES[name] = factory


def provider_names() -> tuple[str, ...]:
    return tuple(sorted(_FACTORIES))


def create_provider(name: str) -> AgentProvider:
    factory = _FACTORIES.get(name)
    if factory is None:
        known = ", ".join(provider_names()) or "none"
        raise UnknownProviderError(f"unknown agent provider {name!r} (known: {known})")
    return factory()
