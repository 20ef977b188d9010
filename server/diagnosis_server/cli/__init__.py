"""The `diagnosis` command line. Each sub-command lives in its own module with `register(subparsers)`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from diagnosis_server.cli import check, client_commands, eval_cases, scenarios, serve

_COMMANDS = (check, eval_cases, scenarios, client_commands, serve)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="diagnosis", description="diagnosis-graph: evidence-bound diagnoses")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _COMMANDS:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    result: int = func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
