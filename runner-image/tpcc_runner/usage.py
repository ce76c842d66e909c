"""The error for bad usage (exit 2), in its own module: a command module imports it from here, so
it is the class `tpcc` catches even when cli.py runs as `python -m tpcc_runner.cli` (then loaded
twice: as __main__ and as tpcc_runner.cli)."""


class UsageError(Exception):
    pass
