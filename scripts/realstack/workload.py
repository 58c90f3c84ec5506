"""The real-stack suite's PostgreSQL workload.

    python workload.py PHASE --dsn DSN --log FILE [--seed N]

Each phase runs a fixed, seeded set of transactions against the tables
below and appends one JSON line per committed transaction to the workload
log: its phase, xid, commit time (track_commit_timestamp) and every row
change it made, with the row image PostgreSQL returned (RETURNING *). The
log is the suite's own record of the source history; check.py compares the
lake's history table with it. Phases (run.sh calls them in this order and
injects faults between them):

    seed        create the tables and the rows the connector's initial snapshot reads
    stream1     inserts, updates (incl. no-op and TOAST-unchanged), deletes, delete+re-insert
    burst       many small update transactions (run.sh kills Kafka Connect right after them)
    while_down  changes made while Kafka Connect is down
    evolve      ALTER TABLE ... ADD COLUMN mid-run, primary-key update, delete and re-insert in one transaction
    bulk        a large burst of inserts/updates (run.sh kills the worker mid-batch during it)
    final       TRUNCATE of trunc_demo with re-inserts, last updates, then the end marker

Tables (default replica identity everywhere):

    items       id bigint pk, name text, price numeric(12,2), qty int,
                updated_at timestamptz, ship_date date, attrs jsonb, ref uuid,
                notes text (some values ~12 kB: TOASTed out of line);
                tier text added by the evolve phase
    trunc_demo  id int pk, label text, n int  (truncated in the final phase)
    amounts     id int pk, amount numeric (no precision/scale: Debezium's VariableScaleDecimal),
                ratio float8, flag bool, at_time time, at_local timestamp, raw bytea
    rs_marker   id int pk, note text          (end-of-workload marker; no pipeline)
"""

import argparse
import datetime as dt
import decimal
import json
import random
import string
import sys
import uuid

import psycopg

from rscommon import canon_row

UTC = dt.timezone.utc
TABLE_KEYS = {"items": ["id"], "trunc_demo": ["id"], "rs_marker": ["id"], "amounts": ["id"]}


