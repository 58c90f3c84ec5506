"""The real-stack suite's PostgreSQL workload.

    python workload.py PHASE --dsn DSN --log FILE [--seed N]

Each phase runs a fixed, seeded set of transactions against the tables
below and appends one JSON line per committed transaction to the workload
log: its phase, xid, commit time (track_commit_timestamp) and every row
change it made, with the row image PostgreSQL returned (RETURNING *). The
log is the suite's own record of the source history; check.py compares the
lake's history table with it. Phases (run.sh calls them in this order and
injects faults between them):

    seed        create the tables, the rows the connector's initial snapshot reads and the
                rows lakemirror's direct loads read (loaded, resnap, incsnap)
    loaded_live changes to loaded while its direct initial load runs (until --stop-file exists;
                synchronous commit, PostgreSQL's default)
    lossy_before  streamed changes to resnap, incsnap, blocksnap and blocktrunc (connector
                rs-lossy; blocktrunc is truncated)
    lossy_outage  changes to resnap, incsnap and blocktrunc while Kafka Connect is down; run.sh
                then drops rs-lossy's replication slot, so these changes are never streamed
                (run.sh then has Debezium take a blocking snapshot of blocksnap and blocktrunc)
    lossy_after changes to resnap, incsnap, blocksnap and blocktrunc after rs-lossy streams
                again (from a new slot) and after the blocking snapshot
    resnap_live changes to resnap while its direct re-snapshot runs (until --stop-file exists)
    lossy_final the end marker of rs-lossy (rsl_marker)
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
    loaded      id bigint pk, amount numeric(14,4), ts timestamptz, label text, qty int,
                note text (some ~9 kB: TOASTed); 12,000 seed rows, captured by rs-postgres
                but left out of Debezium's snapshot: lakemirror's direct load is its only
                initial copy
    resnap      id int pk, label text, amount numeric(12,2), ts timestamptz (600 seed rows)
    incsnap     same columns (400 seed rows); resnap and incsnap are captured by the second
                connector, rs-lossy (snapshot.mode=no_data), whose slot run.sh drops
    blocksnap   same columns (100 seed rows), captured by rs-lossy; changed only while it
                streams; Debezium's blocking snapshot re-reads it (run.sh)
    blocktrunc  same columns (50 seed rows), captured by rs-lossy; truncated while it streams,
                inserts while its events are lost, then Debezium's blocking snapshot (run.sh)
    debezium_signal  id, type, data: rs-lossy's signaling table (incremental snapshot watermarks)
    rsl_marker  id int pk, note text          (rs-lossy's end marker; no pipeline)
    rs_noise    id bigserial pk, n int        (captured by no connector: other WAL traffic)

Transactions on loaded, resnap and incsnap also log "lsn_lo" (the WAL insert
position just before COMMIT) and "lsn_hi" (just after it): the commit record
lies between them, which check.py compares with the direct loads' snapshot
positions.
"""

import argparse
import datetime as dt
import decimal
import json
import os
import random
import string
import sys
import threading
import time
import uuid

import psycopg

from rscommon import canon_row

UTC = dt.timezone.utc
TABLE_KEYS = {"items": ["id"], "trunc_demo": ["id"], "rs_marker": ["id"], "amounts": ["id"],
              "loaded": ["id"], "resnap": ["id"], "incsnap": ["id"], "rsl_marker": ["id"],
              "blocksnap": ["id"], "blocktrunc": ["id"]}
LOADED_SEED = 12000  # more than one chunk of a direct load (10,000 rows)
RESNAP_SEED = 600
INCSNAP_SEED = 400
BLOCKSNAP_SEED = 100
BLOCKTRUNC_SEED = 50


