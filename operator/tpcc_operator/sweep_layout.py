"""A sweep's layout: its cells in the order they run (each database shape deployed once, each
load shape loaded once, a saturation search's ladder), what each cell measures (its spec), the
deployments it leaves out, its plan (status.sweep.plan), and the check of every deployment before
the first install. Pure functions of the typed spec."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

from . import chart_policy, databases, workloads
from .jsonmodel import JsonModel
from .plan import Run, Settings, deployed_values, helm_release, too_small
from .runspec import MatrixAxis, RunSpec, Saturation, charts_dir_of_image, crd_spec_schema


@dataclass(frozen=True)
class Cell:
    """One measurement of a sweep: a (warehouses, clients, matrix values) point, repeated
    `repetitions` times (warehouses None: a workload without them, YCSB)."""

    index: int
    warehouses: int | None
    clients: int
    repetition: int  # 1-based
    loads: bool  # the first cell of its load shape: it loads the database (again)
    # the cell's sweep.matrix values, (field, value) in the matrix's order
    matrix: tuple[tuple[str, str], ...] = ()
    deployment: int = 0  # which deployment of the sweep it runs on (0: the first)
    deploys: bool = False  # the first cell of a later deployment: it deploys the database anew


# sweep.matrix fields that change the database's shape: a value of one of these is a deployment
# of its own (every database.deploy field), or a load of its own (the database's load_options, such
# as MongoDB's schema or VoltDB's partitioning: the load's reset drops the previous value's tables,
# so the one deployment serves them all)
DEPLOYMENT_AXIS_PREFIX = "database.deploy."


def is_deployment_axis(field: str) -> bool:
    return field.startswith(DEPLOYMENT_AXIS_PREFIX)


def is_load_axis(spec: RunSpec, field: str) -> bool:
    option = field.removeprefix("workload.driverOptions.")
    return option != field and option in databases.of(spec).load_options


def deployment_axes(spec: RunSpec) -> list[MatrixAxis]:
    """The matrix's database.deploy axes, with the axes paired with them (a price per hour
    paired with an instance type's cpu changes with each deployment)."""
    return _axes_led_by(spec, is_deployment_axis)


def load_axes(spec: RunSpec) -> list[MatrixAxis]:
    """The matrix's axes that are a load each (schema, partitioning), with those paired with them."""
    return _axes_led_by(spec, lambda field: is_load_axis(spec, field))


def _axes_led_by(spec: RunSpec, kind: Callable[[str], bool]) -> list[MatrixAxis]:
    axes = (spec.sweep.matrix or ()) if spec.sweep else ()
    leader = {a.field: a.paired_with or a.field for a in axes}
    return [a for a in axes if kind(leader[a.field])]


def sweep_cells(spec: RunSpec) -> list[Cell]:
    """spec.sweep's cells in the order they run, so that each shape is deployed once and loaded
    once: the deployments (the matrix's database.deploy axes) outer, then the loads (its schema
    axis, then warehouses), then clients, then the matrix's other combinations (its first axis
    outer; with a saturation search the other way round: each combination's ladder of clients),
    then repetitions. A list the sweep leaves out is the workload's one value; a
    deployment with kSafety not below replicas is left out (invalid_deployments)."""
    sweep, w = spec.sweep, spec.workload
    if not sweep:
        return []
    axes = sweep.matrix or ()
    deployed_axes, loaded_axes = deployment_axes(spec), load_axes(spec)
    cell_axes = [a for a in axes if a not in deployed_axes and a not in loaded_axes]
    cells: list[Cell] = []
    for deployment, shape in enumerate(valid_deployments(spec)):
        for loaded in _combinations(loaded_axes):
            for warehouses in _fitting(spec, (*shape, *loaded)):
                first_of_load = True
                # a saturation search raises the clients within each matrix combination; a list
                # of clients runs every combination at each count
                counts = sweep.clients or saturation_ladder(sweep.saturation) or [w.clients]
                combinations = _combinations(cell_axes)
                order = (
                    [(c, v) for v in combinations for c in counts]
                    if sweep.saturation
                    else [(c, v) for c in counts for v in combinations]
                )
                for clients, values in order:
                    matrix = dict((*shape, *loaded, *values))
                    for repetition in range(1, sweep.repetitions + 1):
                        deploys = deployment > 0 and (not cells or cells[-1].deployment != deployment)
                        cells.append(
                            Cell(
                                len(cells),
                                warehouses,
                                clients,
                                repetition,
                                loads=first_of_load,
                                matrix=tuple((a.field, matrix[a.field]) for a in axes),
                                deployment=deployment,
                                deploys=deploys,
                            )
                        )
                        first_of_load = False
    return cells


def _combinations(axes: list[MatrixAxis]) -> list[tuple[tuple[str, str], ...]]:
    """Every combination of the axes' values, the first axis outer, an axis paired with another
    (pairedWith) taking its value with that one's; one empty combination without axes."""
    paired = [a for a in axes if a.paired_with]
    choices = [
        [
            ((axis.field, value), *((p.field, p.values[i]) for p in paired if p.paired_with == axis.field))
            for i, value in enumerate(axis.values)
        ]
        for axis in axes
        if not axis.paired_with
    ]
    return [tuple(pair for group in combination for pair in group) for combination in itertools.product(*choices)]


