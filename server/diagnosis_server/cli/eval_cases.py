"""`diagnosis eval FILE.jsonl [--json]`: run evaluation cases through the real graph (scripted agents)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from diagnosis_server.evaluation import CaseFileError, iter_reports, read_cases, run_cases


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "eval", help="run evaluation cases (JSON Lines) through the graph with scripted agents"
    )
    parser.add_argument("file", type=Path)
    parser.add_argument("--json", action="store_true", help="one JSON object per case")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        cases = read_cases(args.file)
    except CaseFileError as exc:
        print(f"diagnosis eval: error: {exc}", file=sys.stderr)
        return 2
    results = asyncio.run(run_cases(cases))
    if args.json:
        for line in iter_reports(results):
            print(line)
    else:
        for result in results:
            report = result.report
            mark = "ok  " if result.expect_ok else "FAIL"
            route_nodes = report["route"]
            route = " > ".join(str(n) for n in route_nodes) if isinstance(route_nodes, list) else ""
            print(
                f"{mark} {result.case_id}: {route} | effective={report['effective_verdict']} status={report['status']}"
            )
            for mismatch in result.mismatches:
                print(f"       {mismatch}")
        failed = sum(1 for r in results if not r.expect_ok)
        print(f"{len(results) - failed} passed, {failed} failed")
    return 0 if all(r.expect_ok for r in results) else 1
