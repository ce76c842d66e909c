#!/usr/bin/env python3
"""Runs the vendored py-tpcc (bench/pytpcc/tpcc.py, its own command line) with a shim between it
and pymongo, so that on SecantusDB two of its query shapes do not scan whole collections. What
py-tpcc asks stays the same; only how it reaches the server changes:

- `$comment` inside a query filter (every py-tpcc statement has one) is a no-op for matching,
  but SecantusDB plans such a filter as a collection scan. The shim takes it out of the filter
  and sends it as the command's `comment` field (find, update, findAndModify, aggregate,
  delete, and the filters of a bulk write's operations), which MongoDB documents as the same
  annotation (profiler, currentOp, logs).
- StockLevel's count, `{S_W_ID: w, S_I_ID: {$in: [...]}, S_QUANTITY: {$lt: t}}`: SecantusDB
  uses the (S_W_ID, S_I_ID) index for the `$in` alone, but not once a range on another field is
  beside it. count_documents sends `[{$match: filter}, {$group: {_id: 1, n: {$sum: 1}}}]`; the
  shim sends the same filter as two consecutive `$match` stages (equalities and `$in` first, the
  rest second), which select the same documents (MongoDB itself coalesces adjacent `$match`es).

    python pytpcc_shim.py mongodb --config FILE [tpcc.py's options]   (cwd: where its logs go)

With TPCC_PYTPCC_STARTED=PATH the shim also creates PATH when the first client process starts
executing transactions, so a measuring script can tell start-up from the run.
"""

from __future__ import annotations

import copy
import functools
import os
import runpy
import sys
import time
from pathlib import Path

from pymongo.collection import Collection

VENDORED = Path(__file__).resolve().parent / "pytpcc"


def split_comment(spec):
    """(the filter without `$comment`, the comment or None); the caller's dict is not changed
    (py-tpcc reuses some of them)."""
    if isinstance(spec, dict) and "$comment" in spec:
        rest = dict(spec)
        return rest, rest.pop("$comment")
    return spec, None


def _with_comment_moved(method):
    """Wrap a Collection method whose first argument is a filter: `$comment` becomes comment=."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if args:
            spec, comment = split_comment(args[0])
            args = (spec, *args[1:])
        else:
            kwargs["filter"], comment = split_comment(kwargs.get("filter"))
        if comment is not None and kwargs.get("comment") is None:
            kwargs["comment"] = comment
        return method(self, *args, **kwargs)

    return wrapper


def _bulk_write(original):
    """NewOrder's stock updates are one bulk_write of UpdateOne(stock document + `$comment`):
    each operation is sent with its filter's `$comment` removed (a copy: pymongo's operations
    keep the filter in the `_filter` slot) and the first one becomes the command's comment."""

    @functools.wraps(original)
    def bulk_write(self, requests, *args, **kwargs):
        moved, comment = [], None
        for op in requests:
            spec, found = split_comment(getattr(op, "_filter", None))
            if found is not None:
                op = copy.copy(op)
                op._filter = spec
                comment = comment if comment is not None else found
            moved.append(op)
        if comment is not None and kwargs.get("comment") is None:
            kwargs["comment"] = comment
        return original(self, moved, *args, **kwargs)

    return bulk_write


def _is_operator(value) -> bool:
    return isinstance(value, dict) and any(str(k).startswith("$") for k in value)


def split_in_and_range(spec: dict) -> tuple[dict, dict] | None:
    """({equalities and the `$in` fields}, {the other operator fields}) when a filter has both an
    `$in` and another operator; None when it has not (it is then sent as it is)."""
    keyed = {k: v for k, v in spec.items() if not _is_operator(v) or set(v) == {"$in"}}
    rest = {k: v for k, v in spec.items() if k not in keyed}
    has_in = any(_is_operator(v) for v in keyed.values())
    if not has_in or not rest or any(str(k).startswith("$") for k in spec):
        return None
    return keyed, rest


def _count_documents(original):
    @functools.wraps(original)
    def count_documents(self, filter, session=None, comment=None, **kwargs):
        filter, moved = split_comment(filter)
        comment = comment if comment is not None else moved
        parts = split_in_and_range(filter) if not kwargs else None
        if parts is None:
            return original(self, filter, session=session, comment=comment, **kwargs)
        keyed, rest = parts
        pipeline = [{"$match": keyed}, {"$match": rest}, {"$group": {"_id": 1, "n": {"$sum": 1}}}]
        result = list(self.aggregate(pipeline, session=session, comment=comment))
        return result[0]["n"] if result else 0

    return count_documents


# Collection methods whose first argument is a filter (find_one calls find)
FILTER_METHODS = (
    "find",
    "update_one",
    "update_many",
    "replace_one",
    "delete_one",
    "delete_many",
    "find_one_and_update",
    "find_one_and_delete",
    "find_one_and_replace",
)
PATCHED = (*FILTER_METHODS, "count_documents", "bulk_write")


def install() -> None:
    """Patch pymongo's Collection (PATCHED) for this process and the py-tpcc workers it forks."""
    for name in FILTER_METHODS:
        setattr(Collection, name, _with_comment_moved(getattr(Collection, name)))
    Collection.count_documents = _count_documents(Collection.count_documents)
    Collection.bulk_write = _bulk_write(Collection.bulk_write)


def _mark_start(started: str) -> None:
    """Create `started` when py-tpcc's Executor.execute is first entered (in any process)."""
    from runtime import executor  # the vendored package, importable once sys.path has it

    execute = executor.Executor.execute

    @functools.wraps(execute)
    def marked(self, duration):
        try:
            fd = os.open(started, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, f"{time.time():.3f}\n".encode())
            os.close(fd)
        except FileExistsError:
            pass
        return execute(self, duration)

    executor.Executor.execute = marked


def main() -> None:
    install()
    sys.path.insert(0, str(VENDORED))
    if started := os.environ.get("TPCC_PYTPCC_STARTED"):
        _mark_start(started)
    sys.argv = [str(VENDORED / "tpcc.py"), *sys.argv[1:]]
    runpy.run_path(str(VENDORED / "tpcc.py"), run_name="__main__")


if __name__ == "__main__":
    main()
