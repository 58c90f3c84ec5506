#!/usr/bin/env python3
"""The common checker: checks and measures one system's final mirror.

    inspect_mirror.py RESULT.json --data DIR [--scans 3]

RESULT.json is a runner's result; its "table" says where the mirror is:
  {"kind": "iceberg", "metadata": ".../vN.metadata.json", "deleted": "deleted", "seq": "seq", "seq_hex": false}
  {"kind": "duckdb", "db": "...duckdb", "table": "orders"}
Every Iceberg table is read the same way: DuckDB's iceberg extension
(iceberg_scan of the metadata file, which applies position deletes) for the
checksum and the scan; pyiceberg (StaticTable) for the live data and delete
files, their bytes and rows. The checksum is order-independent:
  rows, live rows, deleted rows, keys, sum(hash(order_id, status, amount, deleted, seq))
and is compared with the generator's expected.parquet (seq_hex: lakemirror's
_seq is hex words; its last 16 hex digits are the source LSN). The result
file gets a "check" object; "correct" is true only when every number
matches. A mirror the checker cannot read is not correct (the error is kept).

A result with a "history_table" (lakemirror with history, spark-full) also
gets "history_check": the SCD2 history's open versions (is_current) against
expected.parquet — every live key has exactly one open version with the
expected values, no deleted key has one, no key has two — and the number of
versions next to the number an in-order history of the workload has
(computed here from initial.parquet and the batch files: per key in position
order, every insert or update whose tracked values differ from the previous
change's opens a version, a delete closes it). "complete" says whether the
versions (key, opening position, closing position, values) are exactly
those: informative (a history that drops late changes is incomplete but not
wrong). The result is correct only when the mirror and the open versions are.
{"kind": "iceberg", "metadata": ..., "seq": "_seq", "valid_to_seq": "_valid_to_seq", "is_current": "_is_current", "seq_hex": bool}
"""
import argparse
import json
import os
import statistics
import time
import traceback

import duckdb


def connect():
    con = duckdb.connect()
    con.execute("SET threads=2")
    con.execute("SET autoinstall_known_extensions=false")
    con.execute("SET autoload_known_extensions=false")
    import duckdb_extension_avro
    import duckdb_extension_iceberg
    for mod, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_iceberg, "iceberg")):
        path = os.path.join(os.path.dirname(mod.__file__), "extensions", f"v{duckdb.__version__}", f"{name}.duckdb_extension")
        con.execute(f"LOAD '{path}'")
    return con


CHECK = """SELECT count(*) AS rows, count(*) FILTER (WHERE NOT deleted) AS live, count(*) FILTER (WHERE deleted) AS deleted,
  count(DISTINCT order_id) AS keys,
  sum(hash(order_id, status, CAST(CAST(amount AS DECIMAL(12,2)) AS VARCHAR), deleted, seq)::HUGEINT)::VARCHAR AS checksum
FROM ({src})"""


def source(t, con):
    if t["kind"] == "duckdb":
        con.execute(f"ATTACH '{t['db']}' AS m (READ_ONLY)")
        rel = f"m.{t['table']}"
    else:
        rel = f"iceberg_scan('{t['metadata']}')"
    seq = f"CAST(('0x' || right({t.get('seq', 'seq')}, 16)) AS BIGINT)" if t.get("seq_hex") else t.get("seq", "seq")
    norm = (f"SELECT order_id, status, amount, {t.get('deleted', 'deleted')} AS deleted, {seq} AS seq FROM {rel}")
    scan = f"SELECT count(*), sum(amount) FROM {rel} WHERE NOT {t.get('deleted', 'deleted')}"
    return norm, scan


def pos(col, hexed):
    return f"CAST(('0x' || right({col}, 16)) AS BIGINT)" if hexed else col


TRACKED = "customer_id, status, CAST(CAST(amount AS DECIMAL(12,2)) AS VARCHAR), note, updated_at"


def expected_history(con, data, batch):
    """the in-order SCD2 history of the workload: versions, open versions and a checksum of
    (key, opening position, closing position, status, amount)"""
    init = os.path.join(data, "initial.parquet")
    d = os.path.join(data, f"changes-b{batch}")
    if not os.path.isdir(d):  # --stream: no batch files
        return None, None, None
    con.execute(f"""CREATE OR REPLACE TEMP TABLE ev AS
      WITH c AS (SELECT 'r' AS op, seq, order_id, customer_id, status, amount, note, updated_at FROM read_parquet('{init}')
                 UNION SELECT op, seq, order_id, customer_id, status, amount, note, updated_at FROM read_parquet('{d}/*.parquet')),
      l AS (SELECT *, hash({TRACKED}) AS h, lag(op) OVER w AS p_op, lag(hash({TRACKED})) OVER w AS p_h
            FROM c WINDOW w AS (PARTITION BY order_id ORDER BY seq))
      SELECT *, op <> 'd' AND (p_op IS NULL OR p_op = 'd' OR h <> p_h) AS opens FROM l
      WHERE (op <> 'd' AND (p_op IS NULL OR p_op = 'd' OR h <> p_h)) OR (op = 'd' AND p_op IS NOT NULL AND p_op <> 'd')""")
    return con.execute("""SELECT count(*), count(*) FILTER (WHERE to_seq IS NULL),
        sum(hash(order_id, seq, coalesce(to_seq, -1), status, CAST(CAST(amount AS DECIMAL(12,2)) AS VARCHAR))::HUGEINT)::VARCHAR
      FROM (SELECT *, lead(seq) OVER (PARTITION BY order_id ORDER BY seq) AS to_seq FROM ev) WHERE opens""").fetchone()


