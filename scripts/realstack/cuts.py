"""Workload and checks of the consistent-cut real-stack run (cuts.sh, issue 37).

    python cuts.py seed  --dsn DSN
    python cuts.py run   --dsn DSN --log FILE --stop-file F [--seed N] [--rate TPS]
    python cuts.py check --dsn DSN --log FILE --catalog-db FILE --warehouse DIR --ns NS
                         --group G [--samples FILE] [--json OUT] [--min-cuts N]

Tables (one source group, one connector):

    bank_a      id int pk, balance bigint   accounts, split over two tables
    bank_b      id int pk, balance bigint
    orders      id int pk, n_items int      an order and ...
    order_items order_id int, line int, pk (order_id, line)   ... its n_items items

`run` commits, in one session (so commit order is log order), until the
stop file exists: transfers (one transaction moves an amount from a row of
bank_a to a row of bank_b or back), orders (an order and all its items in
one transaction), order deletions (the order and all its items), and mixed
transactions (a transfer and a new order together). Each committed
transaction is logged with its xid and the rows it wrote.

`check` reads every published cut (the rows of <ns>._cuts) and, for every
table, its mirror at the cut's snapshot id with pyiceberg
(`scan(snapshot_id=...)`) and with DuckDB (`iceberg_scan(..., snapshot_from_id
=> ...)`), and the history "as of W" (`_seq <= W` and (`_valid_to_seq` null
or `> W`)) at the cut's history snapshot and at the history's current
snapshot, and asserts per cut and per reader:

    balance   sum of live balances over bank_a + bank_b equals the seeded total
    orders    every live order has exactly n_items live items, no item without its order
    source    the mirror equals the source state right after the cut's transaction
              (the workload log replayed up to the xid of the cut's END, tx_id "xid:lsn")
    history   the history as of W (at the cut's snapshot and at the current one)
              equals the mirror at the cut
"""

import argparse
import collections
import datetime
import json
import os
import random
import sys
import time

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import duckdb_connect, metadata_location, pyiceberg_catalog  # noqa: E402

ACCOUNTS = 50        # per bank table
START_BALANCE = 1000
TOTAL = 2 * ACCOUNTS * START_BALANCE
SEED_ORDERS = 20
TABLES = ("bank_a", "bank_b", "orders", "order_items")
KEYS = {"bank_a": ("id",), "bank_b": ("id",), "orders": ("id",), "order_items": ("order_id", "line")}
COLS = {"bank_a": ("id", "balance"), "bank_b": ("id", "balance"), "orders": ("id", "n_items"),
        "order_items": ("order_id", "line")}


def seed(a):
    with psycopg.connect(a.dsn, autocommit=True) as c:
        c.execute("CREATE TABLE bank_a (id int PRIMARY KEY, balance bigint NOT NULL)")
        c.execute("CREATE TABLE bank_b (id int PRIMARY KEY, balance bigint NOT NULL)")
        c.execute("CREATE TABLE orders (id int PRIMARY KEY, n_items int NOT NULL)")
        c.execute("CREATE TABLE order_items (order_id int NOT NULL, line int NOT NULL, PRIMARY KEY (order_id, line))")
        for t in ("bank_a", "bank_b"):
            c.execute(f"INSERT INTO {t} SELECT g, {START_BALANCE} FROM generate_series(1, {ACCOUNTS}) g")
        for o in range(1, SEED_ORDERS + 1):
            n = 1 + o % 5
            c.execute("INSERT INTO orders VALUES (%s, %s)", (o, n))
            c.execute("INSERT INTO order_items SELECT %s, g FROM generate_series(1, %s) g", (o, n))
    print(json.dumps({"accounts": 2 * ACCOUNTS, "total": TOTAL, "orders": SEED_ORDERS}))


def seed_state():
    st = {t: {} for t in TABLES}
    for t in ("bank_a", "bank_b"):
        for i in range(1, ACCOUNTS + 1):
            st[t][(i,)] = {"id": i, "balance": START_BALANCE}
    for o in range(1, SEED_ORDERS + 1):
        n = 1 + o % 5
        st["orders"][(o,)] = {"id": o, "n_items": n}
        for ln in range(1, n + 1):
            st["order_items"][(o, ln)] = {"order_id": o, "line": ln}
    return st


