"""Specs as tests need them: typed and defaulted by the CRD (the one place defaults live), then
changed the way a user edits the object."""

import copy
from dataclasses import replace

from tpcc_operator.regression import ChangePointPolicy, Policy
from tpcc_operator.runspec import RunSpec


def _regression(regression: dict):
    """spec.regression as written, typed and defaulted."""
    return RunSpec.parse({"database": {"type": "voltdb"}, "regression": regression}).regression


def regression_policy(**changes) -> Policy:
    """`regression: {}` (previous 3, tpmC -10 %, NEW_ORDER p99 +50 %, no change points), changed."""
    return replace(Policy.from_spec(_regression({})), **changes)


def change_point_policy(**changes) -> ChangePointPolicy:
    """`changePoints: {}` (minHistory 8, maxPValue 0.001, recentResults 5), changed."""
    return replace(ChangePointPolicy.from_spec(_regression({"changePoints": {}}).change_points), **changes)


def edited(spec: RunSpec, path: str, value) -> RunSpec:
    """`spec` with the field at the dotted JSON path (e.g. "database.readyTimeoutSeconds") set to
    `value` (None removes it), read again as the operator reads the edited object."""
    document = copy.deepcopy(dict(spec.document))
    *parents, key = path.split(".")
    node = document
    for parent in parents:
        node = node.setdefault(parent, {})
    if value is None:
        node.pop(key, None)
    else:
        node[key] = value
    return RunSpec.parse(document)
