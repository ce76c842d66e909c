"""Secrets never leave the runner: the password of a URI (scheme://user:password@host, e.g.
a MongoDB driver option uri=) becomes *** in results, logs and error lines."""

from __future__ import annotations

import logging
import re

# userinfo may not hold a raw / ? # or @ (RFC 3986), so the password ends at the first @
_URI_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/?#@\s]*):[^/?#@\s]*@")


def redact(text: str) -> str:
    return _URI_PASSWORD.sub(r"\g<head>:***@", text)


class RedactingFilter(logging.Filter):
    """Redacts every record a handler writes (the runner's and its libraries')."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        return True
