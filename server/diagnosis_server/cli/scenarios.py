"""`diagnosis scenarios [--json] [--dir DIR]`: list the incident scenario packs the built-in tools serve."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from diagnosis_server.cli import add_command
from diagnosis_server.tools.scenario import ScenarioError, load_scenarios

HELP = "list the bundled incident scenarios"
DESCRIPTION = "List the incident scenario packs (name, title, services); * marks the default."


def register(subparsers: Any) -> None:
    parser = add_command(subparsers, "scenarios", run, HELP, DESCRIPTION)
    parser.add_argument("--json", action="store_true", help="print a JSON array of {name, title, services, default}")
    parser.add_argument("--dir", metavar="DIR", default=None, help="list (and validate) the packs in DIR instead")


def run(args: argparse.Namespace) -> int:
    try:
        scenarios = load_scenarios(getattr(args, "dir", None))
    except ScenarioError as exc:
        print(f"diagnosis scenarios: {exc}", file=sys.stderr)
        return 1
    rows = [
        {
            "name": s.name,
            "title": s.title,
            "services": [service.name for service in s.topology.services],
            "default": s.default,
        }
        for s in scenarios.values()
    ]
    if getattr(args, "json", False):
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(str(row["name"])) for row in rows) + 2
    for s in scenarios.values():
        mark = "*" if s.default else " "
        print(f"{mark} {s.name:<{width}}{s.title}")
        print(f"  {'':<{width}}services: {', '.join(service.name for service in s.topology.services)}")
    print("\n(* marks the default scenario)")
    return 0
