#!/usr/bin/env python3
"""Spark peer: pyspark local[2] + Apache Iceberg's Spark runtime, Hadoop
catalog on local disk, format v2, the usual pattern per micro-batch:
dedup to the latest change per key (row_number over seq), then the guarded
soft-delete MERGE INTO.

    run_spark.py --data DIR --batch B --mode mor|cow [--tables mirror|full] --work WORKDIR --out RESULT.json
                 [--jar PATH] [--driver-memory 4g] [--shuffle-partitions 4]

--tables full (system spark-full) writes the three tables lakemirror writes,
the way a Spark user would, per micro-batch in this order:
  1. bronze: INSERT INTO orders_bronze the batch's raw change records (every
     delivered record, redeliveries too) with the batch number and the
     ingestion time;
  2. history (SCD type 2): one MERGE INTO orders_history. Its source is the
     batch's distinct changes (op, seq, key), guarded by the mirror's stored
     seq of the key (older changes are dropped: late changes below the key's
     position do not enter the history, where lakemirror weaves them in), in
     position order per key; an insert or update whose tracked values (a
     null-safe SHA-256 of to_json of the columns, _row_hash) equal the
     previous change's (or the stored row's) is a no-op and opens nothing; a
     delete closes. Close rows (one per key: the batch's first real change)
     match the open version (_is_current) and set _valid_to_seq/_valid_to,
     _is_current = false; open rows (merge key NULL) insert the new versions,
     each closed by the next real change of the batch or left open;
  3. mirror: the guarded soft-delete MERGE INTO (as for spark-mor).
Positions (_seq, _valid_to_seq) are the source LSN (bigint); times
(_valid_from, _valid_to) are updated_at of the opening and closing change (the
flattened input has no commit time; a delete's _valid_to is NULL, its
position is in _valid_to_seq). The initial load inserts into all three.

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


HASH = "sha2(to_json(named_struct('customer_id', {p}customer_id, 'status', {p}status, 'amount', {p}amount, 'note', {p}note, 'updated_at', {p}updated_at)), 256)"

# the SCD2 history MERGE of one batch (spark-full); reads the mirror before its own MERGE
HISTORY_MERGE = f"""MERGE INTO lake.db.orders_history t
USING (
  WITH chg AS (SELECT DISTINCT op, seq, order_id, customer_id, status, amount, note, updated_at FROM batch_raw),
  m AS (SELECT order_id, seq AS m_seq, deleted AS m_deleted, {HASH.format(p='')} AS m_hash
        FROM lake.db.orders WHERE order_id IN (SELECT order_id FROM chg)),
  g AS (SELECT chg.*, {HASH.format(p='chg.')} AS row_hash, m.m_seq, m.m_deleted, m.m_hash
        FROM chg LEFT JOIN m ON chg.order_id = m.order_id WHERE m.m_seq IS NULL OR chg.seq > m.m_seq),
  o AS (SELECT g.*, lag(op) OVER w AS p_op, lag(row_hash) OVER w AS p_hash, row_number() OVER w AS rn
        FROM g WINDOW w AS (PARTITION BY order_id ORDER BY seq)),
  e AS (SELECT o.*,
          CASE WHEN rn > 1 THEN p_op WHEN m_seq IS NULL THEN NULL WHEN m_deleted THEN 'd' ELSE 'u' END AS prev_op,
          CASE WHEN rn > 1 THEN p_hash ELSE m_hash END AS prev_hash FROM o),
  ev AS (SELECT e.*, op <> 'd' AND (prev_op IS NULL OR prev_op = 'd' OR row_hash <> prev_hash) AS opens FROM e
         WHERE (op <> 'd' AND (prev_op IS NULL OR prev_op = 'd' OR row_hash <> prev_hash))
            OR (op = 'd' AND prev_op IS NOT NULL AND prev_op <> 'd')),
  s AS (SELECT ev.*, lead(seq) OVER w AS next_seq, lead(updated_at) OVER w AS next_ts, lead(op) OVER w AS next_op,
          row_number() OVER w AS ern FROM ev WINDOW w AS (PARTITION BY order_id ORDER BY seq))
  SELECT order_id AS merge_key, 'close' AS kind, order_id, customer_id, status, amount, note, updated_at, row_hash,
         seq AS pos, CASE WHEN op = 'd' THEN NULL ELSE updated_at END AS ts,
         CAST(NULL AS bigint) AS next_seq, CAST(NULL AS timestamp_ntz) AS next_ts
    FROM s WHERE ern = 1
  UNION ALL
  -- an open row's pos and ts are its own position and time (_seq, _valid_from)
  SELECT CAST(NULL AS bigint), 'open', order_id, customer_id, status, amount, note, updated_at, row_hash,
         seq, updated_at, next_seq, CASE WHEN next_op = 'd' THEN NULL ELSE next_ts END
    FROM s WHERE opens
) src
ON t.order_id = src.merge_key AND t._is_current
WHEN MATCHED THEN UPDATE SET _is_current = false, _valid_to_seq = src.pos, _valid_to = src.ts
WHEN NOT MATCHED AND src.kind = 'open' THEN INSERT
  (order_id, customer_id, status, amount, note, updated_at, _seq, _valid_from, _valid_to, _valid_to_seq, _is_current, _row_hash)
  VALUES (src.order_id, src.customer_id, src.status, src.amount, src.note, src.updated_at, src.pos, src.ts,
          src.next_ts, src.next_seq, src.next_seq IS NULL, src.row_hash)"""

COLS = "order_id bigint, customer_id bigint, status string, amount decimal(12,2), note string, updated_at timestamp_ntz"


def table_mib(work, name):
    return round(sum(os.path.getsize(p) for p in glob.glob(os.path.join(work, "wh", "db", name, "**"), recursive=True)
                     if os.path.isfile(p)) / 2**20, 1)


def metadata_of(work, name):
    meta_dir = os.path.join(work, "wh", "db", name, "metadata")
    with open(os.path.join(meta_dir, "version-hint.text")) as fh:
        v = fh.read().strip()
    return os.path.join(meta_dir, f"v{v}.metadata.json")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument("--mode", choices=["mor", "cow"], default="mor")
    ap.add_argument("--tables", choices=["mirror", "full"], default="mirror",
                    help="mirror: the mirror MERGE only (spark-mor/cow); full: bronze, SCD2 history and mirror (spark-full)")
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
    full = a.tables == "full"
    res = {"system": "spark-full" if full else f"spark-{a.mode}", "mode": a.mode, "batch": a.batch, "data": data, "loadavg_start": loadavg()}
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
    props = (f"TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', "
             f"'write.merge.mode'='{mode}')")
    spark.sql(f"CREATE TABLE lake.db.orders ({COLS}, seq bigint, deleted boolean) USING iceberg {props}")
    if full:
        spark.sql(f"CREATE TABLE lake.db.orders_bronze (op string, seq bigint, {COLS}, _batch int, _ingested_at timestamp) "
                  f"USING iceberg TBLPROPERTIES ('format-version'='2')")
        spark.sql(f"""CREATE TABLE lake.db.orders_history ({COLS}, _seq bigint, _valid_from timestamp_ntz, _valid_to timestamp_ntz,
            _valid_to_seq bigint, _is_current boolean, _row_hash string) USING iceberg {props}""")
    initial = os.path.join(data, 'initial.parquet')

    # ---- phase 1: bulk insert of the initial state
    sampler.reset()
    c0 = cpu_s()
    t0 = time.time()
    spark.sql(f"""INSERT INTO lake.db.orders SELECT order_id, customer_id, status, amount, note, updated_at, seq, false
                  FROM parquet.`{initial}`""")
    if full:
        spark.sql(f"INSERT INTO lake.db.orders_bronze SELECT *, 0, current_timestamp() FROM parquet.`{initial}`")
        spark.sql(f"""INSERT INTO lake.db.orders_history SELECT order_id, customer_id, status, amount, note, updated_at,
                      seq, updated_at, NULL, NULL, true, {HASH.format(p='')} FROM parquet.`{initial}`""")
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
    parts = {"bronze": 0.0, "history": 0.0, "mirror": 0.0}
    c0 = cpu_s()
    t_all = time.time()
    for i, f in enumerate(files, 1):
        t0 = time.time()
        df = spark.read.parquet(f)
        df.createOrReplaceTempView("batch_raw")
        if full:
            spark.sql(f"INSERT INTO lake.db.orders_bronze SELECT *, {i}, current_timestamp() FROM batch_raw")
            t1 = time.time()
            spark.sql(HISTORY_MERGE)
            t2 = time.time()
            parts["bronze"] += t1 - t0
            parts["history"] += t2 - t1
        t3 = time.time()
        spark.sql(MERGE)
        parts["mirror"] += time.time() - t3
        times.append(time.time() - t0)
    res["phase2_s"] = round(time.time() - t_all, 2)
    res["phase2_cpu_s"] = round(cpu_s() - c0, 2)
    import pyarrow.parquet as pq
    events = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    res["events_delivered"] = events
    res["phase2_events_per_s"] = round(events / res["phase2_s"])
    res["phase2_batches"] = len(times)
    res["phase2_batch_s_median"] = round(statistics.median(times), 3)
    res["phase2_batch_s_first_last"] = [round(times[0], 3), round(times[-1], 3)]
    res["phase2_batch_s_all"] = [round(x, 2) for x in times]
    res["rss_peak_phase2_mib"] = sampler.peak_mib()
    if full:
        res["phase2_parts_s"] = {k: round(v, 2) for k, v in parts.items()}
        res["history_versions"] = spark.sql("SELECT count(*) FROM lake.db.orders_history").collect()[0][0]
    spark.stop()
    sampler.stop()
    res["table"] = {"kind": "iceberg", "metadata": metadata_of(work, "orders")}
    res["disk_mib"] = {"orders": table_mib(work, "orders")}
    if full:
        res["history_table"] = {"kind": "iceberg", "metadata": metadata_of(work, "orders_history"), "seq": "_seq",
                                "valid_to_seq": "_valid_to_seq", "is_current": "_is_current", "seq_hex": False}
        res["tables"] = {n: metadata_of(work, n) for n in ("orders", "orders_bronze", "orders_history")}
        res["disk_mib"].update({n: table_mib(work, n) for n in ("orders_bronze", "orders_history")})
    write_result(a.out, res)


if __name__ == "__main__":
    main()
