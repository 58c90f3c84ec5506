"""Trino as a reader of lakemirror's tables (check_readers.py --trino).

Talks Trino's HTTP client protocol with the standard library: POST the
statement to /v1/statement, then follow nextUri until the query is done,
collecting the rows of "data". Values come back as JSON (booleans as
true/false, bigints as numbers, decimals as strings).
"""

import json
import os
import time
import urllib.request

CATALOG = "iceberg"


class Trino:
    def __init__(self, url, user="lakemirror"):
        self.url = url.rstrip("/")
        self.user = user

    def _get(self, req):
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.load(r)

    def query(self, sql):
        """Runs sql; returns its rows (lists). Raises RuntimeError with
        Trino's message when the query fails."""
        req = urllib.request.Request(self.url + "/v1/statement", data=sql.encode(), method="POST",
                                     headers={"X-Trino-User": self.user, "X-Trino-Catalog": CATALOG})
        res = self._get(req)
        rows = []
        while True:
            if "error" in res:
                e = res["error"]
                raise RuntimeError(f'{e.get("errorName", "")}: {e.get("message", "")}')
            rows.extend(res.get("data") or [])
            nxt = res.get("nextUri")
            if not nxt:
                return rows
            time.sleep(0.05)
            res = self._get(urllib.request.Request(nxt, headers={"X-Trino-User": self.user}))

    def read(self, ident, metadata_location, cols):
        """Registers table ident (NS.NAME) at its metadata.json and returns
        its cols of every row (the current Iceberg snapshot, deletes
        applied)."""
        ns, name = ident.rsplit(".", 1)
        q = lambda s: '"' + s.replace('"', '""') + '"'
        lit = lambda s: "'" + s.replace("'", "''") + "'"
        self.query(f"CREATE SCHEMA IF NOT EXISTS {CATALOG}.{q(ns)}")
        try:  # an earlier run's registration of the same name: unregister (files stay)
            self.query(f"CALL {CATALOG}.system.unregister_table(schema_name => {lit(ns)}, table_name => {lit(name)})")
        except RuntimeError:
            pass
        location, meta = metadata_location.rsplit("/metadata/", 1)
        self.query(f"CALL {CATALOG}.system.register_table(schema_name => {lit(ns)}, table_name => {lit(name)}, "
                   f"table_location => {lit(location)}, metadata_file_name => {lit(os.path.basename(meta))})")
        return self.query(f"SELECT {', '.join(q(c) for c in cols)} FROM {CATALOG}.{q(ns)}.{q(name)}")
