"""Value canonicalisation shared by workload.py and check.py.

Rows from PostgreSQL (psycopg types) and from the Iceberg readers (pyarrow
and DuckDB types) are turned into the same plain JSON-able values so that
they compare exactly: decimals as plain strings, timestamptz in UTC ISO-8601
with microseconds, dates ISO, UUIDs canonical, jsonb as sorted compact JSON.
"""

import datetime as dt
import decimal
import json
import uuid

UTC = dt.timezone.utc


def canon(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, decimal.Decimal):
        # numerically: 1.5 and 1.50 are the same numeric (an unconstrained
        # numeric has a scale per value; a lake decimal column has one scale)
        if v.is_nan():
            return "NaN"
        v = v.normalize(decimal.Context(prec=1000))
        return format(v, "f") if v != 0 else "0"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return v.astimezone(UTC).isoformat(timespec="microseconds")
        return v.isoformat(timespec="microseconds")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dt.time):
        return v.isoformat(timespec="microseconds")
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    return v


def canon_row(row):
    return {k: canon(v) for k, v in row.items()}


def canon_lake(v, pgtype):
    """A value read from the lake, for a column whose PostgreSQL type is pgtype."""
    if v is None:
        return None
    if pgtype in ("jsonb", "json"):
        if isinstance(v, (bytes, bytearray)):
            v = bytes(v).decode()
        if isinstance(v, str):
            try:
                return canon(json.loads(v))
            except ValueError:
                return "<not JSON> " + v
        return canon(v)
    if pgtype == "uuid":
        if isinstance(v, (bytes, bytearray)) and len(v) == 16:
            return str(uuid.UUID(bytes=bytes(v)))
        return str(uuid.UUID(str(v)))
    if pgtype == "numeric" and isinstance(v, str):
        try:
            return canon(decimal.Decimal(v))  # a decimal kept as text: compare the number
        except decimal.InvalidOperation:
            return v
    if pgtype == "timestamp with time zone" and isinstance(v, dt.datetime) and v.tzinfo is None:
        return canon(v.replace(tzinfo=UTC))  # a reader that drops the zone of a UTC value
    return canon(v)
