"""Agent providers by name: `heuristic` (the embedded default), `openai`, and any registered by code.

Built-in providers are imported only when asked for, so an optional dependency (the `openai` package)
is needed only by the provider that uses it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from diagnosis_server.agents.base import AgentProvider

# name -> module whose `create_provider()` builds it
_BUILTIN: dict[str, str] = {
    "heuristic": "diagnosis_server.agents.heuristic",
    "openai": "diagnosis_server.agents.openai",
}
_FACTORIES: dict[str, Callable[[], AgentProvider]] = {}


class UnknownProviderError(ValueError):
    pass


def register_provider(name: str, factory: Callable[[], AgentProvider]) -> None:
    _FACTORIES[name] = factory


def provider_names() -> tuple[str, ...]:
    return tuple(sorted({*_BUILTIN, *_FACTORIES}))


def create_provider(name: str) -> AgentProvider:
    factory = _FACTORIES.get(name)
    if factory is not None:
        return factory()
    module_name = _BUILTIN.get(name)
    if module_name is None:
        raise UnknownProviderError(f"unknown agent provider {name!r} (known: {', '.join(provider_names())})")
    module = importlib.import_module(module_name)
    provider: AgentProvider = module.create_provider()
    return provider