# sweep.oversizedLoads
REFUSE, LEAVE_OUT = "Refuse", "LeaveOut"


def _fitting(spec: RunSpec, shape: tuple[tuple[str, str], ...]) -> list[int | None]:
    """The sweep's warehouse counts a deployment and load shape runs: all of them, or with
    oversizedLoads LeaveOut those its deployment holds."""
    counts = workloads.of(spec).sweep_warehouses(spec) if spec.sweep else []
    return [n for n in counts if _oversized(spec, shape, n) is None]


def _oversized(spec: RunSpec, shape: tuple[tuple[str, str], ...], warehouses: int | None) -> str | None:
    """Why a sweep with oversizedLoads LeaveOut leaves `warehouses` out on the deployment of
    `shape` (its database's capacity estimate, as the install would refuse it); None to run it."""
    if spec.sweep is None or spec.sweep.oversized_loads != LEAVE_OUT or not spec.database.deployed:
        return None
    measured = cell_spec(spec, Cell(0, warehouses, spec.workload.clients, 1, loads=True, matrix=shape))
    problem = too_small(measured, deployed_values(measured), charts_dir_of_image())
    if problem is None:
        return None
    # the deployment by its leading axes (those paired with one change with it)
    leading = {a.field for a in spec.sweep.matrix or () if is_deployment_axis(a.field) and not a.paired_with}
    where = [f"{field.rpartition('.')[2]}={value}" for field, value in shape if field in leading]
    # the problem names the cell's field (workload.warehouses = n): the count is in `where`
    where += [f"warehouses={warehouses}"] if warehouses is not None else []
    return f"{' '.join(where)}: {problem.partition(': ')[2].partition(' (')[0]}"


def oversized_loads(spec: RunSpec) -> list[str]:
    """What a sweep with oversizedLoads LeaveOut leaves out, deployment by deployment: each
    warehouse count its deployment cannot hold, and why."""
    if spec.sweep is None:
        return []
    return [
        why
        for shape in valid_deployments(spec)
        for loaded in _combinations(load_axes(spec))
        for n in workloads.of(spec).sweep_warehouses(spec)
        if (why := _oversized(spec, (*shape, *loaded), n))
    ]


def valid_deployments(spec: RunSpec) -> list[tuple[tuple[str, str], ...]]:
    """The combinations of the matrix's database.deploy axes a sweep deploys, in order: those
    whose kSafety (VoltDB's copies beyond the first) is below their replicas."""
    return [shape for shape in _combinations(deployment_axes(spec)) if _deployable(spec, dict(shape))]


def invalid_deployments(spec: RunSpec) -> list[str]:
    """The combinations of database.deploy values a sweep leaves out, as "replicas=1 kSafety=1"."""
    return [
        " ".join(f"{field.rpartition('.')[2]}={value}" for field, value in shape if is_deployment_axis(field))
        for shape in _combinations(deployment_axes(spec))
        if not _deployable(spec, dict(shape))
    ]


def _deployable(spec: RunSpec, shape: dict[str, str]) -> bool:
    replicas = int(shape.get(f"{DEPLOYMENT_AXIS_PREFIX}replicas", spec.deploy.replicas))
    k_safety = int(shape.get(f"{DEPLOYMENT_AXIS_PREFIX}kSafety", spec.deploy.k_safety))
    return k_safety < replicas


def saturation_ladder(search: Saturation | None) -> tuple[int, ...]:
    """The client counts a sweep.saturation search may run, in order: startClients, then
    + step (or x factor) while within maxClients; () without a search."""
    if search is None:
        return ()
    counts = [search.start_clients]
    while True:
        following = counts[-1] + search.step if search.step else counts[-1] * (search.factor or 2)
        if following > search.max_clients:
            return tuple(counts)
        counts.append(following)


# What retiring one deployment and making the next ready takes, as an estimate: Helm uninstall,
# its pods gone, Helm install, the new pods Ready. In the VoltDB e2e sweep over replicas 1 -> 2
# on this project's one-node cluster, the second cell took 79 s with all of that plus its load,
# 16 s of measuring and its checks (the first, deploy included, 72 s); a larger database or a
# busier cluster takes longer.
REDEPLOY_ESTIMATE_SECONDS = 90


@dataclass(frozen=True)
class SweepPlan(JsonModel):
    """What a sweep will do, known before anything starts (status.sweep.plan)."""

    cells: int
    loads: int
    deployments: int
    # the cells' measuring, plus each later deployment's REDEPLOY_ESTIMATE_SECONDS (a
    # saturation search: all its steps); the first deployment, the loads and checks come on top
    estimated_seconds: int
    # database.deploy combinations not deployed (kSafety >= replicas), and with oversizedLoads
    # LeaveOut each warehouse count a deployment cannot hold
    left_out: tuple[str, ...] | None = None