def check_history(con, h, data, batch):
    rel = f"iceberg_scan('{h['metadata']}')"
    hexed = h.get("seq_hex", False)
    cur = h.get("is_current", "_is_current")
    con.execute(f"""CREATE OR REPLACE TEMP TABLE hv AS SELECT order_id, status, amount, {cur} AS cur,
        {pos(h.get('seq', '_seq'), hexed)} AS seq, {pos(h.get('valid_to_seq', '_valid_to_seq'), hexed)} AS to_seq FROM {rel}""")
    exp = os.path.join(data, "expected.parquet")
    versions, open_, multi = con.execute("""SELECT count(*), count(*) FILTER (WHERE cur),
        (SELECT count(*) FROM (SELECT order_id FROM hv WHERE cur GROUP BY order_id HAVING count(*) > 1)) FROM hv""").fetchone()
    # live keys whose open version is missing or differs, deleted keys with an open version
    live_wrong, deleted_open, extra_open = con.execute(f"""WITH e AS (SELECT * FROM read_parquet('{exp}')),
        o AS (SELECT * FROM hv WHERE cur)
      SELECT (SELECT count(*) FROM e WHERE NOT deleted AND NOT EXISTS (SELECT 1 FROM o WHERE o.order_id = e.order_id
                AND o.status = e.status AND CAST(o.amount AS DECIMAL(12,2)) = e.amount)),
             (SELECT count(*) FROM e WHERE deleted AND EXISTS (SELECT 1 FROM o WHERE o.order_id = e.order_id)),
             (SELECT count(*) FROM o WHERE NOT EXISTS (SELECT 1 FROM e WHERE e.order_id = o.order_id))""").fetchone()
    got_sum = con.execute("""SELECT sum(hash(order_id, seq, coalesce(to_seq, -1), status,
        CAST(CAST(amount AS DECIMAL(12,2)) AS VARCHAR))::HUGEINT)::VARCHAR FROM hv""").fetchone()[0]
    ev, eo, esum = expected_history(con, data, batch)
    live = con.execute(f"SELECT count(*) FROM read_parquet('{exp}') WHERE NOT deleted").fetchone()[0]
    out = {"versions": versions, "open": open_, "keys_with_two_open": multi, "live_keys_without_expected_open": live_wrong,
           "deleted_keys_with_open": deleted_open, "open_for_unknown_keys": extra_open,
           "expected_versions": ev, "expected_open": eo, "complete": None if ev is None else (got_sum == esum and versions == ev)}
    out["correct"] = multi == 0 and live_wrong == 0 and deleted_open == 0 and extra_open == 0 and open_ == live
    try:
        out.update(file_counts(h))
    except Exception as e:  # noqa: BLE001
        out["files_error"] = f"{type(e).__name__}: {e}"
    return out


def file_counts(t):
    """live data and delete files of the current snapshot: counts, bytes, rows"""
    if t["kind"] != "iceberg":
        size = os.path.getsize(t["db"])
        return {"data_files": 1, "delete_files": 0, "data_bytes": size, "delete_bytes": 0}
    from pyiceberg.table import StaticTable
    tbl = StaticTable.from_metadata(t["metadata"])
    f = tbl.inspect.files().to_pydict()
    out = {"data_files": 0, "delete_files": 0, "data_bytes": 0, "delete_bytes": 0, "data_rows": 0, "delete_rows": 0}
    for c, size, n in zip(f["content"], f["file_size_in_bytes"], f["record_count"]):
        kind = "data" if c == 0 else "delete"
        out[f"{kind}_files"] += 1
        out[f"{kind}_bytes"] += size
        out[f"{kind}_rows"] += n
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("result")
    ap.add_argument("--data", required=True)
    ap.add_argument("--scans", type=int, default=3)
    a = ap.parse_args()
    with open(a.result) as f:
        res = json.load(f)
    t = res.get("table")
    con = connect()
    names = ["rows", "live", "deleted", "keys", "checksum"]
    exp = dict(zip(names, con.execute(CHECK.format(src=f"SELECT * FROM read_parquet('{os.path.join(a.data, 'expected.parquet')}')")).fetchone()))
    if not t:
        res["check"] = {"correct": False, "expected": exp, "got": None, "error": "the run left no table to check"}
    else:
        try:
            norm, scan = source(t, con)
            got = dict(zip(names, con.execute(CHECK.format(src=norm)).fetchone()))
            times = []
            scan_out = None
            for _ in range(a.scans):
                c2 = connect()
                _, sc = source(t, c2)
                t0 = time.perf_counter()
                scan_out = c2.execute(sc).fetchone()
                times.append(time.perf_counter() - t0)
                c2.close()
            res["check"] = {"got": got, "expected": exp, "correct": got == exp,
                            "scan_s_median": round(statistics.median(times), 3), "scan_s_all": [round(x, 3) for x in times],
                            "scan_live_rows": scan_out[0], "scan_sum_amount": str(scan_out[1])}
            try:
                res["check"].update(file_counts(t))
            except Exception as e:  # noqa: BLE001 (the counts are informative; the checksum decides)
                res["check"]["files_error"] = f"{type(e).__name__}: {e}"
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            res["check"] = {"correct": False, "expected": exp, "got": None, "error": f"{type(e).__name__}: {e}"}
    h = res.get("history_table")
    if h:
        try:
            res["history_check"] = check_history(con, h, a.data, res["batch"])
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            res["history_check"] = {"correct": False, "error": f"{type(e).__name__}: {e}"}
        if not res["history_check"]["correct"]:
            res["check"]["correct"] = False
            res["check"]["error"] = "the history's open versions do not match the expected final rows"
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1, default=str)
    print(json.dumps(res["check"], default=str))
    if h:
        print("history: " + json.dumps(res["history_check"], default=str))


if __name__ == "__main__":
    main()
