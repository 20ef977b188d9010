"""The versioned prompt catalog: one prompt a agent, audited by name and version, never by text (R-P-3)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AGENT_ROLES, AgentRole

CATALOG_DIR = Path(__file__).parent
PLACEHOLDER = "{{input}}"


class PromptCatalogError(ValueError):
    """The catalog file or a prompt file is missing or malformed."""


@dataclass(frozen=True, slots=True)
class Prompt:
    agent: AgentRole
    name: str
    version: str
    text: str

    def render(self, input_json: str) -> str:
        return self.text.replace(PLACEHOLDER, input_json)


@dataclass(frozen=True, slots=True)
class PromptCatalog:
    version: str
    prompts: dict[AgentRole, Prompt]

    def prompt(self, role: AgentRole) -> Prompt:
        return self.prompts[role]

    def audit(self) -> contracts_pb2.PromptAudit:
        """Catalog version and every agent's prompt name and version; never the text."""
        return contracts_pb2.PromptAudit(
            version=self.version,
            prompts=[
                contracts_pb2.PromptRef(agent=role, name=self.prompts[role].name, version=self.prompts[role].version)
                for role in AGENT_ROLES
            ],
        )


def load_catalog(directory: Path = CATALOG_DIR) -> PromptCatalog:
    path = directory / "catalog.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        version = str(raw["version"])
        prompts: dict[AgentRole, Prompt] = {}
        for role in AGENT_ROLES:
            entry = raw["prompts"][role]
            text = (directory / entry["file"]).read_text(encoding="utf-8")
            if PLACEHOLDER not in text:
                raise PromptCatalogError(f"{entry['file']}: the prompt has no {PLACEHOLDER} placeholder")
            prompts[role] = Prompt(agent=role, name=str(entry["name"]), version=str(entry["version"]), text=text)
    except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise PromptCatalogError(f"{path}: {exc}") from exc
    return PromptCatalog(version=version, prompts=prompts)


@cache
def default_catalog() -> PromptCatalog:
    return load_catalog()
