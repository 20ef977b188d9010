"""Debian's Prometheus and Alertmanager on loopback: a rule that fires, routed to the service's webhook."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.serve import free_port

REQUIRE_PROMETHEUS_ENV = "DIAGNOSIS_TEST_REQUIRE_PROMETHEUS"
REQUIRE_ALERTMANAGER_ENV = "DIAGNOSIS_TEST_REQUIRE_ALERTMANAGER"
START_TIMEOUT_S = 30.0

RULES = """groups:
  - name: checkout
    interval: 1s
    rules:
      - alert: CheckoutPodCrashLooping
        expr: vector(1)
        labels:
          severity: critical
          namespace: shop
          pod: checkout-api-7f9c6d8b5-tr6zn
          container: checkout-api
        annotations:
          summary: Pod shop/checkout-api-7f9c6d8b5-tr6zn is crash looping.
          description: Container checkout-api restarted 5 times in the last 10 minutes.
"""


def binary(name: str, package: str, require_env: str) -> str:
    found = shutil.which(name)
    if found is None:
        reason = f"{name} is not installed (Debian package {package})"
        if os.environ.get(require_env) == "1":
            pytest.fail(f"{reason}; {require_env}=1 requires it")
        pytest.skip(reason)
    return found


def wait_ready(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} was not ready at {url} within {START_TIMEOUT_S}s")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@dataclass
class Stack:
    prometheus_url: str
    alertmanager_url: str
    rules: Path
    processes: list[subprocess.Popen[bytes]]

    def resolve(self) -> None:
        """Drops the rule and reloads Prometheus: the alert is no longer renewed and resolves."""
        self.rules.write_text("groups: []\n")
        request = urllib.request.Request(f"{self.prometheus_url}/-/reload", method="POST")
        with urllib.request.urlopen(request, timeout=5):
            pass

    def close(self) -> None:
        for process in reversed(self.processes):
            stop(process)


def alertmanager_config(webhook_url: str, copy_url: str, token_file: Path) -> str:
    """Short waits and a 2 s repeat interval: repeats come within a test's patience."""
    return f"""route:
  receiver: diagnosis
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 2s
  routes:
    - receiver: diagnosis
      continue: true
    - receiver: copy
receivers:
  - name: diagnosis
    webhook_configs:
      - url: {webhook_url}
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials_file: {token_file}
  - name: copy
    webhook_configs:
      - url: {copy_url}
        send_resolved: true
"""


def start_alertmanager(root: Path, config: str) -> tuple[str, subprocess.Popen[bytes]]:
    """Alertmanager on a loopback port with ``config`` (clustering off); its base URL and process."""
    alertmanager = binary("prometheus-alertmanager", "prometheus-alertmanager", REQUIRE_ALERTMANAGER_ENV)
    am_config = root / "alertmanager.yml"
    am_config.write_text(config)
    am_port = free_port()
    am = subprocess.Popen(
        [
            alertmanager,
            f"--config.file={am_config}",
            f"--storage.path={root / 'am-data'}",
            f"--web.listen-address=127.0.0.1:{am_port}",
            "--cluster.listen-address=",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(root / "alertmanager.log").open("wb"),
    )
    am_url = f"http://127.0.0.1:{am_port}"
    try:
        wait_ready(f"{am_url}/-/ready", am, "alertmanager")
    except BaseException:
        stop(am)
        raise
    return am_url, am


def start_stack(root: Path, *, webhook_url: str, copy_url: str, token_file: Path) -> Stack:
    """Alertmanager routing to ``webhook_url`` (and a copy to ``copy_url``), then Prometheus with a rule firing."""
    prometheus = binary("prometheus", "prometheus", REQUIRE_PROMETHEUS_ENV)
    am_url, am = start_alertmanager(root, alertmanager_config(webhook_url, copy_url, token_file))
    am_port = am_url.rsplit(":", 1)[1]
    processes: list[subprocess.Popen[bytes]] = [am]
    try:
        rules = root / "rules.yml"
        rules.write_text(RULES)
        config = root / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1m\n  evaluation_interval: 1s\n"
            f"rule_files:\n  - {rules}\n"
            f"alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['127.0.0.1:{am_port}']\n"
        )
        prom_port = free_port()
        prom = subprocess.Popen(
            [
                prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={root / 'prom-data'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
                "--web.enable-lifecycle",
                "--rules.alert.resend-delay=1s",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(root / "prometheus.log").open("wb"),
        )
        processes.append(prom)
        prom_url = f"http://127.0.0.1:{prom_port}"
        wait_ready(f"{prom_url}/-/ready", prom, "prometheus")
        return Stack(prom_url, am_url, rules, processes)
    except BaseException:
        for process in reversed(processes):
            stop(process)
        raise
