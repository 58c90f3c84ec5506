#!/usr/bin/env python3
"""DuckDB peers, 2 threads, per batch one statement:

  MERGE INTO orders USING (read_parquet(batch) QUALIFY row_number() over
  (partition by order_id order by seq desc) = 1) with the guarded
  soft-delete clauses.

duckdb-native (--mode native): a DuckDB database file on local disk, table
orders without a primary key (like the Iceberg tables); a CHECKPOINT at the
end is inside phase 2's time.

duckdb-iceberg (--mode iceberg): the same statement on an Iceberg table
(format v2, unpartitioned) in Apache Iceberg's REST catalog server (rest.sh:
JdbcCatalog on SQLite, local warehouse), ATTACHed with DuckDB's iceberg
extension (PyPI's duckdb_extension_iceberg, with avro and httpfs); each
statement is one Iceberg commit (DuckDB writes updates and deletes
merge-on-read: position delete files). --rest-pid: the server's CPU in
phase 2 is added to phase2_cpu_s (and reported apart as
phase2_rest_server_cpu_s).

Input is pre-parsed Parquet (one file per micro-batch) written by benchctl gen.

    run_duckdb.py --data DIR --batch B --work WORKDIR --out RESULT.json
                  [--mode native|iceberg --rest-uri http://127.0.0.1:PORT --rest-pid PID]
"""
import argparse
import os
import shutil
import statistics
import sys
import time

import duckdb
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import RSSSampler, batch_files, cpu_s, loadavg, write_result  # noqa: E402

MERGE = """MERGE INTO {t} AS t
USING (SELECT * FROM read_parquet('{f}') QUALIFY row_number() OVER (PARTITION BY order_id ORDER BY seq DESC) = 1) AS s
ON t.order_id = s.order_id
WHEN MATCHED AND s.seq > t.seq THEN UPDATE SET
  customer_id = s.customer_id, status = s.status, amount = s.amount, note = s.note,
  updated_at = s.updated_at, seq = s.seq, deleted = (s.op = 'd')
WHEN NOT MATCHED THEN INSERT (order_id, customer_id, status, amount, note, updated_at, seq, deleted)
  VALUES (s.order_id, s.customer_id, s.status, s.amount, s.note, s.updated_at, s.seq, s.op = 'd')"""

DDL = """CREATE TABLE {t} (order_id BIGINT, customer_id BIGINT, status VARCHAR, amount DECIMAL(12,2), note VARCHAR,
  updated_at TIMESTAMP, seq BIGINT, deleted BOOLEAN)"""


