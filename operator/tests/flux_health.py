"""The Kustomization's healthCheckExprs for BenchmarkRun (docs/gitops.md; the Flux e2e applies
them) and how kustomize-controller v1.7.3 evaluates them (github.com/fluxcd/pkg/runtime/cel,
StatusEvaluator): a stale status.observedGeneration is InProgress; then inProgress, failed,
current in that order, the first true one decides; none true is InProgress; an expression that
cannot be evaluated (a run without status) leaves the object Unknown, which Flux waits on."""

from __future__ import annotations

HEALTH_CHECK_EXPRS = [
    {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "inProgress": "status.conditions.exists(c, c.type == 'Reconciling' && c.status == 'True')",
        "failed": "status.conditions.exists(c, c.type == 'Stalled' && c.status == 'True')",
        "current": "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
    }
]


def flux_status(obj: dict, exprs: dict | None = None) -> str:
    """InProgress | Failed | Current | Unknown, as Flux's CEL health check reads `obj`."""
    import celpy

    exprs = exprs or HEALTH_CHECK_EXPRS[0]
    observed = (obj.get("status") or {}).get("observedGeneration")
    generation = obj.get("metadata", {}).get("generation")
    if observed is not None and generation is not None and observed != generation:
        return "InProgress"
    env = celpy.Environment()
    activation = {k: celpy.json_to_cel(v) for k, v in obj.items()}
    for key, status in (("inProgress", "InProgress"), ("failed", "Failed"), ("current", "Current")):
        try:
            result = env.program(env.compile(exprs[key])).evaluate(activation)
        except Exception:  # cel-go: "no such attribute"; celpy raises or returns the error
            return "Unknown"
        if not isinstance(result, celpy.celtypes.BoolType):
            return "Unknown"
        if result:
            return status
    return "InProgress"
