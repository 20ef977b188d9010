"""`diagnosis eval FILE.jsonl [--json] [--report FILE.html]`: run evaluation cases through the real graph."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from diagnosis_server.cli import add_command

HELP = "run evaluation cases (JSON Lines) through the graph with scripted agents"
DESCRIPTION = (
    "Run each case through the real graph with the scripted provider and a throwaway store. "
    "Exit 1 if an expectation fails, 2 on a bad file."
)


def register(subparsers: Any) -> None:
    parser = add_command(subparsers, "eval", run, HELP, DESCRIPTION)
    parser.add_argument("file", type=Path)
    parser.add_argument("--json", action="store_true", help="print one JSON object per case")
    parser.add_argument("--report", type=Path, metavar="FILE.html", help="also write an HTML report")


def run(args: argparse.Namespace) -> int:
    import asyncio

    from diagnosis_server.api.logging import configure_logging
    from diagnosis_server.eval_report import html_report, table
    from diagnosis_server.evaluation import CaseFileError, iter_reports, read_cases, run_cases

    configure_logging("warning")  # JSON on stderr: a case that crashes a node on purpose must not print to stdout
    try:
        cases = read_cases(args.file)
    except CaseFileError as exc:
        print(f"diagnosis eval: error: {exc}", file=sys.stderr)
        return 2
    try:
        results = asyncio.run(run_cases(cases))
    except Exception as exc:  # a case the graph could not take: one line, never a traceback
        print(
            f"diagnosis eval: error: {args.file}: a case could not be run: {type(exc).__name__}: {exc}", file=sys.stderr
        )
        return 2
    if args.json:
        for line in iter_reports(results):
            print(line)
    else:
        print(table(results))
    if args.report is not None:
        try:
            args.report.write_text(html_report(results, title=f"diagnosis eval: {args.file.name}"), encoding="utf-8")
        except OSError as exc:
            print(f"diagnosis eval: error: {args.report}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    return 0 if all(r.expect_ok for r in results) else 1
