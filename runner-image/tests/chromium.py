"""Opens a page in a real headless Chromium (Debian `chromium`, hack/test-deps.sh) through the
DevTools protocol: what the page logged (console messages, uncaught exceptions, failed loads),
the answer of a script run in the rendered page, and a full-page screenshot."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import websocket

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
)


@dataclass
class PageVisit:
    problems: list[str] = field(default_factory=list)  # console errors/warnings, exceptions, log errors
    evaluated: object = None
    screenshot: bytes = b""


def binary() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise RuntimeError("chromium not installed (hack/test-deps.sh)")
    return found


class _Session:
    def __init__(self, url: str):
        self.ws = websocket.create_connection(url, timeout=30)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float) -> None:
        deadline = time.time() + timeout
        while not any(e.get("method") == method for e in self.events):
            if time.time() > deadline:
                raise TimeoutError(f"no {method} within {timeout} s")
            self.events.append(json.loads(self.ws.recv()))


def _problems(events: list[dict]) -> list[str]:
    out = []
    for e in events:
        p = e.get("params", {})
        if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            out.append(
                f"console.{p['type']}: "
                + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            )
        elif e.get("method") == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: " + (d.get("exception", {}).get("description") or d.get("text", "")))
        elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            out.append(f"log {p['entry']['level']}: {p['entry'].get('text', '')} {p['entry'].get('url', '')}")
    return out


def visit(page: Path, script: str, width: int = 900) -> PageVisit:
    """Loads `page`, settles, runs `script` (an expression whose value is JSON), screenshots."""
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        # its own process group: the renderer and helper processes go with it, before the
        # profile they write into is removed
        proc = subprocess.Popen(
            [binary(), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            port = None
            deadline = time.time() + 60
            while port is None and time.time() < deadline:
                line = proc.stderr.readline()
                if not line and proc.poll() is not None:
                    raise RuntimeError(f"chromium exited with {proc.returncode}")
                m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
                port = int(m.group(1)) if m else None
            if port is None:
                raise RuntimeError("chromium did not open its DevTools port within 60 s")
            targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
            target = next(t for t in targets if t["type"] == "page")
            s = _Session(target["webSocketDebuggerUrl"])
            for domain in ("Runtime", "Log", "Page"):
                s.call(f"{domain}.enable")
            s.call("Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1, mobile=False)
            s.call("Page.navigate", url=page.resolve().as_uri())
            s.wait_for("Page.loadEventFired", 30)
            value = s.call("Runtime.evaluate", expression=script, returnByValue=True)
            if "exceptionDetails" in value:
                raise RuntimeError(f"script failed: {value['exceptionDetails']}")
            height = s.call("Runtime.evaluate", expression="document.documentElement.scrollHeight", returnByValue=True)[
                "result"
            ]["value"]
            s.call(
                "Emulation.setDeviceMetricsOverride", width=width, height=int(height), deviceScaleFactor=1, mobile=False
            )
            shot = s.call("Page.captureScreenshot", format="png")
            time.sleep(0.2)  # late console messages
            s.ws.settimeout(0.5)
            try:
                while True:
                    s.events.append(json.loads(s.ws.recv()))
            except websocket.WebSocketTimeoutException:
                pass
            s.ws.close()
            return PageVisit(_problems(s.events), value["result"].get("value"), base64.b64decode(shot["data"]))
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
