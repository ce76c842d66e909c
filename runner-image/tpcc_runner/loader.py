"""`tpcc load`: schema, then the load units in parallel worker processes, resumable."""
from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import random
import time
from typing import Callable

from .drivers import make_driver
from .drivers.base import ConnectionOptions, Driver, DriverError, LoadMeta, NotLoaded, utcnow
from .generate import generate_unit, unit_keys
from .workload import CConstants, Scale, load_constants

_worker_driver: Driver | None = None


def plan_meta(existing: LoadMeta | None, warehouses: int, scale: Scale, schema_variant: str,
              rng: random.Random) -> LoadMeta:
    """The meta of the load to do: a new one, or the one to resume. A database holding a
    different load is refused (use --reset), never mixed."""
    if existing is not None:
        same = (existing.warehouses, existing.items, existing.customers_per_district,
                existing.schema_variant) == (warehouses, scale.items,
                                             scale.customers_per_district, schema_variant)
        if not same:
            raise DriverError(
                f"the database holds a different TPC-C load ({existing.warehouses} warehouses, "
                f"{existing.items} items, {existing.customers_per_district} customers/district, "
                f"schema {existing.schema_variant}); use --reset to replace it")
        return existing
    c = load_constants(rng)
    return LoadMeta(warehouses=warehouses, items=scale.items, districts=scale.districts,
                    customers_per_district=scale.customers_per_district,
                    orders_per_district=scale.orders_per_district,
                    new_orders_per_district=scale.new_orders_per_district,
                    c_last=c.c_last, c_id=c.c_id, ol_i_id=c.ol_i_id,
                    schema_variant=schema_variant, loaded_at=utcnow().isoformat() + "Z",
                    complete=False)


def scale_of(meta: LoadMeta) -> Scale:
    return Scale(items=meta.items, customers_per_district=meta.customers_per_district,
                 districts=meta.districts)


def constants_of(meta: LoadMeta) -> CConstants:
    return CConstants(meta.c_last, meta.c_id, meta.ol_i_id)


def _init_worker(db: str, options: ConnectionOptions) -> None:
    global _worker_driver
    _worker_driver = make_driver(db, options)
    _worker_driver.connect()


def _load_one(args: tuple) -> tuple[str, dict[str, int], float]:
    key, scale, constants, seed, now = args
    t0 = time.perf_counter()
    tables = generate_unit(key, scale, constants, seed, now)
    _worker_driver.load_unit(key, tables)
    return key, {t: len(rows) for t, rows in tables.items()}, time.perf_counter() - t0


def load(db: str, options: ConnectionOptions, driver: Driver, warehouses: int, scale: Scale,
         workers: int, reset: bool, seed: int,
         on_unit: Callable[[str, dict[str, int], int, int], None]) -> LoadMeta:
    """Load (or finish loading) the database; on_unit(key, rows, done, total) after each unit."""
    driver.create_schema(reset)
    variant = driver.describe().get("schema_variant", "default")
    meta = plan_meta(None if reset else driver.read_meta(), warehouses, scale, variant,
                     random.Random(seed))
    driver.write_meta(meta)
    keys = unit_keys(warehouses, scale)
    done = driver.done_units()
    todo = [k for k in keys if k not in done]
    now = dt.datetime.fromisoformat(meta.loaded_at.rstrip("Z"))
    jobs = [(k, scale, constants_of(meta), seed, now) for k in todo]
    finished = len(keys) - len(todo)
    if jobs:
        ctx = mp.get_context("spawn")
        with ctx.Pool(min(workers, len(jobs)), initializer=_init_worker,
                      initargs=(db, options)) as pool:
            for key, rows, _seconds in pool.imap_unordered(_load_one, jobs):
                finished += 1
                on_unit(key, rows, finished, len(keys))
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
    missing = set(unit_keys(warehouses, scale_of(meta))) - driver.done_units()
    if missing:
        raise NotLoaded(f"the load is missing {len(missing)} unit(s), e.g. {sorted(missing)[0]}: "
                        "re-run `tpcc load`")
    return meta
