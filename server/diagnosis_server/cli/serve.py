"""`diagnosis serve [--address HOST:PORT] [--database-url URL] [--environments FILE] [--scenarios-dir DIR]`: run
the gRPC service until SIGTERM/SIGINT.

Settings come from DIAGNOSIS_* environment variables and the file named by DIAGNOSIS_CONFIG_FILE;
the flags override both. Exit status: 0 after a graceful shutdown (a second SIGTERM/SIGINT shortens the
grace: the runs left are marked INTERRUPTED before the exit), 1 when the store failed during shutdown,
2 for bad settings or a server that cannot start.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable
from typing import Any

import structlog

from diagnosis_server.api import RunningServer, StartupError, configure_logging, start_server
from diagnosis_server.api.server import tune_gc
from diagnosis_server.cli import add_command
from diagnosis_server.settings import Settings, SettingsError, load_settings
from diagnosis_server.store import StoreError
from diagnosis_server.telemetry import TelemetryError, configure_tracing, shutdown_tracing

log = structlog.get_logger("diagnosis_server.serve")

EXAMPLE_QUESTION = "Why is checkout-api returning 503s?"


def usage_hint(target: str, scenario: str = "checkout-oom", *, tls: bool = False, tokens: bool = False) -> str:
    """How to ask the server something: with the CLI (with the --target, --tls and --token it needs), and
    grpcurl-style with buf curl. Never a token itself: only where one goes."""
    scheme = "https" if tls else "http"
    transport = "" if tls else " --http2-prior-knowledge"
    body = f'{{"question": "{EXAMPLE_QUESTION}", "context": {{"scenario": "{scenario}"}}}}'
    flags = f" --target {target}" + (" --tls" if tls else "") + (" --token YOUR_TOKEN" if tokens else "")
    header = ' -H "Authorization: Bearer YOUR_TOKEN"' if tokens else ""
    return "\n".join(
        [
            f"diagnosis: serving gRPC on {target}. Ask it something:",
            f'  .venv/bin/diagnosis ask "{EXAMPLE_QUESTION}" --scenario {scenario}{flags}',
            f"  npx --yes @bufbuild/buf curl --protocol grpc{transport}{header} \\",
            f"    -d '{body}' \\",
            f"    {scheme}://{target}/diagnosis.v1.DiagnosisService/Diagnose",
            f"  (list every method: npx --yes @bufbuild/buf curl --protocol grpc{transport} --list-methods "
            f"{scheme}://{target})",
        ]
    )


HELP = "run the gRPC service"
DESCRIPTION = (
    "Run the diagnosis gRPC service until SIGTERM or SIGINT (settings: DIAGNOSIS_* env vars, DIAGNOSIS_CONFIG_FILE)."
)


def register(subparsers: Any) -> None:
    parser = add_command(subparsers, "serve", run, HELP, DESCRIPTION)
    parser.add_argument("--address", metavar="HOST:PORT", default=None, help="address to serve on (DIAGNOSIS_ADDRESS)")
    parser.add_argument(
        "--database-url", metavar="URL", default=None, help="store URL, SQLite or PostgreSQL (DIAGNOSIS_DATABASE_URL)"
    )
    add_source_options(parser)


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """--environments and --scenarios-dir: the flags `serve` and `tools` share."""
    parser.add_argument(
        "--environments",
        metavar="FILE",
        default=None,
        help="the environments file, TOML (DIAGNOSIS_ENVIRONMENTS_FILE)",
    )
    parser.add_argument(
        "--scenarios-dir",
        metavar="DIR",
        default=None,
        help="a directory of scenario packs added to the bundled ones (DIAGNOSIS_SCENARIOS_DIR)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(
            address=args.address,
            database_url=args.database_url,
            environments_file=args.environments,
            scenarios_dir=args.scenarios_dir,
        )
    except SettingsError as exc:
        print(f"diagnosis serve: error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    try:
        configure_tracing()
    except TelemetryError as exc:
        print(f"diagnosis serve: error: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(settings))
    finally:
        shutdown_tracing()


async def serve(
    settings: Settings, *, on_serving: Callable[[RunningServer], None] | None = None, **start_options: Any
) -> int:
    """Serves until SIGTERM/SIGINT, then shuts down gracefully; 0, or 2 when the server cannot start.

    ``start_options`` go to ``start_server`` (e.g. a provider); ``on_serving`` sees the started server.
    """
    try:
        running = await start_server(settings, **start_options)
    except (SettingsError, StartupError, StoreError) as exc:
        print(f"diagnosis serve: error: {exc}", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    tokens = bool(settings.auth_token_pairs())
    print(
        usage_hint(running.target, tls=settings.tls_cert_file is not None, tokens=tokens), file=sys.stderr, flush=True
    )
    if running.http_url:
        print(
            f"diagnosis: the run viewer is at {running.http_url}/ (Alertmanager's webhook: "
            f"{running.http_url}/v1/alertmanager)",
            file=sys.stderr,
            flush=True,
        )
    log.info(
        "serving",
        address=running.target,
        metrics_port=running.metrics_port,
        http_url=running.http_url or None,
        tls=settings.tls_cert_file is not None,
    )
    tune_gc()  # the process is a server from here on
    if on_serving is not None:
        on_serving(running)
    terminated = asyncio.create_task(running.wait_for_termination())
    signalled = asyncio.create_task(stop.wait())
    await asyncio.wait({terminated, signalled}, return_when=asyncio.FIRST_COMPLETED)
    # A second signal during the grace ends the grace at once; the runs left are still marked INTERRUPTED
    # before the process exits (the handlers stay installed until then).
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, running.hurry)
    try:
        await running.stop()
    except StoreError as exc:
        # The store failed during shutdown: what is left RUNNING is swept once stale (by any instance).
        log.error("shutdown_store_failed", error=str(exc)[:300], hint="unfinished runs are swept once stale")
        return 1
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        terminated.cancel()
        signalled.cancel()
    return 0
