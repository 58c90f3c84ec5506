"""Independent reader of the catalog and storage suites.

Reads the tables runStorageSuite (worker/runner/storagesuite_e2e_test.go)
wrote, named in its report, with pyiceberg through the same catalog and
storage, and compares:

  mirror   every row and column with the golden mirror of the capture
           (starter/testdata/golden/...jsonl), _ingested_at excepted
  bronze   32 rows (the capture, then its redelivery), Kafka partition 0,
           offsets 0..31 each once
  history  every row and column with what the Go reader read (the report),
           15 versions, 10 current

and that each table's location is under the storage root (--root).

  python tablecheck.py --catalog 'type=rest,uri=http://...,s3.endpoint=...' \\
      --root s3://lakemirror/ --label 'REST + S3' --report report.json --golden golden.jsonl

--catalog is pyiceberg's catalog properties as k=v pairs separated by
commas (the catalog's name is --name, default lakemirror: a SQL catalog's
rows are keyed by it). Exit status 0 when everything matches, 1 otherwise.
"""

import argparse
import datetime as dt
import json
import sys

from pyiceberg.catalog import load_catalog


def norm(v):
    """A value as the Go reader renders it (lake.Row): timestamps as RFC 3339
    with microseconds in UTC."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return v


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and float(a) == float(b)
    return a == b


def rows_of(cat, ident, sort_cols):
    tbl = cat.load_table(ident)
    rows = [{k: norm(v) for k, v in r.items()} for r in tbl.scan().to_arrow().to_pylist()]
    rows.sort(key=lambda r: tuple(r[c] for c in sort_cols))
    return tbl, rows


def compare(what, got, want, skip=()):
    fails = []
    if len(got) != len(want):
        fails.append(f"{what}: {len(got)} rows, want {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        gk = set(g) - set(skip)
        if gk != set(w):
            fails.append(f"{what} row {i}: columns {sorted(gk)}, want {sorted(w)}")
            continue
        for k, wv in w.items():
            if not same(g[k], wv):
                fails.append(f"{what} row {i} ({w.get('id')}): {k} = {g[k]!r}, want {wv!r}")
    return fails


def check(cat, rep, golden, root):
    """The comparisons; returns the failures and a one-line summary."""
    fails = []
    tbl, mirror = rows_of(cat, rep["mirror"], ["id"])
    fails += compare("mirror", mirror, golden, skip=("_ingested_at",))
    if any(r["_ingested_at"] is None for r in mirror):
        fails.append("mirror: a row without _ingested_at")

    btbl, bronze = rows_of(cat, rep["bronze"], ["kafka_partition", "kafka_offset"])
    got = [(r["kafka_partition"], r["kafka_offset"]) for r in bronze]
    n = rep["bronze_rows"]  # the capture twice: delivered, then redelivered after the worker restart
    if got != [(0, o) for o in range(n)]:
        fails.append(f"bronze: (partition, offset) {got}, want partition 0 offsets 0..{n - 1} once each")

    htbl, history = rows_of(cat, rep["history"], ["id", "_seq"])
    want_hist = [json.loads(l) for l in rep["history_jsonl"].splitlines() if l.strip()]
    fails += compare("history", history, want_hist)
    current = sum(1 for r in history if r["_is_current"])
    if len(history) != 15 or current != 10:
        fails.append(f"history: {len(history)} versions, {current} current; want 15 and 10")
    for t in (tbl, btbl, htbl):
        if not t.metadata.location.startswith(root):
            fails.append(f"{t.name()}: location {t.metadata.location} is not under {root}")

    live = sum(1 for r in mirror if not r["_is_deleted"])
    summary = (f"mirror {len(mirror)} rows ({live} live), bronze {len(bronze)} rows, history {len(history)} versions: "
               + ("FAILED" if fails else "equal to the golden mirror, the expected bronze offsets and the Go reader's history"))
    return fails, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--catalog", required=True, help="pyiceberg catalog properties, k=v,k=v")
    ap.add_argument("--name", default="lakemirror", help="catalog name")
    ap.add_argument("--root", required=True, help="the bucket or container every table lies under, e.g. gs://lakemirror/")
    ap.add_argument("--label", required=True, help="what is read through, for the summary line")
    ap.add_argument("--report", required=True)
    ap.add_argument("--golden", required=True)
    a = ap.parse_args()
    props = dict(kv.split("=", 1) for kv in a.catalog.split(",") if kv)
    cat = load_catalog(a.name, **props)
    rep = json.load(open(a.report))
    golden = [json.loads(l) for l in open(a.golden) if l.strip()]
    fails, summary = check(cat, rep, golden, a.root)
    print(f"pyiceberg via {a.label}: {summary}")
    for f in fails:
        print("FAILED:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
