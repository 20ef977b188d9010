"""Benchmark servers in child processes (``bench.launcher``): start, read the port, measure RSS, stop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from types import TracebackType

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


class ServerProcessError(RuntimeError):
    """A benchmark server did not start or stop as it should; the message holds its stderr's tail."""


def _environment() -> dict[str, str]:
    """This environment without DIAGNOSIS_* settings: the launcher's flags are the whole configuration."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("DIAGNOSIS_")}
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH", "")]))
    return env


def rss_mb(pid: int) -> float | None:
    """Resident set size of ``pid`` in MiB (Linux /proc), None where it cannot be read."""
    return _status_kb(pid, "VmRSS:")


def peak_rss_mb(pid: int) -> float | None:
    """Peak resident set size (VmHWM) of ``pid`` in MiB, None where it cannot be read."""
    return _status_kb(pid, "VmHWM:")


def _status_kb(pid: int, key: str) -> float | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(key):
            return int(line.split()[1]) / 1024
    return None


class ServerProcess:
    """``async with ServerProcess("diagnose", "--database-url", url) as server: server.target``."""

    def __init__(self, *args: str, log_path: Path) -> None:
        self._args = args
        self._log_path = log_path
        self._process: asyncio.subprocess.Process | None = None
        self.port = 0

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        if self._process is None:
            raise ServerProcessError("the server is not running")
        return self._process.pid

    async def start(self) -> None:
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        with self._log_path.open("wb") as log:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bench.launcher",
                *self._args,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env=_environment(),
            )
        assert self._process.stdout is not None
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                while True:
                    line = await self._process.stdout.readline()
                    if not line:
                        raise ServerProcessError(f"the server exited before serving: {self._tail()}")
                    if line.startswith(b"PORT "):
                        self.port = int(line.split()[1])
                        return
        except TimeoutError:
            await self.stop()
            raise ServerProcessError(f"the server did not start within {START_TIMEOUT_S:g}s: {self._tail()}") from None

    async def stop(self) -> int | None:
        """SIGTERM (a graceful shutdown), SIGKILL if it lingers; the exit status."""
        process, self._process = self._process, None
        if process is None:
            return None
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(STOP_TIMEOUT_S):
                    await process.wait()
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        return process.returncode

    def _tail(self) -> str:
        try:
            text = self._log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(text.strip().splitlines()[-5:]) or "(empty log)"

    async def __aenter__(self) -> ServerProcess:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds used so far by ``pid`` (Linux /proc), None where it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None
    # Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
