"""`diagnosis tools list|call`: an environment's or a scenario's tools, without a server (how to check a config).

Both read the settings `serve` reads (DIAGNOSIS_* env vars, DIAGNOSIS_CONFIG_FILE; ``--environments`` and
``--scenarios-dir`` override) and pick the tools as a request would: ``--environment NAME`` or ``--scenario NAME``
(not both); neither: the default environment when one is configured, else the default scenario.

- ``tools list [--json]``: each tool's name, description and input schema.
- ``tools call TOOL --args JSON [--json]``: calls it exactly as a run would (the tool runner: allow-list, timeout,
  output cap, redaction) and prints the invocation as the run would record it (``--json``: the ToolInvocation in
  proto JSON). Exit status: 0 when the invocation is OK or TRUNCATED, 1 otherwise, 2 for a usage or config error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from diagnosis.v1 import contracts_pb2
from diagnosis_server.cli.serve import add_source_options
from diagnosis_server.conversions import JsonObject, enum_short_name, from_value, message_to_dict
from diagnosis_server.graph.context import Limits, ToolEnvironment
from diagnosis_server.settings import SettingsError, load_settings
from diagnosis_server.sources.config import EnvironmentsError, load_environments
from diagnosis_server.sources.registry import EnvironmentRegistry
from diagnosis_server.tools.runner import ToolBlockedError, ToolRunner
from diagnosis_server.tools.scenario import ScenarioError, all_scenarios


class ToolsError(Exception):
    pass


def register(subparsers: Any) -> None:
    tools = subparsers.add_parser(
        "tools", help="list or call an environment's tools (no server needed)", description=__doc__.split("\n")[0]
    )
    actions = tools.add_subparsers(dest="tools_command", metavar="ACTION", required=True)
    common = argparse.ArgumentParser(add_help=False)
    which = common.add_mutually_exclusive_group()
    which.add_argument("--environment", metavar="NAME", default="", help="a configured environment")
    which.add_argument("--scenario", metavar="NAME", default="", help="a recorded scenario pack")
    add_source_options(common)
    common.add_argument("--json", action="store_true", help="print JSON instead of text")
    listing = actions.add_parser("list", parents=[common], help="list the tools", description="List the tools.")
    listing.set_defaults(func=_run(_list))
    call = actions.add_parser(
        "call", parents=[common], help="call one tool as a run would", description="Call one tool as a run would."
    )
    call.add_argument("tool", metavar="TOOL")
    call.add_argument("--args", default="{}", metavar="JSON", help="the arguments, a JSON object (default {})")
    call.set_defaults(func=_run(_call))


def _run(action: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            result: int = asyncio.run(action(args))
            return result
        except (ToolsError, SettingsError, EnvironmentsError, ScenarioError) as exc:
            print(f"diagnosis tools: error: {exc}", file=sys.stderr)
            return 2

    return run


@asynccontextmanager
async def _tools(args: argparse.Namespace, for_tool: str | None = None) -> AsyncIterator[tuple[str, ToolEnvironment]]:
    settings = load_settings(environments_file=args.environments, scenarios_dir=args.scenarios_dir)
    from diagnosis_server.api.logging import configure_logging

    configure_logging("warning")  # on stderr: a source that cannot be had is said; stdout stays the answer
    environments = load_environments(settings.environments_file) if settings.environments_file else None
    name = args.environment or (None if args.scenario else (environments.default if environments else None))
    if name:
        if environments is None or name not in environments.environments:
            known = ", ".join(environments.environments) if environments else "none are configured"
            raise ToolsError(f"unknown environment {name!r} (known: {known})")
        registry = await EnvironmentRegistry.open(environments, only={name}, for_tool=for_tool)
        try:
            yield f"environment {name}", registry.tools_for(name)
        finally:
            await registry.aclose()
        return
    from diagnosis_server.api.components import pack_tools_for

    packs = all_scenarios(settings.scenarios_dir)
    scenario = args.scenario or settings.default_scenario
    if scenario not in packs:
        raise ToolsError(f"unknown scenario {scenario!r} (known: {', '.join(packs)})")
    yield f"scenario {scenario}", pack_tools_for(packs)(scenario)


async def _list(args: argparse.Namespace) -> int:
    async with _tools(args) as (where, tools):
        specs = tools.toolset.specs()
    if args.json:
        print(json.dumps({"tools": specs}, indent=2, ensure_ascii=False))
        return 0
    print(f"{len(specs)} tools of {where}:")
    for spec in specs:
        print(f"\n{spec['name']}\n  {spec['description']}")
        schema = spec["input_schema"]
        properties = schema.get("properties") if isinstance(schema, dict) else None
        required = schema.get("required", []) if isinstance(schema, dict) else []
        for arg, detail in (properties or {}).items() if isinstance(properties, dict) else []:
            kind = detail.get("type", "any") if isinstance(detail, dict) else "any"
            mark = " (required)" if isinstance(required, list) and arg in required else ""
            print(f"  - {arg}: {kind}{mark}")
    return 0


async def _call(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        raise ToolsError(f"--args is not JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise ToolsError("--args must be a JSON object")
    recorded: list[contracts_pb2.ToolInvocation] = []

    async def recorder(invocation: contracts_pb2.ToolInvocation) -> None:
        recorded.append(invocation)

    limits = Limits()
    # Only what serves the tool called is started (its MCP server), none for another source's tool.
    async with _tools(args, for_tool=args.tool) as (_, tools):
        runner = ToolRunner(
            run_id="cli",
            toolset=tools.toolset,
            recorder=recorder,
            timeout_s=limits.tool_timeout_s,
            max_output_bytes=limits.max_tool_output_bytes,
        )
        with contextlib.suppress(ToolBlockedError):  # recorded BLOCKED, printed below
            await runner.call(args.tool, arguments)
    invocation = recorded[-1]
    if args.json:
        print(json.dumps(message_to_dict(invocation), indent=2, ensure_ascii=False))
    else:
        _print_invocation(invocation)
    ok = (contracts_pb2.TOOL_INVOCATION_STATUS_OK, contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED)
    return 0 if invocation.status in ok else 1


def _print_invocation(invocation: contracts_pb2.ToolInvocation) -> None:
    status = enum_short_name(contracts_pb2.ToolInvocationStatus, invocation.status)
    print(f"invocation: {invocation.invocation_id}")
    print(f"tool:       {invocation.tool_name}")
    print(f"status:     {status} ({invocation.duration_ms} ms)")
    arguments: JsonObject = message_to_dict(invocation.arguments) if invocation.arguments.fields else {}
    print(f"arguments:  {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}")
    if invocation.error:
        print(f"error:      {invocation.error}")
    if invocation.HasField("output") and invocation.output.WhichOneof("kind") != "null_value":
        print("output:")
        print(json.dumps(from_value(invocation.output), indent=2, ensure_ascii=False))
