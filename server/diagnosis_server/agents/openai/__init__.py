"""The `openai` agent provider: any OpenAI-compatible chat-completions endpoint (an optional extra).

``create_provider()`` reads the DIAGNOSIS_OPENAI_* environment (see ``config``). The ``openai`` package
is imported only when a provider is built.
"""

from __future__ import annotations

from diagnosis_server.agents.openai.config import OpenAISettings
from diagnosis_server.agents.openai.errors import AgentConfigurationError, AgentRefusalError
from diagnosis_server.agents.openai.provider import OpenAIAgent, OpenAIProvider, create_provider

__all__ = [
    "AgentConfigurationError",
    "AgentRefusalError",
    "OpenAIAgent",
    "OpenAIProvider",
    "OpenAISettings",
    "create_provider",
]
