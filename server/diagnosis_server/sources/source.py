"""A source kind as one object: its section of the environments file, how a section opens into tools.

A ``SourceKind`` names its key in an environment's table (``prometheus = {...}``, ``[[environments.X.mcp]]``
when ``many``), the pydantic model of that section, an optional check of the environment's sections together,
and ``prepare``: a section, with the file and the environment it is in, becomes a ``Prepared`` (its secrets
read: a missing one is an ``EnvironmentsError`` before anything is opened) that opens, with the environment's
redactor, into an ``Opened``: its tools, what a listing shows of it, what closes it, what the planner may know
of it, and what starts later. ``kinds.SOURCES`` registers them; ``config`` and ``registry`` read only that list.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel

from diagnosis_server.conversions import JsonObject
from diagnosis_server.sources.sections import SecretFrom
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import Tool

if TYPE_CHECKING:
    from diagnosis_server.sources.config import Environments

Closer = Callable[[], Awaitable[None]]
S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What may be shown of a source: its kind, its name, where it is (never a credential)."""

    kind: str
    name: str
    endpoint: str


class LaterStart(Protocol):
    """A part of a source started once every environment is open, all together and each bounded (an MCP server's
    connection); its tools are the environment's from then on, started or not."""

    def serves(self, tool: str) -> bool:
        """Whether ``tool`` is one of its tools (``tools call`` starts only the part serving the tool called)."""
        ...

    async def open(self) -> bool: ...

    def tools(self) -> list[Tool]: ...


@dataclass(slots=True)
class Opened:
    """One section opened: its tools, what a listing shows, what closes it, what the planner may know up front
    (entries of the environment's context, under the source's own key), and what starts later."""

    tools: list[Tool] = field(default_factory=list)
    sources: list[SourceInfo] = field(default_factory=list)
    closers: list[Closer] = field(default_factory=list)
    context: JsonObject = field(default_factory=dict)
    later: list[LaterStart] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A section whose secrets are read: the values the environment's redactor removes, and how it opens."""

    open: Callable[[Redactor], Awaitable[Opened]]
    secrets: tuple[str, ...] = ()


class Opening:
    """What a section's ``prepare`` reads: the environments file (secrets, paths) and the environment's name."""

    def __init__(self, config: Environments, environment: str) -> None:
        self.config = config
        self.environment = environment

    def where(self, key: str) -> str:
        return self.config.where(self.environment, key)

    def secret(self, ref: SecretFrom | None, key: str) -> str | None:
        """The secret's value (None when no place is given); EnvironmentsError naming the key when unreadable."""
        return None if ref is None else self.config.secret(ref, environment=self.environment, key=key)

    def resolve_path(self, value: str) -> Path:
        return self.config.resolve_path(value)


@dataclass(frozen=True, eq=False)
class SourceKind(Generic[S]):
    """One kind of source: its key in an environment's table, its section's model, and how a section opens.

    ``many``: the key holds a list of tables (``[[environments.X.mcp]]``), each reported as ``key[i]``; else one
    optional table. ``check``: a problem of the environment's sections together (two MCP servers of one name),
    reported on the environment. ``prepare(section, opening, key)``: the section with its secrets read.

    Its tools are named ``<key>.<tool>`` and its ``SourceInfo`` kind is the key: the run's breaker, the error
    classes and the source failures an answer reports read a tool's source from its name (a source of several
    instances names them as MCP does, ``mcp.<server>.<tool>``, or gives its tools a ``source``)."""

    key: str
    section: type[S]
    prepare: Callable[[S, Opening, str], Prepared]
    many: bool = False
    check: Callable[[Sequence[S]], str | None] | None = None


def url_secrets(url: str) -> list[str]:
    """The password inside a URL's userinfo, if any (redacted wherever the environment's sources answer)."""
    try:
        password = urlsplit(url).password
    except ValueError:  # not a URL (an env value may be anything)
        return []
    return [unquote(password)] if password else []
