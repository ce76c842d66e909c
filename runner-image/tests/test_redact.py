"""No secret leaves the runner: a URI's password is redacted in results, logs and errors."""

import logging
import re
import subprocess
import sys

from cli_helpers import TPCC
from tpcc_runner.redact import RedactingFilter, redact


def test_the_password_of_a_uri_is_redacted_and_nothing_else():
    assert (
        redact("uri=mongodb://bench:s3cr%40t@db-0:27017,db-1/tpcc?replicaSet=rs")
        == "uri=mongodb://bench:***@db-0:27017,db-1/tpcc?replicaSet=rs"
    )
    assert redact('{"uri": "mongodb+srv://u:p@x.example"}') == '{"uri": "mongodb+srv://u:***@x.example"}'
    for harmless in ("mongodb://db-0:27017/tpcc?x=a@b", "mongodb://user@db-0", "host:21212"):
        assert redact(harmless) == harmless


def test_log_records_are_redacted(caplog):
    logger = logging.getLogger("tpcc.test_redact")
    caplog.handler.addFilter(RedactingFilter())
    logger.warning("cannot reach %s", "mongodb://u:hunter2@127.0.0.1:1/")
    assert "hunter2" not in caplog.text and "mongodb://u:***@127.0.0.1:1/" in caplog.text


def test_the_error_line_of_a_failed_run_holds_no_password():
    # an unreachable server: the driver's error names the URI it tried
    p = subprocess.run(
        [
            *TPCC,
            "run",
            "--db",
            "mongodb",
            "--metrics-port",
            "0",
            "--driver-opt",
            "uri=mongodb://bench:hunter2@127.0.0.1:1/?serverSelectionTimeoutMS=500",
            "--connect-timeout",
            "1",
            "--warehouses",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1, p.stderr
    assert "hunter2" not in p.stderr + p.stdout and p.stderr.strip()


def test_each_log_line_names_its_level():
    """setup_logging's lines: time, level, message (a log pipeline filters on the level)."""
    code = (
        "import logging; from tpcc_runner.redact import setup_logging; setup_logging(logging.INFO); "
        "logging.getLogger('tpcc').warning('cannot reach mongodb://u:hunter2@db-0/'); logging.info('loaded')"
    )
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    warning, info = err.splitlines()
    assert re.fullmatch(r"\d\d:\d\d:\d\d WARNING cannot reach mongodb://u:\*\*\*@db-0/", warning), warning
    assert re.fullmatch(r"\d\d:\d\d:\d\d INFO loaded", info), info
