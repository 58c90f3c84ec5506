#!/usr/bin/env python3
"""Spark peer: pyspark local[2] + Apache Iceberg's Spark runtime, Hadoop
catalog on local disk, format v2, the usual pattern per micro-batch:
dedup to the latest change per key (row_number over seq), then the guarded
soft-delete MERGE INTO.

    run_spark.py --data DIR --batch B --mode mor|cow --work WORKDIR --out RESULT.json
                 [--jar PATH] [--driver-memory 4g] [--shuffle-partitions 4]

Input is pre-parsed: each micro-batch is one Parquet file of flattened
changes (op, seq, columns) that benchctl gen wrote. Timed: the initial INSERT
(phase 1) and, per batch, read + dedup + MERGE (phase 2). Not timed: JVM and
session start, CREATE TABLE.
"""
import argparse
import glob
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import RSSSampler, batch_files, cpu_s, loadavg, write_result  # noqa: E402

DEFAULT_JAR = os.path.expanduser("~/.m2/repository/org/apache/iceberg/iceberg-spark-runtime-4.0_2.13/1.10.0/"
                                 "iceberg-spark-runtime-4.0_2.13-1.10.0.jar")

MERGE = """MERGE INTO lake.db.orders t
USING (SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY order_id ORDER BY seq DESC) AS rn FROM batch_raw) WHERE rn = 1) s
ON t.order_id = s.order_id
WHEN MATCHED AND s.seq > t.seq THEN UPDATE SET
  customer_id = s.customer_id, status = s.status, amount = s.amount, note = s.note,
  updated_at = s.updated_at, seq = s.seq, deleted = (s.op = 'd')
WHEN NOT MATCHED THEN INSERT (order_id, customer_id, status, amount, note, updated_at, seq, deleted)
  VALUES (s.order_id, s.customer_id, s.status, s.amount, s.note, s.updated_at, s.seq, s.op = 'd')"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument("--mode", choices=["mor", "cow"], default="mor")
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jar", default=DEFAULT_JAR)
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--shuffle-partitions", default="4")
    ap.add_argument("--max-batches", type=int, default=0)
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    res = {"system": f"spark-{a.mode}", "batch": a.batch, "data": data, "loadavg_start": loadavg()}
    sampler = RSSSampler()
    t0 = time.time()
    from pyspark.sql import SparkSession
    import pyspark
    spark = (SparkSession.builder.master("local[2]").appName("cdc-bench")
             .config("spark.driver.memory", a.driver_memory)
             .config("spark.jars", a.jar)
             .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
             .config("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog")
             .config("spark.sql.catalog.lake.type", "hadoop")
             .config("spark.sql.catalog.lake.warehouse", "file://" + os.path.join(work, "wh"))
             .config("spark.sql.shuffle.partitions", a.shuffle_partitions)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.local.dir", os.path.join(work, "tmp"))
             # the session catalog's default ./spark-warehouse would land in the caller's directory
             .config("spark.sql.warehouse.dir", os.path.join(work, "spark-warehouse"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    res["versions"] = {"pyspark": pyspark.__version__, "iceberg_jar": os.path.basename(a.jar)}
    res["session_start_s"] = round(time.time() - t0, 1)
    mode = "merge-on-read" if a.mode == "mor" else "copy-on-write"
    spark.sql(f"""CREATE TABLE lake.db.orders (order_id bigint, customer_id bigint, status string, amount decimal(12,2),
        note string, updated_at timestamp_ntz, seq bigint, deleted boolean) USING iceberg
        TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}',
                       'write.merge.mode'='{mode}')""")

    # ---- phase 1: bulk insert of the initial state
    sampler.reset()
    c0 = cpu_s()
    t0 = time.time()
    spark.sql(f"""INSERT INTO lake.db.orders SELECT order_id, customer_id, status, amount, note, updated_at, seq, false
                  FROM parquet.`{os.path.join(data, 'initial.parquet')}`""")
    res["initial_load_s"] = round(time.time() - t0, 2)
    res["initial_cpu_s"] = round(cpu_s() - c0, 1)
    n0 = spark.sql("SELECT count(*) FROM lake.db.orders").collect()[0][0]
    res["initial_rows"] = n0
    res["initial_rows_per_s"] = round(n0 / res["initial_load_s"])
    res["rss_peak_initial_mib"] = sampler.peak_mib()

    # ---- phase 2: micro-batches
    files = batch_files(data, a.batch)
    if a.max_batches:
        files = files[:a.max_batches]
    sampler.reset()
    res["loadavg_phase2_start"] = loadavg()
    times = []
    c0 = cpu_s()
    t_all = time.time()
    for f in files:
        t0 = time.time()
        df = spark.read.parquet(f)
        df.createOrReplaceTempView("batch_raw")
        spark.sql(MERGE)
        times.append(time.time() - t0)
    res["phase2_s"] = round(time.time() - t_all, 2)
    res["phase2_cpu_s"] = round(cpu_s() - c0, 1)
    import pyarrow.parquet as pq
    events = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    res["events_delivered"] = events
    res["phase2_events_per_s"] = round(events / res["phase2_s"])
    res["phase2_batches"] = len(times)
    res["phase2_batch_s_median"] = round(statistics.median(times), 3)
    res["phase2_batch_s_first_last"] = [round(times[0], 3), round(times[-1], 3)]
    res["phase2_batch_s_all"] = [round(x, 2) for x in times]
    res["rss_peak_phase2_mib"] = sampler.peak_mib()
    spark.stop()
    sampler.stop()
    meta_dir = os.path.join(work, "wh", "db", "orders", "metadata")
    with open(os.path.join(meta_dir, "version-hint.text")) as fh:
        v = fh.read().strip()
    res["table"] = {"kind": "iceberg", "metadata": os.path.join(meta_dir, f"v{v}.metadata.json")}
    res["disk_mib"] = {"orders": round(sum(os.path.getsize(p) for p in glob.glob(os.path.join(work, "wh", "db", "orders", "**"), recursive=True) if os.path.isfile(p)) / 2**20, 1)}
    write_result(a.out, res)


if __name__ == "__main__":
    main()
