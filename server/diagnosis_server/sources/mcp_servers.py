"""MCP servers: their tools as ``mcp.<server>.<tool>``, through the official ``mcp`` SDK (stdio or streamable HTTP).

A server is connected when its environment opens: a stdio server is started as a subprocess (with only the
``env`` it is given on top of a minimal inherited set), a URL server is reached over streamable HTTP. The
connection is held by a task of its own (the SDK's task groups must be entered and left in one task) and is
bounded: a server that does not answer the handshake and the tool listing within ``startup_timeout_s`` is
stopped (the SDK kills the subprocess) and its environment opens without it. A server that cannot be had is
not tried again on every call: the calls within a back-off (``RETRY_FIRST_S``, doubling to ``RETRY_MAX_S``)
fail at once with the start's error, so a server hung at its handshake costs one bounded start per back-off,
not a process and a wait a call. A connection that breaks under a call (a stdio server that crashed) is
dropped, and the next call starts the server again.

Tools offered: the allow-list ``tools`` when given (names the server does not list are left out), else only
the tools the server annotates ``readOnlyHint``. The tool's input schema is the server's. The recorded output
is the result's ``structuredContent`` when present, else ``{"content": [...]}`` (the content items as JSON); an
``isError`` result, a JSON-RPC error and a broken connection are ``ToolError``s with the server's message.
Everything goes through the redactor, with the server's configured secrets added.

Its source kind, ``MCP``: one ``[[environments.NAME.mcp]]`` table a server (``McpServerConfig``), its connection
started once every environment is open (``LaterStart``).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import structlog
from pydantic import Field, field_validator, model_validator

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.sources.http import MAX_BODY_BYTES, USER_AGENT, BodyTooLarge, safe_url, too_large, trace_headers
from diagnosis_server.sources.sections import (
    DEFAULT_TIMEOUT_S,
    ENV_VAR_PATTERN,
    Seconds,
    SecretFrom,
    TokenAuth,
    check_url,
)
from diagnosis_server.sources.source import Opened, Opening, Prepared, SourceInfo, SourceKind, url_secrets
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import SourceUnreachable, Tool, ToolError

log = structlog.get_logger(__name__)

TOOL_PREFIX = "mcp."
MCP_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
DEFAULT_STARTUP_TIMEOUT_S = 30.0
MAX_TOOL_NAME = 128
MAX_LISTED_PAGES = 20
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_STOP_S = 10.0
# The back-off between starts of a server that could not be had: first, then doubling up to the most.
RETRY_FIRST_S = 5.0
RETRY_MAX_S = 60.0


@dataclass(frozen=True, slots=True)
class McpTarget:
    """How to reach one MCP server (secrets already read)."""

    name: str
    command: tuple[str, ...] | None = None
    url: str | None = None
    env: Mapping[str, str] | None = None
    # The values of ``env`` the environment marks as secrets (and passwords inside its plain URLs): redacted.
    secret_values: tuple[str, ...] = ()
    bearer_token: str | None = None
    allow: tuple[str, ...] | None = None
    startup_timeout_s: float = 30.0
    timeout_s: float = 10.0

    @property
    def endpoint(self) -> str:
        """Where it is, safe to show: the URL without userinfo, or the program of a stdio server."""
        if self.url is not None:
            return safe_url(self.url)
        return f"stdio:{os.path.basename(self.command[0])}" if self.command else "stdio"

    def secrets(self) -> list[str]:
        return [*self.secret_values, *([self.bearer_token] if self.bearer_token else [])]


@dataclass(frozen=True, slots=True)
class ListedTool:
    name: str
    description: str
    input_schema: JsonObject
    read_only: bool


class McpServerSource:
    """One MCP server of one environment: its connection, its tools, its calls."""

    def __init__(self, target: McpTarget, redactor: Redactor) -> None:
        self.target = target
        self._redactor = redactor.with_secrets(target.secrets())
        self._client: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._listed: dict[str, ListedTool] = {}
        self._closed = False
        self.last_error = ""
        # While the server could not be had: no start before this (monotonic), and the next back-off.
        self._retry_at = 0.0
        self._backoff_s = RETRY_FIRST_S
        # Connection tasks that did not stop when asked (ended at close, never waited on at length).
        self._stray: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ connection

    async def open(self) -> bool:
        """Connects and lists the tools; False (logged, no secret) when the server cannot be had in time."""
        try:
            await self._connect()
            return True
        except ToolError as exc:
            self.last_error = str(exc)
            log.warning(
                "mcp_server_unavailable", server=self.target.name, endpoint=self.target.endpoint, error=str(exc)
            )
            return False

    async def _connect(self) -> None:
        """Starts the connection; on failure, the back-off before the next start begins."""
        try:
            await self._start()
        except ToolError as exc:
            self.last_error = str(exc)
            self._retry_at = time.monotonic() + self._backoff_s
            self._backoff_s = min(self._backoff_s * 2, RETRY_MAX_S)
            raise
        self._retry_at, self._backoff_s = 0.0, RETRY_FIRST_S

    async def _start(self) -> None:
        ready: asyncio.Future[list[ListedTool]] = asyncio.get_running_loop().create_future()
        closing = asyncio.Event()
        owner = asyncio.create_task(self._own(ready, closing), name=f"mcp server {self.target.name}")
        try:
            listed = await asyncio.wait_for(asyncio.shield(ready), timeout=self.target.startup_timeout_s)
        except TimeoutError:
            await self._stop(owner, closing)
            raise SourceUnreachable(
                f"mcp server {self.target.name} did not start within {self.target.startup_timeout_s:g} s"
            ) from None
        except Exception as exc:
            await self._stop(owner, closing)
            raise SourceUnreachable(
                f"MCP server {self.target.name!r} cannot be reached: {self._describe(exc)}"
            ) from None
        self._owner, self._closing = owner, closing
        self._listed = {tool.name: tool for tool in listed}

    async def _own(self, ready: asyncio.Future[list[ListedTool]], closing: asyncio.Event) -> None:
        from mcp import Client

        try:
            async with Client(self._server_parameters(), read_timeout_seconds=self.target.timeout_s) as client:
                listed = await _list_tools(client)
                self._client = client
                if not ready.done():
                    ready.set_result(listed)
                await closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError("cancelled"))
            if not isinstance(exc, Exception):
                raise
            log.warning("mcp_server_connection_lost", server=self.target.name, error=self._describe(exc))
        finally:
            self._client = None

    def _server_parameters(self) -> Any:
        if self.target.command is not None:
            from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

            command, *args = self.target.command
            parameters = StdioServerParameters(
                command=command, args=list(args), env=get_default_environment() | dict(self.target.env or {})
            )
            # The server's stderr is dropped: it may print what it was given, and nothing of it can be redacted.
            devnull = open(os.devnull, "w")  # noqa: SIM115 (closed with the transport)
            return _OwnedTransport(stdio_client(parameters, errlog=devnull), devnull.close)
        return self._http_transport()

    def _http_transport(self) -> Any:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"User-Agent": USER_AGENT}
        if self.target.bearer_token:
            headers["Authorization"] = f"Bearer {self.target.bearer_token}"

        async def inject(request: httpx2.Request) -> None:
            request.headers.update(trace_headers())

        client = httpx2.AsyncClient(
            headers=headers,
            timeout=httpx2.Timeout(self.target.timeout_s, read=300.0),
            event_hooks={"request": [inject]},
            trust_env=False,
        )
        assert self.target.url is not None
        return _OwnedTransport(streamable_http_client(self.target.url, http_client=client), client.aclose)

    async def _stop(self, owner: asyncio.Task[None], closing: asyncio.Event) -> None:
        closing.set()
        done, _ = await asyncio.wait({owner}, timeout=2.0)
        if not done:
            owner.cancel()
            done, _ = await asyncio.wait({owner}, timeout=_STOP_S)
        if not done:
            self._stray.add(owner)
            owner.add_done_callback(self._stray.discard)

    async def _lost(self, client: Any, error: str) -> None:
        """Not the server's answer: the connection itself failed (its process died). Started again next call."""
        log.warning("mcp_server_connection_lost", server=self.target.name, error=error)
        async with self._lock:
            if self._client is client:
                await self._drop()

    async def _drop(self) -> None:
        """The connection broke under a call: it is stopped, and the next call starts the server again."""
        owner, closing = self._owner, self._closing
        self._owner = self._closing = None
        self._client = None
        if owner is not None and closing is not None:
            await self._stop(owner, closing)

    async def aclose(self) -> None:
        self._closed = True
        owner, closing = self._owner, self._closing
        self._owner = self._closing = None
        if owner is not None and closing is not None:
            await self._stop(owner, closing)
        stray = set(self._stray)
        for task in stray:
            task.cancel()
        if stray:  # bounded: a task that ignores its cancellation does not hold the server's exit
            await asyncio.wait(stray, timeout=1.0)

    # ------------------------------------------------------------------ tools

    def serves(self, tool: str) -> bool:
        """Whether ``tool`` is one of this server's (``mcp.<server>.<tool>``)."""
        parts = tool.split(".")
        return tool.startswith(TOOL_PREFIX) and len(parts) >= 3 and parts[1] == self.target.name

    def tools(self) -> list[Tool]:
        """The tools offered: the allow-list's (as listed by the server), else the read-only ones."""
        allow = self.target.allow
        if allow is not None:
            missing = [name for name in allow if name not in self._listed]
            if missing and self._listed:
                log.warning("mcp_tools_not_listed", server=self.target.name, tools=missing)
            chosen = [self._listed.get(name) or ListedTool(name, "", {"type": "object"}, False) for name in allow]
            if self._listed:
                chosen = [tool for tool in chosen if tool.name in self._listed]
        else:
            chosen = [tool for tool in self._listed.values() if tool.read_only]
        out: list[Tool] = []
        for tool in chosen:
            full = f"{TOOL_PREFIX}{self.target.name}.{tool.name}"
            if len(full) > MAX_TOOL_NAME or not _TOOL_NAME.fullmatch(tool.name):
                log.warning("mcp_tool_name_unusable", server=self.target.name, tool=tool.name[:80])
                continue
            out.append(McpTool(self, full, tool))
        return out

    async def call(self, tool_name: str, full_name: str, arguments: JsonObject) -> JsonValue:
        client = await self._connected(full_name)
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        try:
            result = await client.call_tool(tool_name, dict(arguments), read_timeout_seconds=self.target.timeout_s)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                await self._lost(client, "Connection closed")
            raise ToolError(self._redactor.text(f"{full_name}: {exc}")) from None
        except (TimeoutError, asyncio.CancelledError):
            raise
        except Exception as exc:
            described = self._describe(exc)
            await self._lost(client, described)
            raise ToolError(f"{full_name}: the MCP server failed the call ({described})") from None
        if _result_size(result) > MAX_BODY_BYTES:
            # Not converted, redacted nor trimmed: an answer this large is dropped as soon as it is had.
            raise BodyTooLarge(too_large(full_name, MAX_BODY_BYTES))
        if result.is_error:
            text = " ".join(
                str(getattr(item, "text", "")) for item in result.content if getattr(item, "type", "") == "text"
            )
            raise ToolError(self._redactor.text(f"{full_name}: {' '.join(text.split())[:400] or 'the tool failed'}"))
        if result.structured_content is not None:
            return self._redactor.value(_json_value(result.structured_content))
        content: list[JsonValue] = [
            _json_value(item.model_dump(by_alias=True, exclude_none=True, mode="json")) for item in result.content
        ]
        return self._redactor.value({"content": content})

    async def _connected(self, full_name: str) -> Any:
        if self._closed:
            raise ToolError(f"{full_name}: the environment is closed")
        async with self._lock:
            if self._client is None or (self._owner is not None and self._owner.done()):
                left = self._retry_at - time.monotonic()
                if left > 0:  # the start's error, as it was said ("... did not start within 30 s")
                    log.info("mcp_server_backing_off", server=self.target.name, retry_in_s=round(left, 1))
                    raise ToolError(self.last_error)
                await self._drop()
                await self._connect()
            return self._client

    def _describe(self, exc: BaseException) -> str:
        group = getattr(exc, "exceptions", None)
        if group:
            exc = group[0]
        text = " ".join(str(exc).split())[:200]
        return self._redactor.text(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


class _OwnedTransport:
    """A transport that releases what it was built with (an httpx2 client, a file) when it closes."""

    def __init__(self, transport: Any, release: Callable[[], object]) -> None:
        self._transport = transport
        self._release = release

    async def __aenter__(self) -> Any:
        return await self._transport.__aenter__()

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await self._transport.__aexit__(*exc_info)
        finally:
            released = self._release()
            if asyncio.iscoroutine(released):
                await released


async def _list_tools(client: Any) -> list[ListedTool]:
    listed: list[ListedTool] = []
    cursor: str | None = None
    for _ in range(MAX_LISTED_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            annotations = tool.annotations
            schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
            listed.append(
                ListedTool(
                    name=tool.name,
                    description=tool.description or tool.title or "",
                    input_schema=_json_value(schema),  # type: ignore[arg-type]
                    read_only=bool(annotations is not None and annotations.read_only_hint),
                )
            )
        cursor = page.next_cursor
        if not cursor:
            break
    return listed


def _json_value(value: Any) -> JsonValue:
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_json_value(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _result_size(result: Any) -> int:
    """About the bytes a tool result holds: its content items' text and data, and its structured content's
    strings (counted without writing the result out as JSON)."""
    size = 0
    for item in result.content:
        for name in ("text", "data", "blob"):
            value = getattr(item, name, None)
            if isinstance(value, str | bytes):
                size += len(value)
        resource = getattr(item, "resource", None)
        for name in ("text", "blob"):
            value = getattr(resource, name, None)
            if isinstance(value, str | bytes):
                size += len(value)
    return size + _strings_size(result.structured_content)


def _strings_size(value: Any, depth: int = 0) -> int:
    if isinstance(value, str | bytes):
        return len(value)
    if depth > 64:
        return 0
    if isinstance(value, Mapping):
        return sum(len(str(k)) + _strings_size(v, depth + 1) + 4 for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(_strings_size(v, depth + 1) + 1 for v in value)
    return 8 if value is not None else 0


class McpTool:
    """``mcp.<server>.<tool>``: the server's tool, its schema, its description."""

    def __init__(self, source: McpServerSource, full_name: str, listed: ListedTool) -> None:
        self._source = source
        self._listed = listed
        self.name = full_name
        self.description = listed.description or f"The {listed.name} tool of MCP server {source.target.name}."
        self.input_schema = listed.input_schema

    async def call(self, arguments: JsonObject) -> JsonValue:
        return await self._source.call(self._listed.name, self.name, arguments)


class McpServerConfig(TokenAuth):
    name: Annotated[str, Field(pattern=MCP_NAME_PATTERN)]
    # stdio: the command and its arguments; or url: streamable HTTP.
    command: list[Annotated[str, Field(min_length=1)]] | None = Field(default=None, min_length=1)
    url: str | None = None
    # The allow-list; None: only the tools the server annotates readOnlyHint.
    tools: list[Annotated[str, Field(min_length=1, max_length=128)]] | None = None
    # Environment variables of a stdio server (on top of a minimal inherited set); every value is a secret.
    env: dict[str, str | SecretFrom] = Field(default_factory=dict)
    startup_timeout_s: Seconds = DEFAULT_STARTUP_TIMEOUT_S
    timeout_s: Seconds = DEFAULT_TIMEOUT_S

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else check_url(value)

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str | SecretFrom]) -> dict[str, str | SecretFrom]:
        for name in value:
            if not ENV_VAR_PATTERN.fullmatch(name):
                raise ValueError("keys must be environment variable names")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (stdio) or url (streamable HTTP)")
        if self.command is not None and self.token_ref() is not None:
            raise ValueError("a bearer token is for url servers; give a stdio server its secrets in env")
        if self.url is not None and self.env:
            raise ValueError("env is for stdio servers (command)")
        return self


def _unique_names(servers: Sequence[McpServerConfig]) -> str | None:
    names = [server.name for server in servers]
    duplicate = next((name for name in names if names.count(name) > 1), None)
    return None if duplicate is None else f"two mcp servers are named {duplicate!r}"


def _prepare(server: McpServerConfig, opening: Opening, key: str) -> Prepared:
    values = {
        name: value if isinstance(value, str) else str(opening.secret(value, f"{key}.env.{name}"))
        for name, value in server.env.items()
    }
    # Only the values the environment reads as secrets ({ env = ... }, { file = ... }) are redacted as such;
    # a plain value (a URL, a flag) stays readable, less any password inside it.
    marked = tuple(values[name] for name, value in server.env.items() if not isinstance(value, str))
    plain_urls = [s for value in server.env.values() if isinstance(value, str) for s in url_secrets(value)]
    target = McpTarget(
        name=server.name,
        command=tuple(server.command) if server.command else None,
        url=server.url,
        env=values,
        secret_values=(*marked, *plain_urls),
        bearer_token=opening.secret(server.token_ref(), server.token_key(key)),
        allow=tuple(server.tools) if server.tools is not None else None,
        startup_timeout_s=server.startup_timeout_s,
        timeout_s=server.timeout_s,
    )

    async def open_(redactor: Redactor) -> Opened:
        source = McpServerSource(target, redactor)
        return Opened(
            sources=[SourceInfo("mcp", target.name, target.endpoint)], closers=[source.aclose], later=[source]
        )

    return Prepared(open_, tuple(url_secrets(server.url or "")))


MCP = SourceKind("mcp", McpServerConfig, _prepare, many=True, check=_unique_names)
