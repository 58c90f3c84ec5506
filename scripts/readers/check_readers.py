"""Read Iceberg tables with the readers lakemirror documents (docs/readers.md).

    python check_readers.py --catalog-db FILE --warehouse DIR --table NS.NAME:COL,COL [--table ...]
                            [--spark-jar ICEBERG_SPARK_RUNTIME_JAR] [--trino URL]

For each table of a lakemirror SQL catalog on SQLite with a local
warehouse (a test's, or the dev worker's), it reads the current Iceberg
snapshot with

  * pyiceberg, through its SqlCatalog (scan().to_arrow(): deletes applied);
  * DuckDB with its iceberg extension (DuckDB's signed extension binary from
    the PyPI package duckdb-extension-iceberg, loaded from the virtualenv
    with auto-install off): SELECT ... FROM iceberg_scan(metadata.json);
  * with --spark-jar, Spark 4 with Iceberg's Spark runtime jar
    (spark_reader.py: one local session for all tables; the table loaded
    from its metadata.json);
  * with --trino, a running Trino server at URL (scripts/trino/run.sh
    starts one) whose catalog "iceberg" is the Iceberg connector on a file
    metastore: each table is registered there under its metadata.json
    (system.register_table; an earlier registration of the name is
    unregistered first, never dropped) and read with SELECT, through
    Trino's HTTP client protocol (trino_reader.py, no client library).

It prints one JSON object: per table, its format version and, per reader,
either "rows" (the table's given columns of every row as text joined
by one space, sorted) or "error" (the reader's error, first line, at most 300
characters). When Spark's error is the name of a column reserved for
Iceberg's metadata columns (spark_reader.RESERVED, e.g. an old mirror's
_deleted), Spark's entry also has "without": the columns that are not
reserved and their "rows" (or "error"), read again: what Spark can read.
Exit 0 whatever the readers do; the caller judges (the Go test
TestDeletionVectorReaders asserts exact rows and errors). Needs the pinned
environment of scripts/realstack/requirements.txt, or with --spark-jar
that of scripts/spark/requirements.txt.
"""

import argparse
import json
import os
import sys
import tempfile


def local(path):
    return path[len("file://"):] if path.startswith("file://") else path


def duckdb_connect():
    import duckdb
    import duckdb_extension_avro
    import duckdb_extension_iceberg
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    for mod, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_iceberg, "iceberg")):
        path = os.path.join(os.path.dirname(mod.__file__), "extensions", f"v{duckdb.__version__}", f"{name}.duckdb_extension")
        con.execute(f"LOAD '{path}'")
    return con


def text(v):
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def lines(rows, cols):
    return sorted(" ".join(text(r[c]) for c in cols) for r in rows)


def error(e):
    msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return f"{type(e).__name__}: {msg}"[:300]


def spark_read(spark, metadata, cols):
    import spark_reader
    try:
        rows, _ = spark.read(metadata, cols)
        return {"rows": lines([dict(zip(cols, r)) for r in rows], cols)}
    except Exception as e:
        out = {"error": spark_reader.error(e)}
    rest = [c for c in cols if c not in spark_reader.RESERVED]
    if rest != cols and rest:
        out["without"] = {"columns": rest, **spark_read(spark, metadata, rest)}
    return out


def read_table(cat, duck, spark, trino, ident, cols):
    t = cat.load_table(ident)
    out = {"format_version": t.metadata.format_version}
    try:
        out["pyiceberg"] = {"rows": lines(t.scan().to_arrow().to_pylist(), cols)}
    except Exception as e:  # the reader's verdict is the finding
        out["pyiceberg"] = {"error": error(e)}
    try:
        quoted = ", ".join('"' + c.replace('"', '""') + '"' for c in cols)
        res = duck.execute(f"SELECT {quoted} FROM iceberg_scan(?)", [local(t.metadata_location)])
        names = [d[0] for d in res.description]
        out["duckdb"] = {"rows": lines([dict(zip(names, r)) for r in res.fetchall()], cols)}
    except Exception as e:
        out["duckdb"] = {"error": error(e)}
    if spark is not None:
        out["spark"] = spark_read(spark, t.metadata_location, cols)
    if trino is not None:
        try:
            rows = trino.read(ident, t.metadata_location, cols)
            out["trino"] = {"rows": lines([dict(zip(cols, r)) for r in rows], cols)}
        except Exception as e:
            out["trino"] = {"error": error(e)}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog-db", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--table", action="append", required=True, help="NS.NAME:COL,COL,...")
    ap.add_argument("--spark-jar", help="also read with Spark and this Iceberg Spark runtime jar")
    ap.add_argument("--trino", help="also read with the Trino server at this URL (e.g. http://127.0.0.1:38089)")
    a = ap.parse_args()
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("lakemirror", uri=f"sqlite:///{a.catalog_db}", warehouse=f"file://{a.warehouse}")
    duck = duckdb_connect()
    tables = [t.split(":", 1) for t in a.table]
    with tempfile.TemporaryDirectory(prefix="lmreaders-spark-") as scratch:
        spark = None
        if a.spark_jar:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import spark_reader
            spark = spark_reader.Spark(a.spark_jar, scratch)
        trino = None
        if a.trino:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import trino_reader
            trino = trino_reader.Trino(a.trino)
        res = {ident: read_table(cat, duck, spark, trino, ident, cols.split(",")) for ident, cols in tables}
        if spark is not None:
            spark.session.stop()
    json.dump(res, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
