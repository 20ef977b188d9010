"""A PostgreSQL server of the fault tests' own, that a test stops and starts (the session server of the
store tests is shared and never stopped). Same cluster set-up as the store tests' (tests.support.postgres)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.postgres import Cluster, PostgresUnavailable, find_bin_dir, runner


@dataclass
class RestartablePostgres:
    server: Cluster
    url: str = ""
    running: bool = field(default=False)

    @classmethod
    def create(cls) -> RestartablePostgres:
        server = Cluster(
            bin_dir=find_bin_dir(), base=Path(tempfile.mkdtemp(prefix="diagnosis-pg-fault-")), runner=runner()
        )
        pg = cls(server=server)
        pg.url = server.start()
        pg.running = True
        return pg

    def _pg_ctl(self, *args: str) -> None:
        # Not subprocess's user=: its fork runs gRPC's at-fork handlers in a process with gRPC threads, and
        # the child can crash before exec. runuser switches user after a plain (vfork) spawn.
        argv = [str(self.server.bin_dir / "pg_ctl"), "-D", str(self.server.data), *args]
        if self.server.runner.uid is not None:
            argv = ["runuser", "-u", pwd.getpwuid(self.server.runner.uid).pw_name, "--", *argv]
        result = subprocess.run(
            argv, cwd=self.server.base, capture_output=True, text=True, timeout=60, check=False,
            env={**os.environ, "LC_ALL": "C", "LANG": "C"},
        )  # fmt: skip
        if result.returncode != 0:
            try:
                server_log = (self.server.base / "server.log").read_text(errors="replace")[-1500:]
            except OSError:
                server_log = ""
            output = f"{result.stdout[-800:]} {result.stderr[-800:]}"
            raise PostgresUnavailable(f"pg_ctl {args[-1]} failed ({result.returncode}): {output}\n{server_log}")

    def stop(self) -> None:
        """A fast shutdown: open connections are cut, new ones refused."""
        self._pg_ctl("-m", "fast", "-w", "stop")
        self.running = False

    def start(self) -> None:
        """Starts it again on the same port and data."""
        log = str(self.server.base / "server.log")
        self._pg_ctl("-l", log, "-w", "-t", "30", "-o", self.server.server_options, "start")
        self.running = True

    def destroy(self) -> None:
        self.server.stop()
        shutil.rmtree(self.server.base, ignore_errors=True)
