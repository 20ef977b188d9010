"""Fixtures of the contract tests: node and npm (skip when absent, fail with DIAGNOSIS_TEST_REQUIRE_NODE=1),
the npm packages, the real server."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.serve import ServeProcess, serving

NODE_DIR = Path(__file__).resolve().parent / "node"
STAMP = NODE_DIR / "node_modules" / ".package-lock.sha256"
NPM_CI_TIMEOUT_S = 180


def _lock_digest() -> str:
    return hashlib.sha256((NODE_DIR / "package-lock.json").read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def node() -> str:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        reason = f"contract tests need Node.js: {' and '.join(missing)} not found on PATH"
        if os.environ.get("DIAGNOSIS_TEST_REQUIRE_NODE") == "1":  # CI: a missing Node.js fails instead
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    found = shutil.which("node")
    assert found is not None
    return found


@pytest.fixture(scope="session")
def node_packages(node: str) -> Path:
    """`npm ci` once, only when node_modules is missing or older than package-lock.json (by content)."""
    if STAMP.exists() and STAMP.read_text(encoding="utf-8").strip() == _lock_digest():
        return NODE_DIR / "node_modules"
    npm = shutil.which("npm")
    assert npm is not None
    try:
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=NPM_CI_TIMEOUT_S,
            env={**os.environ, "npm_config_update_notifier": "false"},
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"npm ci took longer than {NPM_CI_TIMEOUT_S}s in {NODE_DIR}", pytrace=False)
    if result.returncode != 0:
        pytest.fail(f"npm ci failed in {NODE_DIR}:\n{result.stdout}\n{result.stderr}", pytrace=False)
    STAMP.write_text(_lock_digest() + "\n", encoding="utf-8")
    return NODE_DIR / "node_modules"


@pytest.fixture(scope="session")
def contract_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    try:
        with serving(tmp_path_factory.mktemp("contract-server")) as server:
            yield server
    except RuntimeError as exc:
        pytest.fail(f"the server could not be started: {exc}", pytrace=False)
