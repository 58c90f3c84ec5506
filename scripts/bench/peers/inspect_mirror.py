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
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1, default=str)
    print(json.dumps(res["check"], default=str))


if __name__ == "__main__":
    main()