def run(a):
    rnd = random.Random(a.seed)
    conn = psycopg.connect(a.dsn, autocommit=False)
    live_orders = set(range(1, SEED_ORDERS + 1))
    n_items = {o: 1 + o % 5 for o in live_orders}
    next_order = SEED_ORDERS + 1
    counts = collections.Counter()
    with open(a.log, "a") as log:
        while not os.path.exists(a.stop_file):
            t0 = time.time()
            changes = []  # [table, key list, row or null]
            kind = rnd.choices(["transfer", "order", "delete_order", "mixed"], [6, 3, 1, 1])[0]
            if kind == "delete_order" and len(live_orders) < 10:
                kind = "order"
            with conn.cursor() as cur:
                cur.execute("SELECT txid_current()")
                xid = cur.fetchone()[0]
                if kind in ("transfer", "mixed"):
                    ia, ib = rnd.randint(1, ACCOUNTS), rnd.randint(1, ACCOUNTS)
                    amt = rnd.randint(1, 300)
                    src, dst = (("bank_a", ia), ("bank_b", ib)) if rnd.random() < 0.5 else (("bank_b", ib), ("bank_a", ia))
                    for (t, i), d in ((src, -amt), (dst, amt)):
                        cur.execute(f"UPDATE {t} SET balance = balance + %s WHERE id = %s RETURNING id, balance", (d, i))
                        r = cur.fetchone()
                        changes.append([t, [r[0]], {"id": r[0], "balance": r[1]}])
                if kind in ("order", "mixed"):
                    o, n = next_order, rnd.randint(1, 6)
                    next_order += 1
                    cur.execute("INSERT INTO orders VALUES (%s, %s)", (o, n))
                    changes.append(["orders", [o], {"id": o, "n_items": n}])
                    for ln in range(1, n + 1):
                        cur.execute("INSERT INTO order_items VALUES (%s, %s)", (o, ln))
                        changes.append(["order_items", [o, ln], {"order_id": o, "line": ln}])
                    live_orders.add(o)
                    n_items[o] = n
                if kind == "delete_order":
                    o = rnd.choice(sorted(live_orders))
                    # items first, then the order (any order within the transaction is fine)
                    cur.execute("DELETE FROM order_items WHERE order_id = %s RETURNING line", (o,))
                    lines = sorted(r[0] for r in cur.fetchall())
                    for ln in lines:
                        changes.append(["order_items", [o, ln], None])
                    cur.execute("DELETE FROM orders WHERE id = %s", (o,))
                    changes.append(["orders", [o], None])
                    live_orders.discard(o)
            conn.commit()
            counts[kind] += 1
            log.write(json.dumps({"xid": xid, "kind": kind, "at": time.time(), "changes": changes}) + "\n")
            log.flush()
            dt = 1.0 / a.rate - (time.time() - t0)
            if dt > 0:
                time.sleep(dt)
    conn.close()
    print(json.dumps({"transactions": sum(counts.values()), **counts}))


# --- checks ------------------------------------------------------------------

def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def state_after(txs, xid):
    """The source state right after the logged transaction with xid (None: not in the log)."""
    st = seed_state()
    for tx in txs:
        for t, key, row in tx["changes"]:
            if row is None:
                st[t].pop(tuple(key), None)
            else:
                st[t][tuple(key)] = row
        if tx["xid"] == xid:
            return st
    return None


def arrow_rows(tbl):
    if hasattr(tbl, "read_all"):
        tbl = tbl.read_all()
    return tbl.to_pylist()


def live_state(rows, table):
    """Keyed state of the live mirror rows (_is_deleted = false); duplicates reported."""
    out, dups = {}, []
    for r in rows:
        if r.get("_is_deleted"):
            continue
        k = tuple(r[c] for c in KEYS[table])
        if k in out:
            dups.append(k)
        out[k] = {c: r[c] for c in COLS[table]}
    return out, dups


def as_of(rows, table, w):
    """The history's state as of W: versions with _seq <= W and (_valid_to_seq null or > W)."""
    out, dups = {}, []
    for r in rows:
        if r["_seq"] <= w and (r.get("_valid_to_seq") is None or r["_valid_to_seq"] > w):
            k = tuple(r[c] for c in KEYS[table])
            if k in out:
                dups.append(k)
            out[k] = {c: r[c] for c in COLS[table]}
    return out, dups


def diff(exp, got, limit=5):
    """Short description of the differences of two keyed states ('' when equal)."""
    missing = sorted(k for k in exp if k not in got)
    extra = sorted(k for k in got if k not in exp)
    changed = sorted(k for k in exp if k in got and exp[k] != got[k])
    if not (missing or extra or changed):
        return ""
    parts = []
    if missing:
        parts.append(f"{len(missing)} missing (e.g. {missing[:limit]})")
    if extra:
        parts.append(f"{len(extra)} extra (e.g. {extra[:limit]})")
    if changed:
        parts.append(f"{len(changed)} changed (e.g. " + ", ".join(f"{k}: want {exp[k]} got {got[k]}" for k in changed[:limit]) + ")")
    return "; ".join(parts)


