"""`diagnosis serve` (the slow launcher) as a subprocess whose output goes through a pipe.

A pipe, not a file: the disk-full test lowers the server's RLIMIT_FSIZE, which would make its own log
writes fail too. A thread copies the pipe into a log file of the test's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from reliability_api.serving import SLOW_LAUNCHER, ServeProcess, _wait_serving, free_port


def _copy(pipe: object, log: Path) -> None:
    with log.open("ab") as sink:
        for line in iter(pipe.readline, b""):  # type: ignore[attr-defined]
            sink.write(line)
            sink.flush()


def start_piped_serve(
    workdir: Path, database_url: str, *, env: Mapping[str, str], log_name: str = "server.log"
) -> ServeProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    target = f"127.0.0.1:{free_port()}"
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DIAGNOSIS_", "OTEL_"))}
    environment |= {
        "DIAGNOSIS_ADDRESS": target,
        "DIAGNOSIS_DATABASE_URL": database_url,
        "DIAGNOSIS_METRICS_ADDRESS": "",
    }
    environment |= dict(env)
    log = workdir / log_name
    process = subprocess.Popen(
        [sys.executable, str(SLOW_LAUNCHER)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=environment,
        cwd=workdir,
    )
    threading.Thread(target=_copy, args=(process.stdout, log), daemon=True).start()
    server = ServeProcess(process=process, target=target, log=log)
    try:
        _wait_serving(server)
    except BaseException:
        server.stop(timeout=5)
        raise
    return server
