"""Bad input and an unreachable database: one clear line, a non-zero exit, bounded time."""

import socket

import pytest
from cli_helpers import tpcc


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["run", "--db", "voltdb", "--warehouses", "0"], "--warehouses: must be >= 1"),
        (["load", "--db", "oracle", "--warehouses", "1"], "invalid choice: 'oracle'"),
        (["run", "--db", "voltdb", "--warehouses", "1", "--bogus"], "unrecognized arguments: --bogus"),
        (["run", "--db", "voltdb", "--warehouses", "1", "--mix", "50,50,0,0,1"], "add up to 100"),
        (["run", "--db", "voltdb", "--warehouses", "1", "--shard", "2/2"], "0 <= INDEX < COUNT"),
        (["run", "--db", "voltdb", "--warehouses", "1", "--driver-opt", "novalue", "--metrics-port", "0"], "KEY=VALUE"),
        (["run", "--db", "voltdb", "--warehouses", "1", "--target-tps", "0"], "--target-tps: must be above 0"),
        (
            ["run", "--db", "voltdb", "--warehouses", "1", "--target-tps", "50", "--think-time"],
            "--think-time: not allowed with argument --target-tps",
        ),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(args, needle):
    done = tpcc(*args)
    assert done.code == 2
    assert needle in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("db", ["voltdb", "mongodb"])
@pytest.mark.parametrize("command", [["load", "--warehouses", "1"], ["run", "--warehouses", "1"], ["check"]])
def test_unreachable_database_fails_within_the_timeout(db, command):
    done = tpcc(
        command[0],
        "--db",
        db,
        "--endpoints",
        f"127.0.0.1:{_closed_port()}",
        "--connect-timeout",
        "3",
        "--metrics-port",
        "0",
        *command[1:],
        timeout=60,
    )
    assert done.code == 1, done.stderr
    assert done.seconds < 3 + 10
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tpcc {command[0]}: error:"), done.stderr
