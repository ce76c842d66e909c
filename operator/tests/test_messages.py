"""A failed pod's termination message (the tail of its log) -> the one line for status.message."""

from tpcc_operator.kube import error_line


def test_the_runners_error_line_wins_over_later_output():
    tail = (
        "05:18:01 load: 3/31 units\ntpcc load: error: mongodb: no server reachable at mongodb://db:27017/ within 5s\n\n"
    )
    assert error_line(tail) == "tpcc load: error: mongodb: no server reachable at mongodb://db:27017/ within 5s"


def test_a_column_named_errors_is_not_an_error_line():
    assert error_line("run: no transaction committed\nNEW_ORDER 0 errors 0\n") == "NEW_ORDER 0 errors 0"


def test_empty():
    assert error_line("") == ""
