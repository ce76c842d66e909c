"""Secrets never leave the runner: the password of a URI (scheme://user:password@host, e.g.
a MongoDB driver option uri=) becomes *** in results, logs and error lines."""

from __future__ import annotations

import logging
import re
import sys

# userinfo may not hold a raw / ? # or @ (RFC 3986), so the password ends at the first @
_URI_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/?#@\s]*):[^/?#@\s]*@")


def redact(text: str) -> str:
    return _URI_PASSWORD.sub(r"\g<head>:***@", text)


class RedactingFilter(logging.Filter):
    """Redacts every record a handler writes (the runner's and its libraries')."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        return True


# e.g. "12:00:01 INFO loaded 10 warehouses"
LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"


def setup_logging(level: int) -> None:
    """The runner's log: to stderr with the time and level, redacted (also a client process's)."""
    logging.basicConfig(level=level, stream=sys.stderr, format=LOG_FORMAT, datefmt="%H:%M:%S")
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
