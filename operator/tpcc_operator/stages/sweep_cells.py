"""A sweep's cells: a cell measured (or refused: a fault not injected, too many errors), its
verdict and row in status.sweep, the next cell (or the end of a saturation search) and the
sweep's own verdict.

Observes: status.sweep and the cell's results. Does: WriteResult/PruneResults per cell
(through recording.py); moves back to Loading or Running for the next cell.
"""

from __future__ import annotations

from dataclasses import replace

from .. import faults as fault_injection
from .. import history, plan, regression, saturation, sweep, sweep_layout, workloads
from ..results import error_budget_message
from ..runspec import RunSpec
from ..runstatus import Results
from ..timestamps import rfc3339
from .machine import DEPLOYING, FAILED, LOADING, RUNNING, SUCCEEDED, Builder, Step, World, patched
from .recording import record

# What a sweep's cell reports in the run's status; the next cell starts without them.
CELL_STATUS = (
    "startAt",
    "load",
    "results",
    "durability",
    "consistency",
    "consistencyAfterLoad",
    "consistencyDuringRun",
    "faults",
)


def cell_measured(b: Builder, run: plan.Run, spec: RunSpec, message: str) -> None:
    """The run (or the sweep's cell under way) measured and verified everything, unless a fault
    the spec asked for was never injected (a durability verdict that covers fewer failovers than
    the spec says is not a pass; a replica set naming no primary skips a kill-primary, too) or
    the database refused too much of the work."""
    skipped = [f for f in b.current("faults") or [] if f["state"] == fault_injection.SKIPPED]
    if skipped:
        b.fail(
            "FaultNotInjected",
            "; ".join(f"fault {f['number']} ({f['action']}) was not injected: {f['message']}" for f in skipped)
            + "; the durability verdict covers only the faults injected",
        )
        return
    results = Results.in_status(patched(b.status, b.step.status), "results")
    if results and (errors := error_budget_message(results, spec.workload.max_error_percent)):
        b.fail("TooManyErrors", errors)
        return
    if b.current("sweep") is None:
        b.move(SUCCEEDED, "Succeeded", message)
        return
    table = sweep_table(b)
    b.step.status["sweep"] = sweep.with_cell(table, run.sweep_cell, state=sweep.SUCCEEDED).to_json()
    b.event("CellMeasured", f"cell {run.cell} ({sweep.label(table.cells[run.sweep_cell])}): {message}")


def sweep_table(b: Builder) -> sweep.Table:
    """status.sweep as the step leaves it (a sweep's status has one from its first tick)."""
    table = sweep.Table.in_status(patched(b.status, b.step.status), "sweep")
    assert table is not None, "a sweep's status has its table"
    return table


def judge_cell(
    b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[sweep_layout.Cell]
) -> tuple[bool, regression.Policy | None]:
    """A finished cell's verdict against the same cell of earlier runs, its BenchmarkResult
    and its row in status.sweep. A cell the run failed in (not yet finished) is Failed.
    Returns (judged: False while its change points are analysed, the regression policy)."""
    table = sweep_table(b)
    row = table.cells[run.sweep_cell]
    state = row.state if row.state in sweep.FINISHED else sweep.FAILED
    after = patched(b.status, b.step.status)
    finished = {
        **after,
        "phase": SUCCEEDED if state == sweep.SUCCEEDED else FAILED,
        "startTime": row.start_time or after.get("startTime"),
        "completionTime": rfc3339(b.now),
    }
    # history.limit counts runs: each run of a sweep writes one result per cell
    recorded = record(
        b, run, spec, world, finished, history.history_limit(spec) * len(cells), cells[run.sweep_cell].matrix
    )
    if recorded is None:
        return False, None
    verdict, fields, policy = recorded
    results = Results.in_status(after, "results")
    figures = workloads.of(spec).figures(after)
    transactions = results.transactions if results else {}
    p90 = {t: v.latency_ms["p90"] for t, v in transactions.items() if v.latency_ms.get("p90") is not None}
    judged = replace(
        row,
        state=state,
        verdict=verdict.outcome,
        result=fields["resultName"],
        p99_new_order_ms=figures.p99_ms.get("NEW_ORDER"),
        p90_ms=p90 or None,
        reason=after.get("reason") if state == sweep.FAILED else None,
    )
    b.step.status["sweep"] = sweep.with_row(
        table, run.sweep_cell, judged.measured(figures.metric, figures.throughput)
    ).to_json()
    b.event(
        verdict.outcome,
        f"cell {run.cell} ({sweep.label(row)}): {verdict.message}; recorded as BenchmarkResult {fields['resultName']}",
        warning=verdict.outcome in (regression.REGRESSED, regression.FAILED),
    )
    return True, policy


