"""Pruning proof (issue 39 item 1): reads the tables scripts/prune/gen wrote
(partitioned: mirror bucket(16, id), history day(_valid_from); and the same
stream unpartitioned) with pyiceberg and DuckDB, for a one-day filter on the
history and a key-bucket filter on the mirror. Prints, per reader and layout,
the data files the reader plans or reads, and asserts that both layouts return
exactly the same rows. Exit 1 on a difference. Usage: check.py GEN_JSON"""
import datetime as dt
import json
import os
import re
import sys

import duckdb
import pyarrow as pa
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, In, LessThan
from pyiceberg.table import StaticTable
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import LongType

gen = json.load(open(sys.argv[1]))
print(f"stream: {gen['keys']} keys, {gen['changes']} records over {gen['days']} days after day 0 ({gen['deletes']} deletes); "
      f"write {gen['partitioned']['write_s']:.1f} s partitioned, {gen['unpartitioned']['write_s']:.1f} s unpartitioned")
day0 = dt.datetime.fromisoformat(gen["day0"].replace("Z", "+00:00"))
day = day0 + dt.timedelta(days=15)
nxt = day + dt.timedelta(days=1)
bucket = BucketTransform(16).transform(LongType())
keys = [k for k in range(1, gen["keys"] + 1) if bucket(k) == 3][:5]

COLS = {"history": ["id", "region", "amount", "_seq", "_valid_from", "_valid_to", "_is_current"],
        "mirror": ["id", "region", "amount", "_seq", "_is_deleted"]}
queries = {
    "history, one day of 31 (_valid_from on day 15)": (
        "history", And(GreaterThanOrEqual("_valid_from", day.isoformat()), LessThan("_valid_from", nxt.isoformat())),
        f"_valid_from >= TIMESTAMPTZ '{day.isoformat()}' AND _valid_from < TIMESTAMPTZ '{nxt.isoformat()}'"),
    "mirror, one key (id = %d)" % keys[0]: ("mirror", EqualTo("id", keys[0]), f"id = {keys[0]}"),
    "mirror, 5 keys of bucket 3 (id IN ...)": ("mirror", In("id", keys), "id IN (%s)" % ",".join(map(str, keys))),
}


def rows(tbl: pa.Table, cols):
    """The table's rows as sorted tuples of text, timestamps as µs since the
    epoch (the readers give them in other time zones and units)."""
    tbl = tbl.select(cols)
    out = []
    for name in cols:
        c = tbl.column(name)
        if pa.types.is_timestamp(c.type):
            c = c.cast(pa.timestamp("us", tz=c.type.tz)).cast(pa.int64())
        out.append(c.to_pylist())
    return sorted(tuple(str(v) for v in r) for r in zip(*out))


con = duckdb.connect()
con.execute("SET threads=2")
con.execute("SET autoinstall_known_extensions=false")
con.execute("SET autoload_known_extensions=false")
import duckdb_extension_avro  # noqa: E402  (PyPI packages that ship the extensions: no download at run time)
import duckdb_extension_iceberg  # noqa: E402

for mod, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_iceberg, "iceberg")):
    con.execute(f"LOAD '{os.path.join(os.path.dirname(mod.__file__), 'extensions', f'v{duckdb.__version__}', f'{name}.duckdb_extension')}'")


def duck_files(meta, where):
    plan = con.execute(f"EXPLAIN ANALYZE SELECT * FROM iceberg_scan('{meta}') WHERE {where}").fetchall()
    text = "\n".join(str(c) for r in plan for c in r)
    m = re.search(r"Total Files Read:\s*(\d+)", text)
    return int(m.group(1)) if m else None


def total_files(meta):
    return len(StaticTable.from_metadata(meta).scan().plan_files())


failed = False
print(f"| query | layout | pyiceberg files planned (of all) | DuckDB files read | rows |")
print("|---|---|---|---|---|")
for q, (kind, expr, sql) in queries.items():
    results = {}
    for layout in ("unpartitioned", "partitioned"):
        meta = gen[layout][kind]
        t = StaticTable.from_metadata(meta)
        tasks = t.scan(row_filter=expr).plan_files()
        got = rows(t.scan(row_filter=expr).to_arrow(), COLS[kind])
        dgot = rows(con.execute(f"SELECT * FROM iceberg_scan('{meta}') WHERE {sql}").to_arrow_table(), COLS[kind])
        if dgot != got:
            print(f"MISMATCH {q} {layout}: DuckDB {len(dgot)} rows, pyiceberg {len(got)}")
            failed = True
        results[layout] = got
        df = duck_files(meta, sql)
        print(f"| {q} | {layout} | {len(tasks)} of {total_files(meta)} | {'n/a' if df is None else df} | {len(got)} |")
    if results["partitioned"] != results["unpartitioned"]:
        print(f"MISMATCH {q}: partitioned {len(results['partitioned'])} rows, unpartitioned {len(results['unpartitioned'])}")
        failed = True
    elif not results["partitioned"]:
        print(f"EMPTY {q}: the query returned no rows, nothing was compared")
        failed = True
print("rows equal between layouts: " + ("NO" if failed else "yes"))
sys.exit(1 if failed else 0)
