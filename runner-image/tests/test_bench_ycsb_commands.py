"""bench/ycsb_commands.py's reading of what each client did, without a server: YCSB's Java
client's printed counts (batched inserts included) and a table row per operation asked for."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import ycsb_commands  # noqa: E402

JAVA_LOAD = """[CLEANUP], Operations, 1
[INSERT], Operations, 200
[INSERT], Return=BATCHED_OK, 198
[INSERT], Return=OK, 2
"""
JAVA_RUN_F = """[READ], Operations, 300
[READ], Return=OK, 300
[READ-MODIFY-WRITE], Operations, 150
[UPDATE], Operations, 150
[UPDATE], Return=OK, 149
[UPDATE], Return=ERROR, 1
"""


def test_the_java_clients_counts_are_its_ok_and_batched_ok_returns():
    java = ycsb_commands.JavaYCSB("cp")
    assert java.operations("load", JAVA_LOAD, Path("-")) == {"INSERT": 200}
    assert java.operations("run", JAVA_RUN_F, Path("-")) == {"READ": 300, "UPDATE": 149}  # not the ERROR


def test_a_row_is_per_operation_asked_for_with_the_servers_time_per_command():
    m = {
        "client": "ours",
        "phase": "run",
        "operations": {"READ": 300, "READ-MODIFY-WRITE": 150, "UPDATE": 150},
        "commands": {"queries": 301, "getmore": 0, "insert": 0, "update": 150, "remove": 0, "commands": 0},
        "server_us": {"queries": 60_200, "getmore": 0, "insert": 0, "update": 90_000, "remove": 0, "commands": 0},
    }
    cells = [c.strip() for c in ycsb_commands.row("f", m, 300).strip("|").split("|")]
    assert cells[:3] == ["f run", "ours", "READ 300 READ-MODIFY-WRITE 150 UPDATE 150"]
    assert cells[3:9] == ["1.003", "0.000", "0.000", "0.500", "0.000", "0.000"]  # find .. other per operation
    assert cells[9] == "1.503"  # commands per operation
    assert cells[10:] == ["200", "-", "600"]  # server us per find, insert, update