def next_cell_or_finish(
    b: Builder,
    run: plan.Run,
    cells: list[sweep_layout.Cell],
    search: saturation.Search | None,
    policy: regression.Policy | None,
    spec: RunSpec,
) -> Step:
    """After a cell's verdict: the next cell (deploying first when its database.deploy values
    differ, loading first when its warehouse count or schema does; a saturation search that
    stopped skips the rest of its warehouse count), or the sweep's end with the sweep's verdict.
    `spec`: the cell's, whose load the next cell's message names."""
    following, table = saturation.advance(sweep_table(b), cells, search)
    b.step.status["sweep"] = table.to_json()
    for entry in table.saturation or ():
        key = saturation.key_of(entry)
        if key == saturation.key_of(cells[table.current]) and entry.stopped is not None:
            found = entry.saturation_clients if entry.saturation_clients is not None else "no"
            b.event("SaturationFound", f"{saturation.label(key)}: {entry.reason}; saturation at {found} clients")
    if following is not None:
        cell = cells[following]
        b.step.status["sweep"] = replace(table, current=following).to_json()
        b.step.status.update({k: None for k in CELL_STATUS})
        if cell.deploys:
            _next_deployment(b, run, cell)
        elif cell.loads:
            workload = spec.workload if cell.warehouses is None else replace(spec.workload, warehouses=cell.warehouses)
            loaded = workloads.loaded(workload)
            b.next_cell(LOADING, "Loading", f"cell {following}: loading {loaded}")
        else:
            b.next_cell(RUNNING, "Running", f"cell {following}: {cell.clients} clients")
        return b.step
    sweep_verdict(b, policy, spec)
    b.move(SUCCEEDED, "Succeeded", sweep.message(sweep_table(b)))
    return b.step


def _next_deployment(b: Builder, run: plan.Run, cell: sweep_layout.Cell) -> None:
    """The next cell runs on a database of another shape: Deploying again, under the release of
    its deployment (a merge patch keeps what it does not name: installed and retired are reset;
    the install writes the new endpoints)."""
    release = plan.release_name(sweep_layout.cell_run(run, cell))
    b.step.status["database"] = {"release": release, "installed": False, "retired": False}
    shape = ", ".join(f"{f.rpartition('.')[2]}={v}" for f, v in cell.matrix if sweep_layout.is_deployment_axis(f))
    b.condition("DatabaseReady", False, "Redeploying", f"cell {cell.index}: deployment {cell.deployment} ({shape})")
    b.next_cell(DEPLOYING, "Deploying", f"cell {cell.index}: deploying {shape} as helm release {release}")


def sweep_verdict(b: Builder, policy: regression.Policy | None, spec: RunSpec) -> None:
    """status.verdict of a sweep: the worst of its cells'; the statistics of its configurations
    (priced by `spec.cost` where the matrix has no cost.pricePerHour axis)."""
    table = sweep_table(b)
    price = spec.cost.price_per_hour if spec.cost else None
    table = replace(table, configurations=sweep.configurations(table, price), comparisons=sweep.comparisons(table))
    b.step.status["sweep"] = table.to_json()
    outcome, text = sweep.verdict(table), sweep.message(table)
    b.step.status.update(
        verdict=outcome, regression={"message": text, "onRegression": policy.on_regression if policy else "Fail"}
    )
    if policy is not None:
        b.condition("Regressed", outcome == regression.REGRESSED, outcome, text)
