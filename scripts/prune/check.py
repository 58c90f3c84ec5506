"""Pruning proof (issue 39 item 1): reads the tables scripts/prune/gen wrote
(partitioned: mirror bucket(16, id), history day(_valid_from); and the same
stream unpartitioned) with pyiceberg and DuckDB, for a one-day filter on the
history and a key-bucket filter on the mirror. Prints, per reader and layout,
the data files the reader plans or reads, and asserts that both layouts return
exactly the same rows. Exit 1 on a difference.

With --spark-jar, Spark 4 with Iceberg's Spark runtime jar reads the same
tables too (scripts/readers/spark_reader.py: one local session, each table
loaded from its metadata.json): the data files its scan planned and skipped
(Iceberg's scan metrics resultDataFiles and skippedDataFiles, from the
executed plan) and the rows, which must equal pyiceberg's exactly; Spark
must plan as many data files as pyiceberg, and on the partitioned layout
fewer than on the unpartitioned one for the mirror, not more for the
history (whose unpartitioned files this commit-ordered stream leaves with
narrow _valid_from bounds, so they are pruned too).
Columns named like Iceberg's metadata columns (spark_reader.RESERVED: a
mirror created before the soft-delete column was named _is_deleted has
_deleted) are left out of Spark's comparison, which Spark refuses to
select (docs/readers.md). Usage: check.py GEN_JSON [--spark-jar JAR]"""
import argparse
import datetime as dt
import json
import os
import re
import sys
import tempfile

import duckdb
import pyarrow as pa
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, In, LessThan
from pyiceberg.table import StaticTable
from pyiceberg.transforms import BucketTransform
from pyiceberg.types import LongType

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("gen_json")
ap.add_argument("--spark-jar", help="also read with Spark and this Iceberg Spark runtime jar")
args = ap.parse_args()
gen = json.load(open(args.gen_json))
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


spark = None
if args.spark_jar:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "readers"))
    import spark_reader  # noqa: E402
    spark_scratch = tempfile.TemporaryDirectory(prefix="lmprune-spark-")
    spark = spark_reader.Spark(args.spark_jar, spark_scratch.name)
    print(f"Spark {spark.versions['spark']}, {spark.versions['iceberg_jar']}")


def spark_files(meta, kind, sql, got, layout, planned):
    """Spark's data files planned and skipped for the query, after
    checking that its rows equal pyiceberg's (got) without the reserved
    columns and that it planned as many data files as pyiceberg
    (planned); "" without Spark."""
    global failed
    if spark is None:
        return ""
    cols = [c for c in COLS[kind] if c not in spark_reader.RESERVED]
    keep = [COLS[kind].index(c) for c in cols]
    want = sorted(tuple(r[i] for i in keep) for r in got)
    try:
        # Spark SQL's literal for a timestamp with time zone is TIMESTAMP (DuckDB's TIMESTAMPTZ)
        srows, m = spark.read(meta, cols, sql.replace("TIMESTAMPTZ '", "TIMESTAMP '"))
    except Exception as e:
        print(f"SPARK ERROR {kind} {sql}: {spark_reader.error(e)}")
        failed = True
        return " | error |"
    srows = sorted(tuple(str(v) for v in r) for r in srows)
    if srows != want:
        print(f"MISMATCH Spark {kind} {sql}: Spark {len(srows)} rows, pyiceberg {len(want)}")
        failed = True
    if m.get("resultDataFiles") != planned:
        print(f"PLANNED Spark {kind} {layout} {sql}: Spark planned {m.get('resultDataFiles')} data files, pyiceberg {planned}")
        failed = True
    spark_planned[(kind, sql)][layout] = m.get("resultDataFiles")
    return f" {m.get('resultDataFiles')} (skipped {m.get('skippedDataFiles')}) | {len(srows)} |"


failed = False
spark_planned = {(kind, sql): {} for kind, _, sql in queries.values()}
if spark is None:
    print(f"| query | layout | pyiceberg files planned (of all) | DuckDB files read | rows |")
    print("|---|---|---|---|---|")
else:
    print(f"| query | layout | pyiceberg files planned (of all) | DuckDB files read | rows | Spark data files planned (skipped) | Spark rows |")
    print("|---|---|---|---|---|---|---|")
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
        print(f"| {q} | {layout} | {len(tasks)} of {total_files(meta)} | {'n/a' if df is None else df} | {len(got)} |" +
              spark_files(meta, kind, sql, got, layout, len(tasks)))
    if results["partitioned"] != results["unpartitioned"]:
        print(f"MISMATCH {q}: partitioned {len(results['partitioned'])} rows, unpartitioned {len(results['unpartitioned'])}")
        failed = True
    elif not results["partitioned"]:
        print(f"EMPTY {q}: the query returned no rows, nothing was compared")
        failed = True
if spark is not None:
    for (kind, sql), planned in spark_planned.items():
        # The unpartitioned history is pruned as well by its files' _valid_from
        # bounds (this stream is written in commit-time order; docs/benchmarks.md):
        # there the partitioned plan must not read more; on the mirror, fewer.
        unpart, part = planned.get("unpartitioned"), planned.get("partitioned")
        if unpart is None or part is None or part > unpart or (kind == "mirror" and part == unpart):
            print(f"NOT PRUNED Spark {kind} {sql}: partitioned planned {part} data files, unpartitioned {unpart}")
            failed = True
    spark.session.stop()
    spark_scratch.cleanup()
print("rows equal between layouts" + (" and readers, Spark plans pyiceberg's files, fewer on the partitioned mirror" if spark else "") +
      ": " + ("NO" if failed else "yes"))
sys.exit(1 if failed else 0)
