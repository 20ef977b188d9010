"""The `diagnosis` command line. Each sub-command lives in its own module with `register(subparsers)`.

Only the module of the command being run is imported (the server's dependencies are heavy to import;
`diagnosis check` or `diagnosis ask` should start fast). Without a known command, all are registered
for the help text.

Exit status of every command: 0 success; 1 the answer is a failure (a run not SUCCESS, a Gatekeeper
failure, a failed expectation, a server error); 2 bad usage, settings or files; 141 standard output
closed early (e.g. piped into ``head``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

# command -> module that registers it (a module may register several commands)
_MODULES = {
    "check": "diagnosis_server.cli.check",
    "eval": "diagnosis_server.cli.eval_cases",
    "scenarios": "diagnosis_server.cli.scenarios",
    "ask": "diagnosis_server.cli.client_commands",
    "watch": "diagnosis_server.cli.client_commands",
    "runs": "diagnosis_server.cli.client_commands",
    "environments": "diagnosis_server.cli.client_commands",
    "serve": "diagnosis_server.cli.serve",
    "tools": "diagnosis_server.cli.tools",
}


def add_command(
    subparsers: Any, name: str, run: Callable[[argparse.Namespace], int], help: str, description: str
) -> argparse.ArgumentParser:
    """A command's parser, ``run`` called with its parsed arguments."""
    parser: argparse.ArgumentParser = subparsers.add_parser(name, help=help, description=description)
    parser.set_defaults(func=run)
    return parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="diagnosis", description="diagnosis-graph: evidence-bound diagnoses")
    parser.add_argument("--version", action="version", version=version_text(), help="print the version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = [_MODULES[command]] if command in _MODULES else list(dict.fromkeys(_MODULES.values()))
    for module_name in wanted:
        importlib.import_module(module_name).register(subparsers)
    return parser


def version_text() -> str:
    """``diagnosis 0.1.0 (client 0.1.0, protobuf 5.29.3, grpcio 1.70.0)``: the server package's version and
    what the client library runs on (read from the installed distributions, no heavy import)."""
    from importlib import metadata

    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return (
        f"diagnosis {installed('diagnosis-graph')} (client {installed('diagnosis-graph-client')}, "
        f"protobuf {installed('protobuf')}, grpcio {installed('grpcio')})"
    )


def _command_of(argv: Sequence[str]) -> str | None:
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in _MODULES else None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--version"]:  # answered without importing every command's module
        print(version_text())
        return 0
    parser = build_parser(_command_of(arguments))
    args = parser.parse_args(arguments)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        result: int = func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): no traceback. Python would report the failed flush at exit,
        # so standard output is pointed at /dev/null first. 141 is what a shell shows for SIGPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    return result


if __name__ == "__main__":
    sys.exit(main())
