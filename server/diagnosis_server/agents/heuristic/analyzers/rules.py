"""The analyzers' rules: ``rules.toml`` (bundled, versioned) plus an operator's file that extends it.

``DIAGNOSIS_HEURISTIC_RULES_FILE`` names a TOML file of the same shape: its ``container``, ``event``, ``log`` and
``cluster`` rules come after the bundled ones (an event or container state the bundled rules already cover is decided by
the first rule that matches), its ``mcp`` tables map MCP tools to what they answer, and its ``thresholds``
override the bundled values. A bad file is one clear error
naming the file and the field.

Every pattern is matched in linear time (``text.matching``: RE2, or a lookaround pattern proven free of
backtracking on bounded text); a pattern that could backtrack on a crafted line is refused when the rules load.
"""

from __future__ import annotations

import importlib.resources
import os
import re
import tomllib
from functools import cache, cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from diagnosis_server.agents.heuristic.findings import Role
from diagnosis_server.text.matching import LinearPattern, Match, NotLinear
from diagnosis_server.validation_errors import first_problem

RULES_FILE_ENV = "DIAGNOSIS_HEURISTIC_RULES_FILE"
SUPPORTED_VERSION = 1

RoleName = Literal["symptom", "cause", "support", "link", "hypothesis"]
State = Literal["waiting", "terminated", "last_terminated", "pod", "unschedulable", "not_ready"]
Kind = Annotated[str, Field(min_length=1, max_length=60, pattern=r"^[a-z][a-z0-9_]*$")]
Phrase = Annotated[str, Field(min_length=2, max_length=80)]


class RulesError(ValueError):
    """A rules file that cannot be used; the message names the file and the field."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
        _linear((pattern,))
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    except NotLinear as exc:
        raise ValueError(f"not matchable in linear time: {exc}") from None
    return pattern


# Global inline flags ("(?i)") at the start of a pattern: Python takes them only at the start of a whole expression.
_LEADING_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")


def _alternative(pattern: str) -> str:
    """``pattern`` as one alternative of a log rule's expression: in a group of its own, with the global flags it
    starts with scoped to it (``(?i)timed out`` is ``(?i:timed out)``), so that it matches alone as it does joined."""
    flags, rest = "", pattern
    while (leading := _LEADING_FLAGS.match(rest)) is not None:
        flags, rest = flags + leading.group(1), rest[leading.end() :]
    if not flags:
        return f"(?:{pattern})"
    # A verbose pattern's comment runs to the end of its line: the group closes on the next.
    end = "\n)" if "x" in flags else ")"
    return f"(?{''.join(dict.fromkeys(flags))}:{rest}{end}"


def log_expression(patterns: tuple[str, ...]) -> str:
    """A log rule's patterns as the one expression every log line is tried against."""
    return "|".join(_alternative(p) for p in patterns)


class Thresholds(_Model):
    memory_near_limit: float = Field(default=0.9, gt=0, le=1)
    cpu_at_limit: float = Field(default=0.95, gt=0, le=1)
    disk_full: float = Field(default=0.95, gt=0, le=1)
    db_connections_full: float = Field(default=0.95, gt=0, le=1)
    restarts_min: int = Field(default=3, ge=1)
    slow_call_ms: float = Field(default=2000, gt=0)
    max_findings_per_kind: int = Field(default=3, ge=1, le=20)


class _Rule(_Model):
    kind: Kind
    role: RoleName
    strength: int = Field(default=0, ge=0, le=5)
    phrase: Phrase
    # Kinds of other findings that make this one a cause (a Certificate that cannot be renewed, while callers
    # report an expired certificate): it is then a cause of strength 3 or more.
    cause_with: tuple[Kind, ...] = ()
    # The ``cause_with`` findings count only when they are about the same workload (a pool's own series at its
    # size, beside the pool's timeout in that workload's log).
    cause_with_own: bool = False

    @property
    def role_value(self) -> Role:
        return Role(self.role)


class ContainerRule(_Rule):
    state: State
    reasons: tuple[Annotated[str, Field(min_length=1)], ...] = Field(min_length=1)


class EventRule(_Rule):
    reasons: tuple[Annotated[str, Field(min_length=1)], ...] = Field(min_length=1)
    message: str = ""
    # Reasons of a later event about the same object that say this one is over (FailedScheduling, then
    # Scheduled): the earlier event is not reported.
    cleared_by: tuple[Annotated[str, Field(min_length=1)], ...] = ()
    # Reasons of this rule Kubernetes reports as Normal events (the kubelet's "Back-off pulling image" is a
    # Normal BackOff, the volume binder's FailedBinding too): a read of the Warning events misses them, so the
    # Normal events of these reasons are read as well (``follow_ups``).
    normal_reasons: tuple[Annotated[str, Field(min_length=1)], ...] = ()

    @model_validator(mode="after")
    def _normal_reasons_are_reasons(self) -> EventRule:
        unknown = [r for r in self.normal_reasons if r not in self.reasons]
        if unknown:
            raise ValueError(f"normal_reasons {unknown} are not among the rule's reasons")
        return self

    @field_validator("message")
    @classmethod
    def _pattern(cls, value: str) -> str:
        return _compiles(value)

    @property
    def compiled(self) -> LinearPattern | None:
        return _linear((self.message,)) if self.message else None