class Workload:
    def __init__(self, dsn, log_path, seed, phase):
        self.conn = psycopg.connect(dsn, autocommit=False)
        self.log = open(log_path, "a", encoding="utf-8")
        self.rnd = random.Random(f"{seed}-{phase}")
        self.phase = phase
        self.txs = 0
        self.changes = 0

    # --- transactions -----------------------------------------------------

    def tx(self, fn):
        """Run fn(cur, changes) in one transaction and log it after commit."""
        changes = []
        with self.conn.cursor() as cur:
            cur.execute("SELECT pg_current_xact_id()::text")
            xid = cur.fetchone()[0]
            fn(cur, changes)
        self.conn.commit()
        with self.conn.cursor() as cur:
            cur.execute("SELECT pg_xact_commit_timestamp(%s::xid)", (xid,))
            ts = cur.fetchone()[0]
        self.conn.commit()
        rec = {"phase": self.phase, "xid": xid, "commit_ts": ts.astimezone(UTC).isoformat() if ts else None,
               "changes": changes}
        self.log.write(json.dumps(rec, sort_keys=True) + "\n")
        self.log.flush()
        self.txs += 1
        self.changes += sum(1 for c in changes if c["op"] in "cud")

    def _rows(self, cur, table, op, changes):
        cols = [d.name for d in cur.description]
        for r in cur.fetchall():
            row = canon_row(dict(zip(cols, r)))
            key = [row[k] for k in TABLE_KEYS[table]]
            changes.append({"table": table, "op": op, "key": key, "row": row if op != "d" else None})

    def insert(self, cur, changes, table, row):
        cols = list(row)
        cur.execute(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))}) RETURNING *",
            [row[c] for c in cols])
        self._rows(cur, table, "c", changes)

    def update(self, cur, changes, table, where, params, sets):
        assign = ", ".join(f"{c} = {v}" if isinstance(v, Raw) else f"{c} = %s" for c, v in sets.items())
        vals = [v for v in sets.values() if not isinstance(v, Raw)]
        cur.execute(f"UPDATE {table} SET {assign} WHERE {where} RETURNING *", vals + list(params))
        self._rows(cur, table, "u", changes)

    def delete(self, cur, changes, table, where, params):
        cur.execute(f"DELETE FROM {table} WHERE {where} RETURNING *", list(params))
        self._rows(cur, table, "d", changes)

    def truncate(self, cur, changes, table):
        cur.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        cur.execute(f"SELECT {', '.join(TABLE_KEYS[table])} FROM {table} ORDER BY 1")
        keys = [list(r) for r in cur.fetchall()]
        cur.execute(f"TRUNCATE {table}")
        changes.append({"table": table, "op": "t", "keys": keys})

    def ddl(self, cur, changes, table, sql):
        cur.execute(sql)
        changes.append({"table": table, "op": "ddl", "sql": sql})

    # --- values -----------------------------------------------------------

    def text(self, n):
        return "".join(self.rnd.choice(string.ascii_letters + string.digits) for _ in range(n))

    def item(self, i, version=0, long_notes=None):
        r = self.rnd
        if long_notes is None:
            long_notes = r.random() < 0.15
        names = [f"item {i} v{version}", f"Ünïcødé ✓ {i} 'q' \"dq\"", f"line1\nline2 {i}", f"emoji 🦆 {i}"]
        ts_choices = [
            dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=r.randrange(0, 10**14)),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            dt.datetime(1950, 6, 1, 12, 0, 0, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
            dt.datetime(2100, 2, 28, 23, 59, 59, 500000, tzinfo=dt.timezone(dt.timedelta(hours=9, minutes=30))),
        ]
        return {
            "id": i,
            "name": r.choice(names),
            "price": r.choice([decimal.Decimal(r.randrange(-10**11, 10**11)) / 100, decimal.Decimal("0.00"),
                               decimal.Decimal("99999999.99"), None]),
            "qty": r.choice([r.randrange(-2**31, 2**31), 0, None, r.randrange(0, 1000)]),
            "updated_at": r.choice(ts_choices + [None]),
            "ship_date": r.choice([dt.date(2024, 1, 1) + dt.timedelta(days=r.randrange(-40000, 40000)),
                                   dt.date(1960, 2, 29), dt.date(1970, 1, 1), None]),
            "attrs": r.choice([None, json.dumps({"v": version, "tags": ["a", "b"], "nested": {"x": r.random()},
                                                 "s": "ünï \"q\"", "n": None}),
                               json.dumps([1, 2.5, "three", {"four": 4}]), json.dumps({})]),
            "ref": r.choice([uuid.UUID(int=r.getrandbits(128), version=4), None]),
            "notes": self.text(12000) if long_notes else r.choice([None, "", f"short note {i}"]),
        }

    # --- phases -----------------------------------------------------------

    def seed(self):
        with self.conn.cursor() as cur:
            cur.execute("""
                CREATE TABLE items (
                    id bigint PRIMARY KEY, name text NOT NULL, price numeric(12,2), qty integer,
                    updated_at timestamptz, ship_date date, attrs jsonb, ref uuid, notes text);
                CREATE TABLE trunc_demo (id integer PRIMARY KEY, label text, n integer);
                CREATE TABLE rs_marker (id integer PRIMARY KEY, note text);
                CREATE TABLE amounts (id integer PRIMARY KEY, amount numeric, ratio double precision,
                    flag boolean, at_time time, at_local timestamp, raw bytea);
            """)
        self.conn.commit()
        for start in range(1, 301, 50):  # items 1..300, read by the connector's snapshot
            self.tx(lambda cur, ch, s=start: [self.insert(cur, ch, "items", self.item(i)) for i in range(s, s + 50)])
        self.tx(lambda cur, ch: [self.insert(cur, ch, "trunc_demo", {"id": i, "label": f"pre-{i}", "n": i})
                                 for i in range(1, 61)])
        self.tx(lambda cur, ch: [self.insert(cur, ch, "amounts", self.amount(i)) for i in range(1, 21)])

    def amount(self, i):
        r = self.rnd
        return {
            "id": i,
            "amount": r.choice([decimal.Decimal("0"), decimal.Decimal("1.5"), decimal.Decimal("-123456789.123456789"),
                                decimal.Decimal("0.00000000000000000001"), decimal.Decimal("12345678901234567890123456789"),
                                decimal.Decimal(r.randrange(-10**9, 10**9)) / 1000, None]),
            "ratio": r.choice([0.1, -1e300, 2.5e-310, 1 / 3, 0.0, None]),
            "flag": r.choice([True, False, None]),
            "at_time": r.choice([dt.time(23, 59, 59, 999999), dt.time(0, 0), dt.time(12, 30, 15, 123), None]),
            "at_local": r.choice([dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(2100, 1, 1),
                                  dt.datetime(2024, 2, 29, 12, 0, 0, 1), None]),
            "raw": r.choice([b"\x00\xff\x10", b"", bytes(range(256)), None]),
        }

    def stream1(self):
        r = self.rnd
        for start in range(301, 801, 25):  # streamed inserts
            self.tx(lambda cur, ch, s=start: [self.insert(cur, ch, "items", self.item(i)) for i in range(s, s + 25)])
        for _ in range(40):  # updates of random columns
            ids = r.sample(range(1, 801), 8)
            def upd(cur, ch, ids=ids):
                for i in ids:
                    new = self.item(i, version=r.randrange(1, 99))
                    cols = r.sample(["name", "price", "qty", "updated_at", "ship_date", "attrs", "ref"], 3)
                    self.update(cur, ch, "items", "id = %s", [i], {c: new[c] for c in cols})
            self.tx(upd)
        # TOAST: rows with long notes updated without touching notes (pgoutput
        # sends the unchanged-TOAST placeholder), then some with new notes
        def toast(cur, ch):
            cur.execute("SELECT id FROM items WHERE length(notes) > 5000 ORDER BY id LIMIT 20")
            ids = [x[0] for x in cur.fetchall()]
            for i in ids[:15]:
                self.update(cur, ch, "items", "id = %s", [i], {"qty": r.randrange(0, 100), "name": f"toast-kept {i}"})
            for i in ids[15:]:
                self.update(cur, ch, "items", "id = %s", [i], {"notes": self.text(9000)})
        self.tx(toast)
        # no-op update: same values
        self.tx(lambda cur, ch: self.update(cur, ch, "items", "id BETWEEN 10 AND 14", [], {"qty": Raw("qty")}))
        # several changes to one key in one transaction
        def multi(cur, ch):
            for v in range(1, 4):
                self.update(cur, ch, "items", "id = %s", [20], {"name": f"multi v{v}", "qty": v})
        self.tx(multi)
        # deletes (incl. rows with TOASTed notes)
        for _ in range(6):
            ids = r.sample(range(30, 801), 5)
            self.tx(lambda cur, ch, ids=ids: self.delete(cur, ch, "items", "id = ANY(%s)", [ids]))
        # delete and re-insert of one key, in separate transactions
        self.tx(lambda cur, ch: self.delete(cur, ch, "items", "id = %s", [7]))
        self.tx(lambda cur, ch: self.insert(cur, ch, "items", self.item(7, version=2)))
        self.tx(lambda cur, ch: self.update(cur, ch, "trunc_demo", "id <= 10", [], {"label": "upd-before-truncate"}))
        self.tx(lambda cur, ch: [self.insert(cur, ch, "amounts", self.amount(i)) for i in range(21, 61)])
        for i in range(1, 11):
            self.tx(lambda cur, ch, i=i: self.update(cur, ch, "amounts", "id = %s", [i], {
                k: v for k, v in self.amount(i).items() if k != "id"}))
        self.tx(lambda cur, ch: self.delete(cur, ch, "amounts", "id IN (11, 12, 13)", []))

    def burst(self):
        r = self.rnd
        for _ in range(30):
            ids = r.sample(range(1, 801), 10)
            def upd(cur, ch, ids=ids):
                for i in ids:
                    self.update(cur, ch, "items", "id = %s", [i], {"qty": r.randrange(0, 10**6), "price": decimal.Decimal(r.randrange(0, 10**8)) / 100})
            self.tx(upd)

    def while_down(self):
        r = self.rnd
        self.tx(lambda cur, ch: [self.insert(cur, ch, "items", self.item(i)) for i in range(801, 851)])
        for _ in range(10):
            ids = r.sample(range(1, 851), 10)
            self.tx(lambda cur, ch, ids=ids: [self.update(cur, ch, "items", "id = %s", [i], {"name": f"while-down {i}"}) for i in ids])
        self.tx(lambda cur, ch: self.delete(cur, ch, "items", "id BETWEEN %s AND %s", [840, 845]))

    def evolve(self):
        r = self.rnd
        self.tx(lambda cur, ch: self.ddl(cur, ch, "items", "ALTER TABLE items ADD COLUMN tier text"))
        self.tx(lambda cur, ch: self.update(cur, ch, "items", "id %% 7 = 0", [], {"tier": "gold"}))
        def ins(cur, ch):
            for i in range(851, 901):
                row = self.item(i)
                row["tier"] = r.choice(["silver", "bronze", None])
                self.insert(cur, ch, "items", row)
        self.tx(ins)
        # primary-key update: Debezium emits a delete of the old key and a create of the new one
        self.tx(lambda cur, ch: self.pk_update(cur, ch, 100, 100100))
        self.tx(lambda cur, ch: self.pk_update(cur, ch, 101, 100101))
        # delete and re-insert of one key in the same transaction
        def del_ins(cur, ch):
            self.delete(cur, ch, "items", "id = %s", [8])
            row = self.item(8, version=3)
            row["tier"] = "reborn"
            self.insert(cur, ch, "items", row)
        self.tx(del_ins)
        for _ in range(10):
            ids = r.sample(range(1, 901), 10)
            self.tx(lambda cur, ch, ids=ids: [self.update(cur, ch, "items", "id = %s", [i], {"tier": r.choice(["a", "b", None]), "qty": r.randrange(0, 9)}) for i in ids])

    def pk_update(self, cur, ch, old, new):
        cur.execute("SELECT * FROM items WHERE id = %s", [old])
        if cur.fetchone() is None:
            return
        cur.execute("UPDATE items SET id = %s WHERE id = %s RETURNING *", [new, old])
        cols = [d.name for d in cur.description]
        row = canon_row(dict(zip(cols, cur.fetchone())))
        ch.append({"table": "items", "op": "d", "key": [old], "row": None, "pk_update_to": [new]})
        ch.append({"table": "items", "op": "c", "key": [new], "row": row, "pk_update_from": [old]})

    def bulk(self):
        r = self.rnd
        for start in range(1001, 4001, 200):
            self.tx(lambda cur, ch, s=start: [self.insert(cur, ch, "items", self.item(i, long_notes=False)) for i in range(s, s + 200)])
        for _ in range(10):
            lo = r.randrange(1001, 3800)
            self.tx(lambda cur, ch, lo=lo: self.update(cur, ch, "items", "id BETWEEN %s AND %s", [lo, lo + 100], {"qty": Raw("coalesce(qty, 0) + 1")}))
        self.tx(lambda cur, ch: self.delete(cur, ch, "items", "id BETWEEN %s AND %s", [3901, 3950]))

    def final(self):
        self.tx(lambda cur, ch: self.truncate(cur, ch, "trunc_demo"))
        # keys 1..5 existed before the truncate, 100..104 are new
        self.tx(lambda cur, ch: [self.insert(cur, ch, "trunc_demo", {"id": i, "label": f"post-{i}", "n": -i})
                                 for i in list(range(1, 6)) + list(range(100, 105))])
        self.tx(lambda cur, ch: self.update(cur, ch, "items", "id IN (1, 2, 3)", [], {"name": "final"}))
        self.tx(lambda cur, ch: self.insert(cur, ch, "rs_marker", {"id": 1, "note": "end of workload"}))


class Raw(str):
    """A SQL expression as an UPDATE value (e.g. qty = qty)."""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("phase", choices=["seed", "stream1", "burst", "while_down", "evolve", "bulk", "final"])
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--seed", default="7")
    a = ap.parse_args()
    w = Workload(a.dsn, a.log, a.seed, a.phase)
    getattr(w, a.phase)()
    print(json.dumps({"phase": a.phase, "transactions": w.txs, "row_changes": w.changes}))


if __name__ == "__main__":
    sys.exit(main())
