"""Settings and construction of the openai provider: env vars, per-agent models, clear configuration errors."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from pydantic import ValidationError

from diagnosis_server.agents.openai import AgentConfigurationError, OpenAIProvider, OpenAISettings, create_provider
from diagnosis_server.agents.registry import create_provider as create_named_provider
from tests.support.settings import set_environment

# Every variable the provider's settings read.
OPENAI_ENVIRONMENT = {
    "DIAGNOSIS_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    "DIAGNOSIS_OPENAI_API_KEY": "sk-test",
    "DIAGNOSIS_OPENAI_MODEL": "base-model",
    "DIAGNOSIS_OPENAI_VERIFIER_MODEL": "strict-model",
    "DIAGNOSIS_OPENAI_TIMEOUT_S": "2.5",
    "DIAGNOSIS_OPENAI_MAX_TOOL_CALLS": "3",
    "DIAGNOSIS_OPENAI_MAX_TOOL_OUTPUT_CHARS": "1000",
    "DIAGNOSIS_OPENAI_JSON_SCHEMA": "OFF",
}


def test_settings_read_the_diagnosis_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    set_environment(monkeypatch, OPENAI_ENVIRONMENT)
    settings = OpenAISettings()
    assert settings.base_url == "http://127.0.0.1:9/v1"
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-test"
    assert "sk-test" not in repr(settings)  # the key is a secret
    assert settings.timeout_s == 2.5
    assert (settings.max_tool_calls, settings.max_tool_output_chars, settings.json_schema) == (3, 1000, "off")
    assert settings.model_for("verifier") == "strict-model"
    assert settings.model_for("planner") == settings.model_for("composer") == "base-model"


@pytest.mark.parametrize(
    ("field", "value"),
    [("json_schema", "sometimes"), ("timeout_s", 0), ("max_tool_calls", -1), ("max_tool_output_chars", -5)],
)
def test_bad_settings_are_refused_with_the_field_named(field: str, value: object) -> None:
    options: dict[str, Any] = {field: value}  # a wrong type or value on purpose
    with pytest.raises(ValidationError, match=field):
        OpenAISettings(base_url="http://x/v1", model="m", **options)


@pytest.mark.parametrize(
    ("values", "missing"),
    [
        ({"model": "m"}, "DIAGNOSIS_OPENAI_BASE_URL"),
        ({"base_url": "http://127.0.0.1:9/v1"}, "DIAGNOSIS_OPENAI_MODEL"),
        ({"base_url": "http://127.0.0.1:9/v1", "model": "   "}, "DIAGNOSIS_OPENAI_MODEL"),
    ],
)
def test_missing_base_url_or_model_is_a_clear_configuration_error(values: dict[str, Any], missing: str) -> None:
    with pytest.raises(AgentConfigurationError, match=missing):
        OpenAIProvider(OpenAISettings(**values))


def test_per_agent_models_alone_are_enough() -> None:
    settings = OpenAISettings(
        base_url="http://127.0.0.1:9/v1",
        planner_model="p",
        executor_model="e",
        verifier_model="v",
        composer_model="c",
    )
    provider = OpenAIProvider(settings)
    assert [provider.settings.model_for(r) for r in ("planner", "executor", "verifier", "composer")] == list("pevc")


def test_registry_builds_the_openai_provider_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    set_environment(monkeypatch, {"DIAGNOSIS_OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "DIAGNOSIS_OPENAI_MODEL": "m"})
    provider = create_named_provider("openai")
    assert provider.name == "openai"
    assert isinstance(provider, OpenAIProvider)


def test_without_the_openai_package_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    settings = OpenAISettings(base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(AgentConfigurationError, match=r"pip install 'diagnosis-graph\[openai\]'"):
        create_provider(settings)
    with pytest.raises(AgentConfigurationError, match="needs the 'openai' package"):
        OpenAIProvider(settings)
