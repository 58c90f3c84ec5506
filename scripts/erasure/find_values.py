"""Find values in every file an Iceberg table's retained snapshots reach.

    python find_values.py --catalog-db FILE --warehouse DIR --table NS.NAME [--table ...] --needle TEXT [--needle ...]

Readers this project did not write look for byte sequences (the values of
an erased key) in the tables of a lakemirror SQL catalog on SQLite with a
local warehouse (the dev worker's, or the embedded test stack's):

  * pyiceberg, through its SqlCatalog: for every retained snapshot of each
    table, the data and delete files its scan plans; each file's raw bytes
    are searched (write the tables uncompressed to make that meaningful),
    and each file is read with pyarrow and every value (strings, binaries,
    in lists and structs too) searched;
  * DuckDB with its iceberg extension (DuckDB's signed extension binary
    from the PyPI package duckdb-extension-iceberg, loaded from the
    virtualenv with auto-install off): every retained snapshot of each
    table scanned with iceberg_scan, and every file pyiceberg listed read
    with read_parquet; every value searched.

A needle is searched as given and as lowercase and uppercase hex (the
form bronze's and the purged table's `_key` column holds a key in).

It prints one JSON object: per table, the snapshots and files it read and
the files and snapshots in which it found a needle, by reader; a table
that does not exist is null. Exit 0 whatever it finds; the caller judges.
Needs the pinned environment of scripts/realstack/requirements.txt.
"""

import argparse
import json
import os
import sys


def needles_of(texts):
    out = []
    for t in texts:
        b = t.encode()
        out += [b, b.hex().encode(), b.hex().upper().encode()]
    return out


def holds(value, needles):
    if value is None:
        return False
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        v = bytes(value)
        return any(n in v for n in needles)
    if isinstance(value, dict):
        return any(holds(v, needles) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds(v, needles) for v in value)
    return False


def rows_hold(rows, needles):
    return any(holds(v, needles) for r in rows for v in r.values())


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


def arrow_rows(res):
    tbl = res.to_arrow_table() if hasattr(res, "to_arrow_table") else res.arrow()
    if hasattr(tbl, "read_all"):
        tbl = tbl.read_all()
    return tbl.to_pylist()


def check_table(cat, duck, ident, needles):
    import pyarrow.parquet as pq
    from pyiceberg.exceptions import NoSuchTableError
    try:
        t = cat.load_table(ident)
    except NoSuchTableError:
        return None
    out = {"snapshots": 0, "data_files": 0, "delete_files": 0,
           "bytes": [], "pyarrow": [], "duckdb_files": [], "duckdb_snapshots": [], "pyiceberg_snapshots": []}
    files = {}
    for snap in t.metadata.snapshots:
        out["snapshots"] += 1
        scan = t.scan(snapshot_id=snap.snapshot_id)
        for task in scan.plan_files():
            files[task.file.file_path] = "data"
            for d in task.delete_files:
                files[d.file_path] = "delete"
        if rows_hold(scan.to_arrow().to_pylist(), needles):
            out["pyiceberg_snapshots"].append(snap.snapshot_id)
        meta = local(t.metadata_location)
        rows = arrow_rows(duck.execute("SELECT * FROM iceberg_scan(?, snapshot_from_id = ?)", [meta, snap.snapshot_id]))
        if rows_hold(rows, needles):
            out["duckdb_snapshots"].append(snap.snapshot_id)
    for path, kind in sorted(files.items()):
        out["data_files" if kind == "data" else "delete_files"] += 1
        with open(local(path), "rb") as f:
            raw = f.read()
        if any(n in raw for n in needles):
            out["bytes"].append(path)
        if rows_hold(pq.read_table(local(path)).to_pylist(), needles):
            out["pyarrow"].append(path)
        if rows_hold(arrow_rows(duck.execute("SELECT * FROM read_parquet(?)", [local(path)])), needles):
            out["duckdb_files"].append(path)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog-db", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--table", action="append", required=True)
    ap.add_argument("--needle", action="append", required=True)
    a = ap.parse_args()
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("lakemirror", uri=f"sqlite:///{a.catalog_db}", warehouse=f"file://{a.warehouse}")
    duck = duckdb_connect()
    needles = needles_of(a.needle)
    json.dump({ident: check_table(cat, duck, ident, needles) for ident in a.table}, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
