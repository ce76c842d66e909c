"""`tpcc load`: schema, then the load units in parallel worker processes, resumable."""

from __future__ import annotations

import datetime as dt
import gc
import random
import time
from collections.abc import Callable

from .drivers import driver_module, make_driver
from .drivers.base import ConnectionOptions, Driver, DriverError, LoadMeta, NotLoaded, utcnow
from .generate import generate_unit, unit_count, unit_keys
from .processes import end_with_runner, worker_context
from .workload import CConstants, Scale, load_constants

_worker_driver: Driver | None = None
# allocations between two collections of the youngest generation in a load worker
_WORKER_GC_THRESHOLD = 200_000


def plan_meta(
    existing: LoadMeta | None, warehouses: int, scale: Scale, schema_variant: str, rng: random.Random
) -> LoadMeta:
    """The meta of the load to do: a new one, or the one to resume. A database holding a
    different load is refused (use --reset), never mixed."""
    if existing is not None:
        same = (existing.warehouses, existing.items, existing.customers_per_district, existing.schema_variant) == (
            warehouses,
            scale.items,
            scale.customers_per_district,
            schema_variant,
        )
        if not same:
            raise DriverError(
                f"the database holds a different TPC-C load ({existing.warehouses} warehouses, "
                f"{existing.items} items, {existing.customers_per_district} customers/district, "
                f"schema {existing.schema_variant}); use --reset to replace it"
            )
        return existing
    c = load_constants(rng)
    return LoadMeta(
        warehouses=warehouses,
        items=scale.items,
        districts=scale.districts,
        customers_per_district=scale.customers_per_district,
        orders_per_district=scale.orders_per_district,
        new_orders_per_district=scale.new_orders_per_district,
        c_last=c.c_last,
        c_id=c.c_id,
        ol_i_id=c.ol_i_id,
        schema_variant=schema_variant,
        loaded_at=utcnow().isoformat() + "Z",
        complete=False,
    )


def scale_of(meta: LoadMeta) -> Scale:
    return Scale(items=meta.items, customers_per_district=meta.customers_per_district, districts=meta.districts)


def constants_of(meta: LoadMeta) -> CConstants:
    return CConstants(meta.c_last, meta.c_id, meta.ol_i_id)


def _init_worker(db: str, options: ConnectionOptions) -> None:
    global _worker_driver
    end_with_runner()
    # A unit is a few hundred thousand tuples, strings and documents, freed by reference
    # counting (no cycles): the cycle collector's default passes over them (every 700
    # allocations, the older generations with them) took about a fifth of a MongoDB load's
    # client CPU. Collect rarely, and never over what the fork server had imported.
    gc.freeze()
    gc.set_threshold(_WORKER_GC_THRESHOLD)
    _worker_driver = make_driver(db, options)
    _worker_driver.connect()


def _load_one(args: tuple) -> tuple[str, dict[str, int], float]:
    key, scale, constants, seed, now = args
    assert _worker_driver is not None, "set by the pool's initializer"
    t0 = time.perf_counter()
    tables = generate_unit(key, scale, constants, seed, now)
    _worker_driver.load_unit(key, tables)
    return key, {t: len(rows) for t, rows in tables.items()}, time.perf_counter() - t0


def refuse_existing(driver: Driver) -> None:
    """For a database that is not ours: any TPC-C load in it (complete or not) stays untouched."""
    existing = driver.read_meta()
    if existing is not None:
        raise DriverError(
            f"the database already holds TPC-C data ({existing.warehouses} warehouses, loaded "
            f"{existing.loaded_at}); it was left untouched: drop it with `tpcc load --reset` "
            "(BenchmarkRun: set workload.resetBeforeLoad: true)"
        )


def load(
    db: str,
    options: ConnectionOptions,
    driver: Driver,
    warehouses: int,
    scale: Scale,
    workers: int,
    reset: bool,
    seed: int,
    on_unit: Callable[[str, dict[str, int], int, int], None],
    keep_existing: bool = False,
) -> LoadMeta:
    """Load (or finish loading) the database; on_unit(key, rows, done, total) after each unit.
    keep_existing: fail before touching anything if the database holds a TPC-C load.
    The units are handed to the workers as a stream (Pool.imap_unordered feeds a pipe that
    blocks when full), so memory does not grow with the warehouse count."""
    if keep_existing and not reset:
        refuse_existing(driver)
    driver.create_schema(reset)
    variant = driver.describe().get("schema_variant", "default")
    meta = plan_meta(None if reset else driver.read_meta(), warehouses, scale, variant, random.Random(seed))
    driver.write_meta(meta)
    total = unit_count(warehouses, scale)
    done = driver.done_units()
    now = dt.datetime.fromisoformat(meta.loaded_at.rstrip("Z"))
    jobs = ((k, scale, constants_of(meta), seed, now) for k in unit_keys(warehouses, scale) if k not in done)
    finished = len(done)
    if finished < total:
        ctx = worker_context(__name__, driver_module(db), "numpy")
        with ctx.Pool(min(workers, total - finished), initializer=_init_worker, initargs=(db, options)) as pool:
            for key, rows, _seconds in pool.imap_unordered(_load_one, jobs):
                finished += 1
                on_unit(key, rows, finished, total)
    meta.complete = True
    driver.write_meta(meta)
    return meta


def require_loaded(driver: Driver, warehouses: int) -> LoadMeta:
    """The meta of a complete load covering the warehouses, or NotLoaded."""
    meta = driver.read_meta()
    if meta is None:
        raise NotLoaded("the database holds no TPC-C load: run `tpcc load` first")
    if not meta.complete:
        raise NotLoaded("the TPC-C load is incomplete (interrupted?): re-run `tpcc load` to finish it")
    if meta.warehouses < warehouses:
        raise NotLoaded(f"the database holds {meta.warehouses} warehouses, {warehouses} requested")
    variant = driver.describe().get("schema_variant")
    if variant is not None and variant != meta.schema_variant:
        raise NotLoaded(
            f"the database was loaded with schema {meta.schema_variant!r}, the driver "
            f"is set to {variant!r}: use the load's schema (or load again with --reset)"
        )
    done = driver.done_units()
    missing = [k for k in unit_keys(warehouses, scale_of(meta)) if k not in done]
    if missing:
        raise NotLoaded(f"the load is missing {len(missing)} unit(s), e.g. {missing[0]}: re-run `tpcc load`")
    return meta
