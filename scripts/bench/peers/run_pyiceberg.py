#!/usr/bin/env python3
"""pyiceberg peer: SQL catalog on SQLite, local warehouse, format v2, the way
a Python user would apply micro-batches with pyiceberg's own API:

  per batch: read the batch's Parquet file; dedup to the latest change per key
  (sort by key, seq desc; first per key); guard: scan the stored seq of the
  batch's keys (row_filter In(order_id, keys)) and keep only changes whose
  seq is higher (or whose key is new); then Table.upsert(rows, join_cols=
  ["order_id"]) with deleted = (op = 'd').

    run_pyiceberg.py --data DIR --batch B --work WORKDIR --out RESULT.json

pyiceberg 0.12 writes deletes copy-on-write (upsert = overwrite of the matched
rows' files + append), so each batch rewrites the data files its keys touch.
"""
import argparse
import os
import shutil
import statistics
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import RSSSampler, batch_files, cpu_s, loadavg, write_result  # noqa: E402


def iceberg_schema():
    from pyiceberg.schema import Schema
    from pyiceberg.types import BooleanType, DecimalType, LongType, NestedField, StringType, TimestampType
    return Schema(
        NestedField(1, "order_id", LongType(), required=False),
        NestedField(2, "customer_id", LongType(), required=False),
        NestedField(3, "status", StringType(), required=False),
        NestedField(4, "amount", DecimalType(12, 2), required=False),
        NestedField(5, "note", StringType(), required=False),
        NestedField(6, "updated_at", TimestampType(), required=False),
        NestedField(7, "seq", LongType(), required=False),
        NestedField(8, "deleted", BooleanType(), required=False),
    )


ARROW = pa.schema([("order_id", pa.int64()), ("customer_id", pa.int64()), ("status", pa.large_string()),
                   ("amount", pa.decimal128(12, 2)), ("note", pa.large_string()), ("updated_at", pa.timestamp("us")),
                   ("seq", pa.int64()), ("deleted", pa.bool_())])


def to_rows(t):
    """flattened changes -> table rows (deleted = op = 'd')"""
    return pa.table([t["order_id"], t["customer_id"], t["status"].cast(pa.large_string()), t["amount"],
                     t["note"].cast(pa.large_string()), t["updated_at"], t["seq"], pc.equal(t["op"], "d")], schema=ARROW)


def dedup_latest(t):
    t = t.sort_by([("order_id", "ascending"), ("seq", "descending")])
    ids = t["order_id"].to_numpy()
    first = np.ones(len(ids), dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    return t.filter(pa.array(first))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-batches", type=int, default=0)
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "wh"))
    import pyiceberg
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import In
    res = {"system": "pyiceberg", "batch": a.batch, "data": data, "loadavg_start": loadavg(),
           "versions": {"pyiceberg": pyiceberg.__version__, "pyarrow": pa.__version__}}
    sampler = RSSSampler()
    cat = SqlCatalog("bench", uri=f"sqlite:///{os.path.join(work, 'catalog.db')}", warehouse="file://" + os.path.join(work, "wh"))
    cat.create_namespace("bench")
    tbl = cat.create_table("bench.orders", schema=iceberg_schema(), properties={"format-version": "2"})

    # ---- phase 1
    sampler.reset()
    c0 = cpu_s()
    t0 = time.time()
    init = to_rows(pq.read_table(os.path.join(data, "initial.parquet")))
    tbl.append(init)
    res["initial_load_s"] = round(time.time() - t0, 2)
    res["initial_cpu_s"] = round(cpu_s() - c0, 1)
    res["initial_rows"] = init.num_rows
    res["initial_rows_per_s"] = round(init.num_rows / res["initial_load_s"])
    res["rss_peak_initial_mib"] = sampler.peak_mib()
    del init

    # ---- phase 2
    files = batch_files(data, a.batch)
    if a.max_batches:
        files = files[:a.max_batches]
    sampler.reset()
    res["loadavg_phase2_start"] = loadavg()
    times, parts = [], {"read_dedup": 0.0, "guard_scan": 0.0, "upsert": 0.0}
    events = updated = inserted = dropped = 0
    c0 = cpu_s()
    t_all = time.time()
    for f in files:
        t0 = time.time()
        raw = pq.read_table(f)
        events += raw.num_rows
        latest = dedup_latest(raw)
        t1 = time.time()
        keys = latest["order_id"].to_pylist()
        stored = tbl.scan(row_filter=In("order_id", keys), selected_fields=("order_id", "seq")).to_arrow()
        stored = stored.rename_columns(["order_id", "stored_seq"])
        j = latest.join(stored, keys="order_id", join_type="left outer")
        keep = pc.or_kleene(pc.is_null(j["stored_seq"]), pc.greater(j["seq"], j["stored_seq"]))
        changes = j.filter(keep).drop_columns(["stored_seq"])
        dropped += j.num_rows - changes.num_rows
        t2 = time.time()
        if changes.num_rows:
            r = tbl.upsert(to_rows(changes), join_cols=["order_id"])
            updated += r.rows_updated
            inserted += r.rows_inserted
        t3 = time.time()
        parts["read_dedup"] += t1 - t0
        parts["guard_scan"] += t2 - t1
        parts["upsert"] += t3 - t2
        times.append(t3 - t0)
    res["phase2_s"] = round(time.time() - t_all, 2)
    res["phase2_cpu_s"] = round(cpu_s() - c0, 2)
    res["events_delivered"] = events
    res["phase2_events_per_s"] = round(events / res["phase2_s"])
    res["phase2_batches"] = len(times)
    res["phase2_batch_s_median"] = round(statistics.median(times), 3)
    res["phase2_batch_s_first_last"] = [round(times[0], 3), round(times[-1], 3)]
    res["phase2_batch_s_all"] = [round(x, 2) for x in times]
    res["phase2_parts_s"] = {k: round(v, 2) for k, v in parts.items()}
    res["phase2_rows"] = {"updated": updated, "inserted": inserted, "guard_dropped": dropped}
    res["rss_peak_phase2_mib"] = sampler.peak_mib()
    sampler.stop()
    tbl = cat.load_table("bench.orders")
    res["table"] = {"kind": "iceberg", "metadata": tbl.metadata_location.removeprefix("file://")}
    write_result(a.out, res)


if __name__ == "__main__":
    main()