def invariants(st):
    """(balance total, [order problems])"""
    total = sum(r["balance"] for t in ("bank_a", "bank_b") for r in st[t].values())
    items = collections.Counter(k[0] for k in st["order_items"])
    bad = []
    for (o,), r in st["orders"].items():
        if items.get(o, 0) != r["n_items"]:
            bad.append(f"order {o}: n_items {r['n_items']}, {items.get(o, 0)} items")
    for o in sorted(set(items) - {k[0] for k in st["orders"]}):
        bad.append(f"order {o}: {items[o]} items without the order")
    return total, bad


def check(a):
    import pyarrow as pa  # noqa: F401  (pyiceberg's scans return Arrow)
    txs = read_log(a.log)
    cat = pyiceberg_catalog(a.catalog_db, a.warehouse)
    duck = duckdb_connect()
    ns = a.ns
    cuts_rows = cat.load_table(f"{ns}._cuts").scan().to_arrow().to_pylist()
    cuts = collections.defaultdict(list)
    for r in cuts_rows:
        if r["group_name"] == a.group:
            cuts[r["cut"]].append(r)
    failures, results = [], []
    tables = {t: cat.load_table(f"{ns}.{t}") for t in TABLES}
    hist = {t: cat.load_table(f"{ns}.{t}_history") for t in TABLES}
    hist_now = {t: hist[t].scan().to_arrow().to_pylist() for t in TABLES}
    meta = {t: metadata_location(a.catalog_db, f"{ns}.{t}") for t in TABLES}
    hmeta = {t: metadata_location(a.catalog_db, f"{ns}.{t}_history") for t in TABLES}

    def duck_read(loc, snap):
        path = loc[len("file://"):] if loc.startswith("file://") else loc
        return arrow_rows(duck.execute("SELECT * FROM iceberg_scan(?, snapshot_from_id => ?)", [path, snap]).arrow())

    def fail(n, what):
        failures.append(f"cut {n}: {what}")
        print(f"FAIL cut {n}: {what}", flush=True)

    checks = 0
    for n in sorted(cuts):
        rows = {r["table_name"].split(".", 1)[1]: r for r in cuts[n]}
        first = cuts[n][0]
        w, txid = first["w"], first["tx_id"]
        if set(rows) != set(TABLES):
            fail(n, f"_cuts rows for {sorted(rows)}, want {sorted(TABLES)}")
            continue
        if any(r["w"] != w or r["tx_id"] != txid for r in cuts[n]):
            fail(n, f"_cuts rows disagree on w/tx_id: {[(r['table_name'], r['w'], r['tx_id']) for r in cuts[n]]}")
        xid = int(txid.split(":")[0]) if txid else None
        exp = state_after(txs, xid) if xid is not None else None
        if exp is None:
            fail(n, f"the cut's transaction {txid} is not a logged workload transaction")
        exp_total, exp_bad = invariants(exp) if exp else (None, None)
        cut_res = {"cut": n, "w": w, "tx_id": txid, "source_ts": str(first["source_ts"]),
                   "published_at": str(first["published_at"]), "snapshots": {}, "readers": {}}
        states = {}
        for reader in ("pyiceberg", "duckdb"):
            st = {}
            for t in TABLES:
                snap = rows[t]["mirror_snapshot_id"]
                cut_res["snapshots"][t] = [snap, rows[t]["history_snapshot_id"]]
                if snap == 0:
                    got = []
                elif reader == "pyiceberg":
                    got = tables[t].scan(snapshot_id=snap).to_arrow().to_pylist()
                else:
                    got = duck_read(meta[t], snap)
                st[t], dups = live_state(got, t)
                checks += 1
                if dups:
                    fail(n, f"{reader} {t}: {len(dups)} keys twice in the mirror (e.g. {dups[:5]})")
            states[reader] = st
            total, bad = invariants(st)
            checks += 2
            if total != TOTAL:
                fail(n, f"{reader} balance: sum over bank_a + bank_b = {total}, want {TOTAL} "
                        f"(bank_a {sum(r['balance'] for r in st['bank_a'].values())}, "
                        f"bank_b {sum(r['balance'] for r in st['bank_b'].values())})")
            if bad:
                fail(n, f"{reader} orders: {len(bad)} orders without all their items: {bad[:5]}")
            if exp is not None:
                for t in TABLES:
                    checks += 1
                    d = diff(exp[t], st[t])
                    if d:
                        fail(n, f"{reader} {t} differs from the source state after transaction {txid}: {d}")
            # the history as of W: at the cut's history snapshot and now
            for t in TABLES:
                hs = rows[t]["history_snapshot_id"]
                variants = [("now", hist_now[t])]
                if hs:
                    hrows = (hist[t].scan(snapshot_id=hs).to_arrow().to_pylist() if reader == "pyiceberg"
                             else duck_read(hmeta[t], hs))
                    variants.insert(0, ("at cut", hrows))
                elif hs is None:
                    fail(n, f"{t}: no history snapshot id in _cuts")
                for label, hrows in variants:
                    if reader == "duckdb" and label == "now":
                        hrows = duck_read(hmeta[t], hist[t].current_snapshot().snapshot_id)
                    ast, dups = as_of(hrows, t, w)
                    checks += 1
                    if dups:
                        fail(n, f"{reader} {t}_history ({label}): {len(dups)} keys with two versions as of W (e.g. {dups[:5]})")
                    d = diff(st[t], ast)
                    if d:
                        fail(n, f"{reader} {t}_history as of W ({label}) differs from the mirror at the cut: {d}")
            cut_res["readers"][reader] = {"total": total, "orders": len(st["orders"]), "items": len(st["order_items"]),
                                          "order_problems": len(bad)}
        if exp is not None:
            cut_res["expected"] = {"total": exp_total, "orders": len(exp["orders"]), "items": len(exp["order_items"]),
                                   "order_problems": len(exp_bad)}
        results.append(cut_res)
        print(f"cut {n}: W {w} tx {txid} source_ts {first['source_ts']} published {first['published_at']}: "
              f"total {cut_res['readers']['pyiceberg']['total']}/{cut_res['readers']['duckdb']['total']}, "
              f"{len(states['pyiceberg']['orders'])} orders, {len(states['pyiceberg']['order_items'])} items", flush=True)

    # cut lag: source commit time of W to publication, time between cuts
    def ts(v):
        return v.replace(tzinfo=datetime.timezone.utc).timestamp() if v.tzinfo is None else v.timestamp()
    pubs = sorted((n, ts(cuts[n][0]["published_at"]), ts(cuts[n][0]["source_ts"])) for n in cuts)
    pub_lag = [p - s for _, p, s in pubs]
    gaps = [b[1] - a_[1] for a_, b in zip(pubs, pubs[1:])]
    samples = []
    if a.samples and os.path.exists(a.samples):
        with open(a.samples) as f:
            samples = [json.loads(line) for line in f if line.strip()]
    phases = {}
    if a.phases and os.path.exists(a.phases):
        with open(a.phases) as f:
            for line in f:
                k, v = line.split()
                phases[k] = float(v)
    # now - the published cut's source commit time, while the workload commits
    # (after it stops, the last cut's source time stands still)
    wl_end = phases.get("workload_end", float("inf"))
    lag_now = [s["lag_s"] for s in samples if s.get("lag_s") is not None and s["at"] <= wl_end]

    def within(lo, hi):
        if lo not in phases or hi not in phases:
            return None
        return [n for n, p, _ in pubs if phases[lo] <= p <= phases[hi]]

    def stats(v):
        if not v:
            return None
        v = sorted(v)
        return {"n": len(v), "min": round(v[0], 1), "median": round(v[len(v) // 2], 1),
                "p90": round(v[int(len(v) * 0.9)], 1), "max": round(v[-1], 1)}
    summary = {"cuts_checked": len(cuts), "cut_numbers": sorted(cuts), "checks": checks, "failures": failures,
               "workload_transactions": len(txs),
               "published_during_kills": within("kills_start", "kills_end"),
               "published_during_pause": within("pause_start", "pause_end"),
               "publish_lag_s": stats(pub_lag), "between_cuts_s": stats(gaps), "lag_now_minus_source_ts_s": stats(lag_now),
               "cuts": results}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1, default=str)
    print(json.dumps({k: summary[k] for k in ("cuts_checked", "checks", "workload_transactions", "published_during_kills",
                                              "published_during_pause", "publish_lag_s",
                                              "between_cuts_s", "lag_now_minus_source_ts_s")}))
    print(f"{len(failures)} failures")
    if len(cuts) < a.min_cuts:
        print(f"FAIL: {len(cuts)} cuts published, want at least {a.min_cuts}")
        return 1
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["seed", "run", "check"])
    p.add_argument("--dsn", required=True)
    p.add_argument("--log")
    p.add_argument("--stop-file")
    p.add_argument("--seed", type=int, default=37)
    p.add_argument("--rate", type=float, default=20.0, help="transactions per second, at most")
    p.add_argument("--catalog-db")
    p.add_argument("--warehouse")
    p.add_argument("--ns", default="cs")
    p.add_argument("--group", default="bank")
    p.add_argument("--samples")
    p.add_argument("--phases")
    p.add_argument("--json")
    p.add_argument("--min-cuts", type=int, default=3)
    a = p.parse_args()
    if a.cmd == "seed":
        seed(a)
        return 0
    if a.cmd == "run":
        run(a)
        return 0
    return check(a)


if __name__ == "__main__":
    sys.exit(main())
