"""YCSB's own generators, for comparing the runner's port with them: site.ycsb:core:0.17.0 from
Maven Central (cached in $TPCC_CACHE/ycsb, checked against Central's SHA-1) and the harness
ycsb_java/YcsbSamples.java compiled against it with the JDK's javac (cached by the hash of the
two). Import the fixture: `from ycsb_java import ycsb_java`."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

CORE = "https://repo1.maven.org/maven2/site/ycsb/core/0.17.0/core-0.17.0.jar"
HARNESS = Path(__file__).resolve().parent / "ycsb_java" / "YcsbSamples.java"
CACHE = Path(os.environ.get("TPCC_CACHE", Path.home() / ".cache" / "tpcc-operator")) / "ycsb"


def _download_core() -> Path:
    jar = CACHE / Path(CORE).name
    if jar.is_file():
        return jar
    with urllib.request.urlopen(CORE + ".sha1", timeout=60) as r:
        want = r.read().decode().split()[0]
    with urllib.request.urlopen(CORE, timeout=120) as r:
        data = r.read()
    if hashlib.sha1(data).hexdigest() != want:
        raise RuntimeError(f"{CORE}: SHA-1 differs from Maven Central's {want}")
    partial = jar.with_suffix(".part")
    partial.write_bytes(data)
    partial.rename(jar)
    return jar


def _compile(jar: Path) -> Path:
    digest = hashlib.sha256(HARNESS.read_bytes() + jar.read_bytes()).hexdigest()[:16]
    classes = CACHE / f"harness-{digest}"
    if not (classes / "YcsbSamples.class").is_file():
        building = CACHE / f"harness-{digest}.build"
        shutil.rmtree(building, ignore_errors=True)
        subprocess.run(
            ["javac", "-nowarn", "-cp", str(jar), "-d", str(building), str(HARNESS)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        building.rename(classes)
    return classes


class YcsbJava:
    def __init__(self, classpath: str):
        self.classpath = classpath

    def __call__(self, *args: object) -> list[str]:
        """The harness's output lines for one command (see YcsbSamples.java)."""
        done = subprocess.run(
            ["java", "-cp", self.classpath, "YcsbSamples", *map(str, args)], capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            raise RuntimeError(f"YcsbSamples {args[0]} failed: {done.stderr.strip()[-2000:]}")
        return done.stdout.splitlines()


@pytest.fixture(scope="session")
def ycsb_java() -> YcsbJava:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.fail("needs a JDK (javac, java): apt-get install openjdk-17-jdk-headless")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:  # concurrent test runs share the cache
        fcntl.flock(lock, fcntl.LOCK_EX)
        jar = _download_core()
        classes = _compile(jar)
    return YcsbJava(f"{classes}{os.pathsep}{jar}")