def load_iceberg(con):
    """the iceberg extension and what it needs, from the PyPI packages (no download at run time)"""
    import duckdb_extension_avro
    import duckdb_extension_httpfs
    import duckdb_extension_iceberg
    con.execute("SET autoinstall_known_extensions=false")
    con.execute("SET autoload_known_extensions=false")
    for mod, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_httpfs, "httpfs"), (duckdb_extension_iceberg, "iceberg")):
        path = os.path.join(os.path.dirname(mod.__file__), "extensions", f"v{duckdb.__version__}", f"{name}.duckdb_extension")
        con.execute(f"LOAD '{path}'")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mode", choices=["native", "iceberg"], default="native")
    ap.add_argument("--rest-uri", default="", help="--mode iceberg: the REST catalog")
    ap.add_argument("--rest-pid", type=int, default=0, help="--mode iceberg: the REST catalog server's pid, its CPU is counted")
    ap.add_argument("--max-batches", type=int, default=0)
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    res = {"system": f"duckdb-{a.mode}", "batch": a.batch, "data": data, "loadavg_start": loadavg(),
           "versions": {"duckdb": duckdb.__version__}}
    sampler = RSSSampler()
    if a.mode == "native":
        db = os.path.join(work, "bench.duckdb")
        con = duckdb.connect(db)
        t = "orders"
    else:
        import duckdb_extension_iceberg
        res["versions"]["duckdb_extension_iceberg"] = getattr(duckdb_extension_iceberg, "__version__", duckdb.__version__)
        con = duckdb.connect()
        load_iceberg(con)
        con.execute(f"ATTACH 'warehouse' AS lake (TYPE iceberg, ENDPOINT '{a.rest_uri}', AUTHORIZATION_TYPE 'none')")
        con.execute("CREATE SCHEMA IF NOT EXISTS lake.bench")
        t = "lake.bench.orders"
    con.execute(f"SET threads={a.threads}")
    con.execute(DDL.format(t=t))

    # ---- phase 1: bulk insert of the initial state
    sampler.reset()
    c0 = cpu_s()
    t0 = time.time()
    con.execute(f"INSERT INTO {t} SELECT order_id, customer_id, status, amount, note, updated_at, seq, false "
                f"FROM read_parquet('{os.path.join(data, 'initial.parquet')}')")
    res["initial_load_s"] = round(time.time() - t0, 2)
    res["initial_cpu_s"] = round(cpu_s() - c0, 1)
    n0 = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
    res["initial_rows"] = n0
    res["initial_rows_per_s"] = round(n0 / max(res["initial_load_s"], 1e-9))
    res["rss_peak_initial_mib"] = sampler.peak_mib()

    # ---- phase 2: micro-batches
    files = batch_files(data, a.batch)
    if a.max_batches:
        files = files[:a.max_batches]
    sampler.reset()
    res["loadavg_phase2_start"] = loadavg()
    times = []
    r0 = cpu_s(a.rest_pid) if a.rest_pid else 0.0
    rest_rss = RSSSampler(a.rest_pid) if a.rest_pid else None
    c0 = cpu_s()
    t_all = time.time()
    try:
        for f in files:
            t0 = time.time()
            con.execute(MERGE.format(t=t, f=f))
            times.append(time.time() - t0)
        if a.mode == "native":
            t0 = time.time()
            con.execute("CHECKPOINT")
            res["checkpoint_s"] = round(time.time() - t0, 2)
    except Exception as e:  # noqa: BLE001
        res["error"] = f"{type(e).__name__}: {e}"
        res["table"] = None
        con.close()
        sampler.stop()
        write_result(a.out, res)
        return
    res["phase2_s"] = round(time.time() - t_all, 2)
    res["phase2_cpu_s"] = round(cpu_s() - c0, 2)
    if a.rest_pid:
        res["phase2_client_cpu_s"] = res["phase2_cpu_s"]
        res["phase2_rest_server_cpu_s"] = round(cpu_s(a.rest_pid) - r0, 2)
        res["phase2_cpu_s"] = round(res["phase2_cpu_s"] + res["phase2_rest_server_cpu_s"], 2)
        res["rest_server_rss_peak_phase2_mib"] = rest_rss.peak_mib()
        rest_rss.stop()
    events = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    res["events_delivered"] = events
    res["phase2_events_per_s"] = round(events / res["phase2_s"])
    res["phase2_batches"] = len(times)
    res["phase2_batch_s_median"] = round(statistics.median(times), 3)
    res["phase2_batch_s_first_last"] = [round(times[0], 3), round(times[-1], 3)]
    res["phase2_batch_s_all"] = [round(x, 2) for x in times]
    res["rss_peak_phase2_mib"] = sampler.peak_mib()
    sampler.stop()
    con.close()
    if a.mode == "native":
        res["table"] = {"kind": "duckdb", "db": db, "table": "orders"}
        res["disk_mib"] = {"orders": round(os.path.getsize(db) / 2**20, 1)}
    else:  # the checker reads the table's current metadata file, as the REST catalog names it
        import json
        import urllib.request
        with urllib.request.urlopen(f"{a.rest_uri}/v1/namespaces/bench/tables/orders") as r:
            d = json.load(r)
        res["table"] = {"kind": "iceberg", "metadata": d["metadata-location"].removeprefix("file://").removeprefix("file:")}
        res["table_properties"] = d["metadata"].get("properties")
    write_result(a.out, res)


if __name__ == "__main__":
    main()