def sweep_plan(spec: RunSpec, cells: list[Cell]) -> SweepPlan:
    """A deployment per combination of the matrix's database.deploy values (one without such
    axes; none for an external database), a load per warehouse count and schema in each; each
    cell waits runners.startDelaySeconds, warms up and measures."""
    w = spec.workload
    per_cell = spec.runners.start_delay_seconds + w.warmup_seconds + w.duration_seconds
    deployments = len({c.deployment for c in cells}) if spec.database.deployed else 0
    return SweepPlan(
        cells=len(cells),
        loads=sum(c.loads for c in cells),
        deployments=deployments,
        estimated_seconds=per_cell * len(cells) + REDEPLOY_ESTIMATE_SECONDS * max(deployments - 1, 0),
        left_out=tuple(invalid_deployments(spec) + oversized_loads(spec)) or None,
    )


def cell_spec(spec: RunSpec, cell: Cell | None) -> RunSpec:
    """The spec one cell measures: the workload with the cell's warehouses, clients and matrix
    values, no sweep. A later size's load replaces what the sweep itself loaded before, so it
    resets even an external database (its first load still refuses a user's data unless
    resetBeforeLoad)."""
    if cell is None:
        return spec
    document = copy.deepcopy(dict(spec.document))
    workload = {**document["workload"], "clients": cell.clients}
    if cell.warehouses is not None:
        workload["warehouses"] = cell.warehouses
    if cell.loads and cell.index > 0:
        workload["resetBeforeLoad"] = True
    document.pop("sweep")
    document["workload"] = workload
    chart = databases.of(spec).chart
    values_schema = chart_policy.values_schema(chart, charts_dir_of_image()) if chart else {}
    for path, value in cell.matrix:
        _set_field(document, path, value, values_schema)
    return RunSpec.parse(document)


def _set_field(document: dict, path: str, text: str, values_schema: dict) -> None:
    """Sets spec field `path` (dotted, under spec) to a sweep.matrix value, converted to the
    type the CRD gives the field (a percent is an integer, cost.pricePerHour a number; driver
    options are strings), or under
    database.deploy.values, which the CRD leaves to the chart, the type the chart's values
    schema gives it (sitesPerHost, sharded.shards: integers)."""
    *parents, leaf = path.split(".")
    schema, node = crd_spec_schema(), document
    for depth, key in enumerate(parents):
        if parents[: depth + 1] == ["database", "deploy", "values"]:
            schema = values_schema
        else:
            schema = (schema.get("properties") or {}).get(key) or schema.get("additionalProperties") or {}
        node = node.setdefault(key, {})
    leaf_schema = (schema.get("properties") or {}).get(leaf) or schema.get("additionalProperties") or {}
    if leaf_schema.get("type") == "object":  # workload.mix: its properties' values in order, "45/43/4/4/4"
        node[leaf] = dict(zip(leaf_schema["properties"], (int(p) for p in text.split("/")), strict=True))
    else:
        kind = leaf_schema.get("type")  # a list (cpu: string or integer) keeps the string
        node[leaf] = int(text) if kind == "integer" else float(text) if kind == "number" else text


def current_cell(spec: RunSpec, status: dict) -> Cell | None:
    """The sweep cell under way (status.sweep.current; the first before it is set)."""
    cells = sweep_cells(spec)
    if not cells:
        return None
    return cells[min((status.get("sweep") or {}).get("current", 0), len(cells) - 1)]


def cell_run(run: Run, cell: Cell | None) -> Run:
    return run if cell is None else replace(run, cell=cell.index, deployment=cell.deployment)


def load_cells(cells: list[Cell], cell: Cell) -> list[Cell]:
    """The cells since the load `cell` runs on, up to and including it: their Deliveries all
    count for consistency condition 11."""
    first = max(c.index for c in cells[: cell.index + 1] if c.loads)
    return cells[first : cell.index + 1]


def refuse_undeployable(run: Run, spec: RunSpec, settings: Settings) -> None:
    """Each deployment of a sweep, checked as its own install will check it, with the most
    any of its cells loads, before the first install: a later deployment (or a later, larger
    load on this one) that cannot hold its data fails the run now, not after the earlier cells
    ran. Raises chart_policy.ReleaseRefused (DatabaseTooSmall) naming the cell."""
    if spec.sweep is None or not spec.database.deployed:
        return
    most: dict[int, tuple[int, Cell, RunSpec]] = {}
    for cell in sweep_cells(spec):
        if cell.deployment in most and not cell.loads:
            continue  # the same data as the load before it
        measured = cell_spec(spec, cell)
        wanted = workloads.of(measured).largest_load(measured)[1]
        if cell.deployment not in most or wanted > most[cell.deployment][0]:
            most[cell.deployment] = (wanted, cell, measured)
    for _, cell, measured in most.values():
        try:
            helm_release(cell_run(run, cell), measured, settings)
        except chart_policy.ReleaseRefused as e:
            shape = " ".join(f"{f.rpartition('.')[2]}={v}" for f, v in cell.matrix if is_deployment_axis(f))
            where = f"sweep cell {cell.index} (deployment {cell.deployment}{': ' + shape if shape else ''})"
            raise type(e)(f"{where}: {e}") from None