class Workload:
    def __init__(self, dsn, log_path, seed, phase, stop_file=None):
        self.conn = psycopg.connect(dsn, autocommit=False)
        self.dsn = dsn
        self.stop_file = stop_file
        self.log = open(log_path, "a", encoding="utf-8")
        self.rnd = random.Random(f"{seed}-{phase}")
        self.rnd2 = random.Random(f"{seed}-{phase}-lifecycle")
        self.rnd3 = random.Random(f"{seed}-{phase}-blocking")  # blocksnap, blocktrunc
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
            cur.execute("SELECT pg_current_wal_insert_lsn()::text")
            lo = lsn_int(cur.fetchone()[0])
        self.conn.commit()
        with self.conn.cursor() as cur:
            cur.execute("SELECT pg_xact_commit_timestamp(%s::xid), pg_current_wal_insert_lsn()::text", (xid,))
            ts, hi = cur.fetchone()
        self.conn.commit()
        rec = {"phase": self.phase, "xid": xid, "commit_ts": ts.astimezone(UTC).isoformat(timespec="microseconds") if ts else None,
               "lsn_lo": lo, "lsn_hi": lsn_int(hi), "changes": changes}
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

    def insert_many(self, cur, changes, table, rows, types):
        """One INSERT ... SELECT FROM unnest(...) RETURNING * for many rows
        (types: column -> PostgreSQL type, in column order)."""
        cols = list(types)
        arrays = ", ".join(f"%s::{t}[]" for t in types.values())
        cur.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT * FROM unnest({arrays}) RETURNING *",
                    [[row[c] for row in rows] for c in cols])
        self._rows(cur, table, "c", changes)

    def live_keys(self, table):
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT id FROM {table} ORDER BY id")
            keys = [r[0] for r in cur.fetchall()]
        self.conn.commit()
        return keys

    def stopped(self):
        return self.stop_file is not None and os.path.exists(self.stop_file)

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

    def text(self, n, rnd=None):
        if rnd is not None:  # the lifecycle tables' generator (faster; other tables keep their values)
            return "".join(rnd.choices(string.ascii_letters + string.digits, k=n))
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
        self.seed_lifecycle()

    # --- the direct-load and re-snapshot tables (issue 6) ----------------------
    # Their random values come from a generator of their own (self.rnd2), so
    # that the other tables' workload is the same as without them.

    LOADED_TYPES = {"id": "bigint", "amount": "numeric", "ts": "timestamptz", "label": "text", "qty": "integer",
                    "note": "text"}
    SNAP_TYPES = {"id": "integer", "label": "text", "amount": "numeric", "ts": "timestamptz"}

    def seed_lifecycle(self):
        with self.conn.cursor() as cur:
            cur.execute("""
                CREATE TABLE loaded (id bigint PRIMARY KEY, amount numeric(14,4), ts timestamptz, label text,
                    qty integer, note text);
                CREATE TABLE resnap (id integer PRIMARY KEY, label text, amount numeric(12,2), ts timestamptz);
                CREATE TABLE incsnap (id integer PRIMARY KEY, label text, amount numeric(12,2), ts timestamptz);
                CREATE TABLE debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048));
                CREATE TABLE rsl_marker (id integer PRIMARY KEY, note text);
                CREATE TABLE rs_noise (id bigserial PRIMARY KEY, n integer);
                CREATE TABLE blocksnap (id integer PRIMARY KEY, label text, amount numeric(12,2), ts timestamptz);
                CREATE TABLE blocktrunc (id integer PRIMARY KEY, label text, amount numeric(12,2), ts timestamptz);
            """)
        self.conn.commit()
        for start in range(1, LOADED_SEED + 1, 1000):
            self.tx(lambda cur, ch, s=start: self.insert_many(
                cur, ch, "loaded", [self.loaded_row(i) for i in range(s, s + 1000)], self.LOADED_TYPES))
        self.tx(lambda cur, ch: self.insert_many(
            cur, ch, "resnap", [self.snap_row(i) for i in range(1, RESNAP_SEED + 1)], self.SNAP_TYPES))
        self.tx(lambda cur, ch: self.insert_many(
            cur, ch, "incsnap", [self.snap_row(i) for i in range(1, INCSNAP_SEED + 1)], self.SNAP_TYPES))
        for t, n in (("blocksnap", BLOCKSNAP_SEED), ("blocktrunc", BLOCKTRUNC_SEED)):
            self.tx(lambda cur, ch, t=t, n=n: self.insert_many(
                cur, ch, t, [self.snap_row(i, rnd=self.rnd3) for i in range(1, n + 1)], self.SNAP_TYPES))

    def loaded_row(self, i, version=0, long_note=None):
        r = self.rnd2
        if long_note is None:
            long_note = r.random() < 0.02
        return {
            "id": i,
            "amount": r.choice([decimal.Decimal(r.randrange(-10**13, 10**13)) / 10000, decimal.Decimal("0.0000"),
                                decimal.Decimal("-0.0001"), None]),
            "ts": r.choice([dt.datetime(2020, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=r.randrange(0, 10**15)),
                            dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), None]),
            "label": r.choice([f"row {i} v{version}", f"Ünïcødé ✓ {i} v{version}", f"multi\nline {i}", ""]),
            "qty": r.randrange(-1000, 1000),
            "note": self.text(9000, r) if long_note else r.choice([None, f"note {i}"]),
        }

    def snap_row(self, i, label=None, rnd=None):
        r = rnd or self.rnd2
        return {"id": i, "label": label or f"seed {i}",
                "amount": decimal.Decimal(r.randrange(-10**8, 10**8)) / 100,
                "ts": dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=r.randrange(0, 10**14))}

    def snap_update(self, cur, ch, table, ids, label, rnd=None):
        r = rnd or self.rnd2
        for i in ids:
            self.update(cur, ch, table, "id = %s", [i], {"label": f"{label} {i}",
                                                         "amount": decimal.Decimal(r.randrange(0, 10**8)) / 100})

    def loaded_live(self):
        """Changes to loaded while its direct load runs: updates (of some
        columns, leaving TOASTed notes unchanged), note rewrites, inserts,
        deletes, delete and re-insert of a key in one transaction, two
        updates of a key in one transaction; until the stop file exists."""
        r = self.rnd2
        with self.conn.cursor() as cur:
            # PostgreSQL's default: a transaction is visible only once its commit
            # record is flushed, so lsn_lo/lsn_hi tell which ones the load's
            # snapshot (at WAL position P) could see: lsn_lo >= P: not seen
            cur.execute("SET synchronous_commit = on")
        self.conn.commit()
        live = self.live_keys("loaded")
        nxt = [20001]
        def pick():
            return live[r.randrange(len(live))]
        def drop(k):
            j = live.index(k)
            live[j] = live[-1]
            live.pop()
        def step(cur, ch):
            x = r.random()
            if x < 0.40:
                for k in {pick() for _ in range(r.randint(1, 3))}:
                    new = self.loaded_row(k, version=r.randrange(1, 99))
                    cols = r.sample(["amount", "ts", "label", "qty"], r.randint(1, 3))
                    self.update(cur, ch, "loaded", "id = %s", [k], {c: new[c] for c in cols})
            elif x < 0.50:
                k = pick()
                self.update(cur, ch, "loaded", "id = %s", [k], {"note": r.choice([self.text(9500, r), "short", None])})
            elif x < 0.65:
                for _ in range(r.randint(1, 2)):
                    self.insert(cur, ch, "loaded", self.loaded_row(nxt[0]))
                    live.append(nxt[0])
                    nxt[0] += 1
            elif x < 0.80:
                k = pick()
                self.delete(cur, ch, "loaded", "id = %s", [k])
                drop(k)
            elif x < 0.90:
                k = pick()
                self.delete(cur, ch, "loaded", "id = %s", [k])
                self.insert(cur, ch, "loaded", self.loaded_row(k, version=100))
            else:
                k = pick()
                self.update(cur, ch, "loaded", "id = %s", [k], {"qty": Raw("qty + 1"), "label": "twice v1"})
                self.update(cur, ch, "loaded", "id = %s", [k], {"qty": Raw("qty + 1"), "label": "twice v2"})
        while not self.stopped() and self.txs < 5000:
            self.tx(step)
            time.sleep(0.02)

    def loaded_some(self, updates, deletes, inserts, label):
        """A few changes to loaded in later phases (streaming after the load)."""
        r = self.rnd2
        live = self.live_keys("loaded")
        ids = r.sample(live, updates + deletes)
        def go(cur, ch):
            for k in ids[:updates]:
                self.update(cur, ch, "loaded", "id = %s", [k], {"label": f"{label} {k}", "qty": r.randrange(0, 9)})
            for k in ids[updates:]:
                self.delete(cur, ch, "loaded", "id = %s", [k])
            top = max(live) if live else LOADED_SEED
            for k in range(max(top, 30000) + 1, max(top, 30000) + 1 + inserts):
                self.insert(cur, ch, "loaded", self.loaded_row(k))
        self.tx(go)

    # resnap's keys by what happens to them (check.py reads the sets back from the log):
    #   1..10 deleted before the outage (streamed)      11..30 updated before it (streamed)
    #   31..70 deleted during the outage (lost)         71..110 updated during it (lost)
    #   111..115 deleted and re-inserted during it (lost, one transaction each)
    #   116..125 and 11..15 updated after rs-lossy streams again (its first transaction)
    #   451..600, then 3001.., updated during the re-snapshot (each once)
    #   126..450 untouched; inserts: 701.. before, 1001.. during (lost), 1101.. after, 3001.. during the re-snapshot
    # incsnap: 1..10 updated and 11..15 deleted before the outage; 16..55 updated and 11, 12
    # re-inserted during it (lost); 56..60 updated after; inserts 501.. before, 601.. during (lost)
    # blocksnap (values from self.rnd3; never changed during the outage, so nothing of it is lost;
    # run.sh has Debezium take a blocking snapshot of it after rs-lossy's reset, before lossy_after):
    #   before the outage: 1..20 updated, 11..20 twice, 21..25 deleted, 26..28 deleted and
    #   re-inserted (separate transactions), 29, 30 deleted and re-inserted in one, 31, 32 no-op
    #   updates, inserts 201..220, 206..210 then updated; 33..100 untouched (only loaded)
    #   after the blocking snapshot: 1..5, 201..203 updated, 40 and 215 deleted, 60 deleted and
    #   re-inserted, inserts 221..225
    # blocktrunc: before the outage 1..10 updated, inserts 101..120, TRUNCATE, inserts 301..310;
    #   during it (lost) inserts 401..420; then the blocking snapshot; after it 401..403 updated

    def lossy_before(self):
        self.tx(lambda cur, ch: self.delete(cur, ch, "resnap", "id BETWEEN 1 AND 10", []))
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "resnap", range(11, 31), "before"))
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "resnap", [self.snap_row(i, "before") for i in range(701, 711)], self.SNAP_TYPES))
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "incsnap", range(1, 11), "before"))
        self.tx(lambda cur, ch: self.delete(cur, ch, "incsnap", "id BETWEEN 11 AND 15", []))
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "incsnap", [self.snap_row(i, "before") for i in range(501, 506)], self.SNAP_TYPES))
        self.blocking_before()

    def blocking_before(self):
        r = self.rnd3
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "blocksnap", range(1, 21), "before", rnd=r))
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "blocksnap", range(11, 21), "before2", rnd=r))
        self.tx(lambda cur, ch: self.delete(cur, ch, "blocksnap", "id BETWEEN 21 AND 25", []))
        for k in range(26, 29):
            self.tx(lambda cur, ch, k=k: self.delete(cur, ch, "blocksnap", "id = %s", [k]))
            self.tx(lambda cur, ch, k=k: self.insert(cur, ch, "blocksnap", self.snap_row(k, "reborn", rnd=r)))
        for k in (29, 30):
            def del_ins(cur, ch, k=k):
                self.delete(cur, ch, "blocksnap", "id = %s", [k])
                self.insert(cur, ch, "blocksnap", self.snap_row(k, "reborn1tx", rnd=r))
            self.tx(del_ins)
        self.tx(lambda cur, ch: self.update(cur, ch, "blocksnap", "id IN (31, 32)", [], {"label": Raw("label")}))
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "blocksnap", [self.snap_row(i, "before", rnd=r) for i in range(201, 221)], self.SNAP_TYPES))
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "blocksnap", range(206, 211), "before-upd", rnd=r))
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "blocktrunc", range(1, 11), "before", rnd=r))
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "blocktrunc", [self.snap_row(i, "before", rnd=r) for i in range(101, 121)], self.SNAP_TYPES))
        self.tx(lambda cur, ch: self.truncate(cur, ch, "blocktrunc"))
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "blocktrunc", [self.snap_row(i, "after-truncate", rnd=r) for i in range(301, 311)], self.SNAP_TYPES))

    def lossy_outage(self):
        for lo in range(31, 71, 10):
            self.tx(lambda cur, ch, lo=lo: self.delete(cur, ch, "resnap", "id BETWEEN %s AND %s", [lo, lo + 9]))
        for lo in range(71, 111, 10):
            self.tx(lambda cur, ch, lo=lo: self.snap_update(cur, ch, "resnap", range(lo, lo + 10), "lost"))
        for k in range(111, 116):
            def del_ins(cur, ch, k=k):
                self.delete(cur, ch, "resnap", "id = %s", [k])
                self.insert(cur, ch, "resnap", self.snap_row(k, "reborn"))
            self.tx(del_ins)
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "resnap", [self.snap_row(i, "lost") for i in range(1001, 1021)], self.SNAP_TYPES))
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "incsnap", range(16, 56), "lost"))
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "incsnap", [self.snap_row(i, "lost") for i in (11, 12)], self.SNAP_TYPES))
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "incsnap", [self.snap_row(i, "lost") for i in range(601, 621)], self.SNAP_TYPES))
        # blocktrunc: inserts after its (streamed) truncate that are never streamed: only
        # Debezium's blocking snapshot after the reset reads them
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "blocktrunc", [self.snap_row(i, "lost", rnd=self.rnd3) for i in range(401, 421)], self.SNAP_TYPES))

    def lossy_after(self):
        # the first transaction rs-lossy streams after its offsets were reset
        # (source.sequence [null, lsn]) also updates keys streamed before the outage
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "resnap", list(range(11, 16)) + list(range(116, 126)), "after"))
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "resnap", [self.snap_row(i, "after") for i in range(1101, 1106)], self.SNAP_TYPES))
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "incsnap", range(56, 61), "after"))
        # after Debezium's blocking snapshot of blocksnap and blocktrunc (run.sh)
        r = self.rnd3
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "blocksnap", list(range(1, 6)) + [201, 202, 203], "after", rnd=r))
        self.tx(lambda cur, ch: self.delete(cur, ch, "blocksnap", "id IN (40, 215)", []))
        def del_ins(cur, ch):
            self.delete(cur, ch, "blocksnap", "id = %s", [60])
            self.insert(cur, ch, "blocksnap", self.snap_row(60, "reborn-after", rnd=r))
        self.tx(del_ins)
        self.tx(lambda cur, ch: self.insert_many(cur, ch, "blocksnap", [self.snap_row(i, "after", rnd=r) for i in range(221, 226)], self.SNAP_TYPES))
        self.tx(lambda cur, ch: self.snap_update(cur, ch, "blocktrunc", range(401, 404), "after", rnd=r))

    def resnap_live(self):
        """Changes to resnap while its direct re-snapshot runs: each
        transaction updates one key (451, 452, ..., 600, then 3001, 3002, ...:
        each key once) and inserts one (3001, ...), followed by a transaction on a table no
        connector captures; another session commits to that table every few
        ms meanwhile (other WAL traffic, as on any busy server). This
        session commits synchronously (PostgreSQL's default; the suite's
        server runs with synchronous_commit=off). Until the stop file exists."""
        with self.conn.cursor() as cur:
            cur.execute("SET synchronous_commit = on")
        self.conn.commit()
        # other WAL traffic, continuously: a session committing every few ms to a
        # table no connector captures (synchronous commit, so its WAL is written)
        stop = threading.Event()
        def noise():
            with psycopg.connect(self.dsn, autocommit=True) as c:
                c.execute("SET synchronous_commit = on")
                n = 0
                while not stop.is_set():
                    c.execute("INSERT INTO rs_noise (n) VALUES (%s)", [-n])
                    n += 1
                    time.sleep(0.002)
        th = threading.Thread(target=noise, daemon=True)
        th.start()
        try:
            self._resnap_live()
        finally:
            stop.set()
            th.join()

    def _resnap_live(self):
        i = 0
        while not self.stopped() and i < 2000:
            def step(cur, ch, i=i):
                # each key is updated once: 451..600, then the keys this phase inserted, in order
                k = 451 + i if 451 + i <= RESNAP_SEED else 3001 + i - (RESNAP_SEED - 450)
                self.snap_update(cur, ch, "resnap", [k], f"live{i}")
                self.insert(cur, ch, "resnap", self.snap_row(3001 + i, f"live{i}"))
            self.tx(step)
            with self.conn.cursor() as cur:
                cur.execute("INSERT INTO rs_noise (n) VALUES (%s)", [i])
            self.conn.commit()
            i += 1
            time.sleep(0.05)

    def lossy_final(self):
        self.tx(lambda cur, ch: self.insert(cur, ch, "rsl_marker", {"id": 1, "note": "end of rs-lossy workload"}))

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
        self.loaded_some(8, 3, 2, "while-down")

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
        self.loaded_some(5, 2, 1, "final")
        self.tx(lambda cur, ch: self.insert(cur, ch, "rs_marker", {"id": 1, "note": "end of workload"}))


def lsn_int(text):
    """PostgreSQL's pg_lsn text "X/Y" as the number X<<32 | Y (Debezium's source.lsn)."""
    hi, lo = text.split("/")
    return int(hi, 16) << 32 | int(lo, 16)


class Raw(str):
    """A SQL expression as an UPDATE value (e.g. qty = qty)."""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("phase", choices=["seed", "stream1", "burst", "while_down", "evolve", "bulk", "final",
                                      "loaded_live", "lossy_before", "lossy_outage", "lossy_after", "resnap_live",
                                      "lossy_final"])
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--seed", default="7")
    ap.add_argument("--stop-file", default=None, help="loaded_live, resnap_live: run until this file exists")
    a = ap.parse_args()
    w = Workload(a.dsn, a.log, a.seed, a.phase, a.stop_file)
    getattr(w, a.phase)()
    print(json.dumps({"phase": a.phase, "transactions": w.txs, "row_changes": w.changes}))


if __name__ == "__main__":
    sys.exit(main())
