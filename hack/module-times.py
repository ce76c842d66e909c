#!/usr/bin/env python3
"""What each test module took, per share, from the shares' pytest --junitxml reports (a test's
time there is its setup, call and teardown: a module's servers and fixtures count): the figures
to balance the shares by (runner-image/tests/conftest.py DB_SHARES, operator/tests/e2e/conftest.py
SHARES).

    hack/module-times.py SHARE.xml...   (the share is the file name's last "-" part: db-a.xml -> a)
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path


def module_seconds(report: Path) -> Counter[str]:
    """Seconds by test module (the file name) of one junitxml report."""
    seconds: Counter[str] = Counter()
    for case in ET.parse(report).iter("testcase"):
        module = case.get("classname", "?").split(".")
        name = next((part for part in module if part.startswith("test_")), module[-1])
        seconds[f"{name}.py"] += float(case.get("time", 0))
    return seconds


def main(reports: list[str]) -> int:
    for report in map(Path, reports):
        if not report.is_file():
            print(f"{report}: no report (the share did not run)")
            continue
        seconds = module_seconds(report)
        share = report.stem.rsplit("-", 1)[-1]
        print(f"share {share}: {sum(seconds.values()):.0f} s in {len(seconds)} modules")
        for module, s in seconds.most_common():
            print(f"  {s:7.1f} s  {module}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
