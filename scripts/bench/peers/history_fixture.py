#!/usr/bin/env python3
"""A tiny hand-made workload for the SCD2 history logic (no-op updates, a
redelivery, several changes of a key in one batch, deletes, a no-op against
the stored row), in benchctl gen's layout, with its expected final mirror:

    history_fixture.py DIR            writes DIR/initial.parquet, DIR/changes-b10/batch-0000{0,1}.parquet,
                                      DIR/expected.parquet
    run_spark.py --data DIR --batch 10 --mode mor --tables full --work W --out R.json
    inspect_mirror.py R.json --data DIR

The in-order history has 8 versions, 3 open: key 1 [100,107) [107,-) (101 is
a no-op), key 2 [100,102) [102,-) (108 is a no-op against the stored row),
key 3 [100,103), key 4 [104,105) [105,109) (106 is a no-op in the batch),
key 5 [110,-). The checker computes the same from the files on its own and
says "complete": true when a history has exactly these versions.
"""
import datetime as dt
import decimal
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

FLAT = pa.schema([("op", pa.string()), ("seq", pa.int64()), ("order_id", pa.int64()), ("customer_id", pa.int64()),
                  ("status", pa.string()), ("amount", pa.decimal128(12, 2)), ("note", pa.string()),
                  ("updated_at", pa.timestamp("us"))])
EXPECTED = pa.schema([("order_id", pa.int64()), ("status", pa.string()), ("amount", pa.decimal128(12, 2)),
                      ("deleted", pa.bool_()), ("seq", pa.int64())])


def row(op, seq, k, status, amount, minute):
    return {"op": op, "seq": seq, "order_id": k, "customer_id": 1, "status": status, "amount": decimal.Decimal(amount),
            "note": "n", "updated_at": dt.datetime(2026, 1, 1, 0, minute)}


def main():
    d = sys.argv[1]
    os.makedirs(os.path.join(d, "changes-b10"), exist_ok=True)
    initial = [row("r", 100, k, "new", "1.00", 0) for k in (1, 2, 3)]
    batch0 = [row("u", 101, 1, "new", "1.00", 0),    # no-op
              row("u", 102, 2, "paid", "2.00", 2),
              row("d", 103, 3, "new", "1.00", 0),
              row("c", 104, 4, "new", "4.00", 4),
              row("u", 105, 4, "paid", "4.00", 5),   # closes 104 in the same batch
              row("u", 106, 4, "paid", "4.00", 5),   # no-op in the same batch
              row("u", 102, 2, "paid", "2.00", 2)]   # redelivery
    batch1 = [row("u", 107, 1, "shipped", "1.00", 7),
              row("u", 108, 2, "paid", "2.00", 2),   # no-op against the stored row
              row("d", 109, 4, "paid", "4.00", 5),
              row("c", 110, 5, "new", "5.00", 10)]
    pq.write_table(pa.Table.from_pylist(initial, FLAT), os.path.join(d, "initial.parquet"))
    for i, b in enumerate((batch0, batch1)):
        pq.write_table(pa.Table.from_pylist(b, FLAT), os.path.join(d, "changes-b10", f"batch-{i:05d}.parquet"))
    exp = [(1, "shipped", "1.00", False, 107), (2, "paid", "2.00", False, 108), (3, "new", "1.00", True, 103),
           (4, "paid", "4.00", True, 109), (5, "new", "5.00", False, 110)]
    pq.write_table(pa.Table.from_pylist([{"order_id": k, "status": s, "amount": decimal.Decimal(a), "deleted": x, "seq": q}
                                         for k, s, a, x, q in exp], EXPECTED), os.path.join(d, "expected.parquet"))


if __name__ == "__main__":
    main()
