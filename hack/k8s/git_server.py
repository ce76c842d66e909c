#!/usr/bin/env python3
"""A git server over HTTP for the local cluster's Flux (hack/flux.sh git): `git http-backend`
(git's own smart-HTTP CGI program) behind Python's HTTP server, as a host process the pods reach
on the bridge address. Fetch and push, no authentication: it listens only on the cluster's
bridge, which no other interface forwards to. Pushing to a NAME.git that does not exist creates
it (a bare repository under --root), so a test needs no set-up step. GET /healthz answers 200.

usage: git_server.py --root DIR [--bind ADDR] [--port PORT]"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

REPO = re.compile(r"^/([A-Za-z0-9][A-Za-z0-9._-]*\.git)(/.*)$")


class Handler(BaseHTTPRequestHandler):
    root: Path
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self._reply(200, b"ok\n")
        else:
            self._backend()

    def do_POST(self) -> None:
        self._backend()

    def _reply(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _backend(self) -> None:
        url = urlsplit(self.path)
        m = REPO.match(url.path)
        if not m or ".." in url.path:
            self._reply(404, b"not a repository path\n")
            return
        repo = self.root / m.group(1)
        if not repo.exists() and "git-receive-pack" in self.path:
            subprocess.run(["git", "init", "--quiet", "--bare", "-b", "main", str(repo)], check=True)
        body = self._body() if self.command == "POST" else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": "local",  # http-backend accepts pushes from an authenticated user only
            "REMOTE_ADDR": self.client_address[0],
            "REQUEST_METHOD": self.command,
            "PATH_INFO": url.path,
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
        }
        for header in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(header):
                env["HTTP_" + header.upper().replace("-", "_")] = self.headers[header]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        head, _, payload = out.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.stdout.partition(b"\n\n")
        code, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                code = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        if out.returncode != 0 and not out.stdout:
            self._reply(500, out.stderr or b"git http-backend failed\n")
            return
        self.send_response(code)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (BaseHTTPRequestHandler's name)
        print(f"{self.address_string()} {format % args}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", required=True, type=Path)
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--port", type=int, default=18080)
    a = p.parse_args()
    a.root.mkdir(parents=True, exist_ok=True)
    Handler.root = a.root.resolve()
    server = ThreadingHTTPServer((a.bind, a.port), Handler)
    print(f"serving {Handler.root} on http://{a.bind}:{a.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
