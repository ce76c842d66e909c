"""Running the `tpcc` command line as a user does, from the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

TPCC = [sys.executable, "-m", "tpcc_runner.cli"]


@dataclass
class Done:
    code: int
    stdout: str
    stderr: str
    seconds: float

    def json(self):
        return json.loads(self.stdout)


def tpcc(*args: str, timeout: float = 600, env: dict[str, str] | None = None) -> Done:
    """`tpcc ARGS`; env: variables added to this process's (e.g. TPCC_DB_USERNAME)."""
    t0 = time.time()
    p = subprocess.run(
        [*TPCC, *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **env} if env else None
    )
    return Done(p.returncode, p.stdout, p.stderr, time.time() - t0)