class LogRule(_Rule):
    about: Literal["self", "target"]
    patterns: tuple[str, ...] = Field(min_length=1)
    # Only on lines at ERROR or worse, or that carry an HTTP 5xx access-log status.
    errors_only: bool = False
    # For a rule about a target: when the target is a host no known workload is named by (the caller is set up
    # with a name that does not exist), the finding is about the caller, with this phrase.
    unknown_host_phrase: Phrase | None = None
    # For a rule about a target: when the target is a Service host ``<name>.<namespace>.svc`` of a workload seen
    # only in other namespaces (the caller is set up with a name that does not exist there), the finding is about
    # the caller, with this phrase (``unknown_host_phrase`` when unset).
    misplaced_host_phrase: Phrase | None = None

    @field_validator("patterns")
    @classmethod
    def _patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            _compiles(pattern)
        # Checked (and compiled) here, at start-up: two patterns naming the same group cannot be one expression.
        try:
            _compiled(log_expression(value))
        except re.error as exc:
            raise ValueError(f"the patterns are not one regular expression together: {exc}") from None
        return value

    @cached_property
    def compiled(self) -> LinearPattern:
        """The patterns as one expression (``log_expression``'s alternatives, matched in linear time), compiled
        when the rule was read (every log line of a run is tried against it)."""
        return _linear(self.patterns)


Family = Literal["scheduling", "admission", "startup", "runtime", "infrastructure", "credentials"]


class ClusterRule(_Model):
    """What a controller's or the kubelet's text says, for the cluster analyzers (``analyzers/``): the family
    that reads it, the fault kind, the pattern (its named groups are the objects it names: ``name``, ``key``,
    ``resource``) and how a statement phrases the fault."""

    family: Family
    kind: Kind
    pattern: str
    phrase: Phrase
    # The ports of the server a client's text is about (a database's: 27017 for MongoDB), when the text names none.
    ports: tuple[Annotated[int, Field(ge=1, le=65535)], ...] = ()

    @field_validator("pattern")
    @classmethod
    def _pattern(cls, value: str) -> str:
        return _compiles(value)

    @property
    def compiled(self) -> re.Pattern[str]:
        return _compiled(self.pattern)


class McpRule(_Model):
    """An MCP tool the embedded default may call: what it answers and its arguments (templates of ``{workload}``,
    ``{namespace}``, ``{start}``, ``{end}`` and ``{question}``). Its output is read by the analyzers of what it
    answers when it has that source's shape (a Loki or Prometheus body, a Kubernetes EventList)."""

    tool: Annotated[str, Field(pattern=r"^mcp\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$")]
    answers: Literal["logs", "metrics", "events", "text"]
    arguments: dict[str, str] = {}


class Rules(_Model):
    version: int = SUPPORTED_VERSION
    thresholds: Thresholds = Thresholds()
    container: tuple[ContainerRule, ...] = ()
    event: tuple[EventRule, ...] = ()
    log: tuple[LogRule, ...] = ()
    cluster: tuple[ClusterRule, ...] = ()

    def of_family(self, family: str) -> tuple[ClusterRule, ...]:
        return tuple(rule for rule in self.cluster if rule.family == family)

    def lookup_failure(self, message: str) -> Match | None:
        """The first ``dns`` log rule's match in a line: a name that could not be resolved."""
        return next((m for rule in self.log if rule.kind == "dns" and (m := rule.compiled.search(message))), None)

    mcp: tuple[McpRule, ...] = ()

    @field_validator("version")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != SUPPORTED_VERSION:
            raise ValueError(f"version {value} is not supported (this service reads version {SUPPORTED_VERSION})")
        return value

    @property
    def normal_event_reasons(self) -> tuple[str, ...]:
        """Every event rule's ``normal_reasons``, in rule order, each once."""
        return tuple(dict.fromkeys(r for rule in self.event for r in rule.normal_reasons))

    def extended(self, other: Rules, overrides: dict[str, object]) -> Rules:
        thresholds = Thresholds.model_validate({**self.thresholds.model_dump(), **overrides})
        return Rules(
            version=self.version,
            thresholds=thresholds,
            container=(*self.container, *other.container),
            event=(*self.event, *other.event),
            log=(*self.log, *other.log),
            cluster=(*self.cluster, *other.cluster),
            mcp=(*self.mcp, *other.mcp),
        )


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@cache
def _linear(patterns: tuple[str, ...]) -> LinearPattern:
    return LinearPattern(patterns)


def _parse(text: str, where: str) -> tuple[Rules, dict[str, object]]:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{where}: not TOML: {exc}") from None
    try:
        rules = Rules.model_validate(raw)
    except ValidationError as exc:
        raise RulesError(f"{where}: {first_problem(exc, 'rules')}") from None
    thresholds = raw.get("thresholds")
    return rules, dict(thresholds) if isinstance(thresholds, dict) else {}


def bundled_rules() -> Rules:
    text = importlib.resources.files("diagnosis_server.agents.heuristic.analyzers").joinpath("rules.toml")
    return _parse(text.read_text("utf-8"), "rules.toml")[0]


@cache
def load_rules(extra_file: str | None = None) -> Rules:
    """The bundled rules, extended by ``extra_file`` when given."""
    rules = bundled_rules()
    if not extra_file:
        return rules
    path = Path(extra_file)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise RulesError(f"{path}: {exc.strerror or exc}") from None
    other, overrides = _parse(text, str(path))
    return rules.extended(other, overrides)


def current_rules() -> Rules:
    """The rules in force: the bundled ones and the operator's file named by ``DIAGNOSIS_HEURISTIC_RULES_FILE``."""
    return load_rules(os.environ.get(RULES_FILE_ENV) or None)
