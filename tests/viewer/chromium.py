"""Headless Debian Chromium driven over its DevTools protocol (a WebSocket on loopback, aiohttp's client)."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

REQUIRE_CHROMIUM_ENV = "DIAGNOSIS_TEST_REQUIRE_CHROMIUM"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1200,1600",
)


def chromium_binary() -> str:
    found = shutil.which("chromium")
    if found is None:
        reason = "chromium is not installed (Debian package chromium)"
        if os.environ.get(REQUIRE_CHROMIUM_ENV) == "1":
            pytest.fail(f"{reason}; {REQUIRE_CHROMIUM_ENV}=1 requires it")
        pytest.skip(reason)
    return found


class Page:
    """One tab: navigate, evaluate JavaScript (by value), screenshot."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self._ids)
        await self._ws.send_json({"id": number, "method": method, "params": params})
        while True:
            message = await self._ws.receive_json(timeout=30)
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result

    async def goto(self, url: str) -> None:
        await self.call("Page.enable")
        await self.call("Page.navigate", url=url)
        await self.wait_for("document.readyState === 'complete'")

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, within_s: float = 20.0) -> None:
        async with asyncio.timeout(within_s):
            # The page's state is only seen by asking it: nothing of the protocol announces an expression true.
            while not await self.evaluate(expression):  # noqa: ASYNC110
                await asyncio.sleep(0.1)

    async def screenshot(self, path: Path) -> None:
        result = await self.call("Page.captureScreenshot", format="png")
        data = base64.b64decode(result["data"])
        await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
        await asyncio.to_thread(path.write_bytes, data)


@asynccontextmanager
async def chromium(profile: Path) -> AsyncIterator[Page]:
    """A fresh headless Chromium (its own --user-data-dir) and one page of it."""
    binary = chromium_binary()
    await asyncio.to_thread(profile.mkdir, parents=True, exist_ok=True)
    process = await asyncio.create_subprocess_exec(
        binary,
        *FLAGS,
        f"--user-data-dir={profile}",
        "about:blank",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        async with asyncio.timeout(30):
            # Chromium writes the file once it listens; nothing else says so.
            while not await asyncio.to_thread(_port_written, port_file):
                if process.returncode is not None:
                    raise RuntimeError(f"chromium exited with {process.returncode}")
                await asyncio.sleep(0.1)
        port = (await asyncio.to_thread(port_file.read_text)).split()[0]
        async with aiohttp.ClientSession() as session:
            async with asyncio.timeout(30):
                while True:
                    async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
                        targets = json.loads(await response.text())
                    pages = [t for t in targets if t.get("type") == "page"]
                    if pages:
                        break
                    await asyncio.sleep(0.1)
            async with session.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=64 * 1024 * 1024) as ws:
                yield Page(ws)
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()


def _port_written(path: Path) -> bool:
    return path.exists() and bool(path.read_text().strip())
