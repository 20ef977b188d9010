"""Settings of the `openai` agent provider: any OpenAI-compatible chat-completions endpoint.

Read from the environment (prefix ``DIAGNOSIS_OPENAI_``) or given as keyword arguments::

    DIAGNOSIS_OPENAI_BASE_URL=http://127.0.0.1:11434/v1   # required: the endpoint's /v1 root
    DIAGNOSIS_OPENAI_MODEL=qwen2.5:14b                    # required: the default model of the four agents
    DIAGNOSIS_OPENAI_API_KEY=...                          # optional: local endpoints often need none
    DIAGNOSIS_OPENAI_VERIFIER_MODEL=...                   # optional per-agent overrides (planner, executor,
                                                          # verifier, composer)
    DIAGNOSIS_OPENAI_TIMEOUT_S=60                         # one endpoint call's time-out
    DIAGNOSIS_OPENAI_MAX_TOOL_CALLS=16                    # tool calls of one Executor run
    DIAGNOSIS_OPENAI_MAX_TOOL_OUTPUT_CHARS=60000          # tool output fed back to the model in one Executor run
    DIAGNOSIS_OPENAI_JSON_SCHEMA=auto                     # auto | on | off (structured output)
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from diagnosis_server.agents.base import AgentRole

JsonSchemaMode = Literal["auto", "on", "off"]

ENV_PREFIX = "DIAGNOSIS_OPENAI_"


class OpenAISettings(BaseSettings):
    """Where the endpoint is, which model each agent uses, and the bounds of one Executor run."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    base_url: str | None = Field(default=None, description="The endpoint's API root, e.g. https://host/v1.")
    api_key: SecretStr | None = Field(default=None, description="Bearer key; a placeholder is sent when empty.")
    model: str | None = Field(default=None, description="The model of every agent without its own override.")
    planner_model: str | None = None
    executor_model: str | None = None
    verifier_model: str | None = None
    composer_model: str | None = None
    timeout_s: float = Field(default=60.0, gt=0, le=3600, description="Time-out of one endpoint call.")
    max_tool_calls: int = Field(default=16, ge=0, le=256, description="Tool calls of one Executor run.")
    max_tool_output_chars: int = Field(
        default=60_000, ge=0, le=10_000_000, description="Characters of tool output fed back in one Executor run."
    )
    json_schema: JsonSchemaMode = Field(
        default="auto",
        description=(
            "auto: json_schema structured output, falling back to JSON mode (and then to none) when the endpoint "
            "rejects it; on: json_schema only; off: JSON mode only."
        ),
    )

    @field_validator("base_url", "model", "planner_model", "executor_model", "verifier_model", "composer_model")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        return value or None

    @field_validator("json_schema", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    def model_for(self, role: AgentRole) -> str:
        """The model the agent of ``role`` uses: its override, else the default model ('' when neither is set)."""
        override: str | None = getattr(self, f"{role}_model")
        return override or self.model or ""

    def missing(self) -> list[str]:
        """The environment variables a working provider still needs (empty when complete)."""
        needed: list[str] = []
        if not self.base_url:
            needed.append(f"{ENV_PREFIX}BASE_URL")
        if not self.model and not all(
            getattr(self, f"{role}_model") for role in ("planner", "executor", "verifier", "composer")
        ):
            needed.append(f"{ENV_PREFIX}MODEL")
        return needed
