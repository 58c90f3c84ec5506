"""Spark 4 + Apache Iceberg 1.10 as a reader of lakemirror's tables, for
check_readers.py (docs/readers.md) and scripts/prune/check.py
(docs/benchmarks.md, "Partition pruning").

One local Spark session (pyspark, local[2], UTC session time zone, adaptive
query execution off so that the executed plan is the scan itself) with
Iceberg's Spark runtime jar. A table is loaded from its current metadata
file, spark.read.format("iceberg").load(".../NNNNN-....metadata.json"):
Iceberg's path-based load opens a metadata file as a read-only static table,
so Spark needs neither the SQLite catalog (an Iceberg JdbcCatalog would need
the sqlite-jdbc driver as a second jar) nor write access.

read() returns the rows and the scan's metrics: Iceberg's Spark scan reports
its scan report (Iceberg ScanMetrics) as Spark custom metrics of the
BatchScanExec node of the executed plan, read here through py4j after the
query ran: resultDataFiles (data files planned), skippedDataFiles (pruned
by partition or column bounds), scannedDataManifests and
skippedDataManifests, resultDeleteFiles, numOutputRows.

Iceberg's Spark integration reserves the names of its metadata columns; a
table column with one of these names (a lakemirror mirror created before its
soft-delete flag was named _is_deleted has _deleted) makes a Spark read that selects it fail with Iceberg's
ValidationException ("Table column names conflict with names reserved for
Iceberg metadata columns"). RESERVED lists the names; callers report the
error and read the other columns.
"""

import os

# org.apache.iceberg.MetadataColumns of Iceberg 1.10: the names Iceberg's
# Spark integration reserves.
RESERVED = ("_file", "_pos", "_deleted", "_spec_id", "_partition", "_row_id", "_last_updated_sequence_number")

# Where `mvn dependency:get -Dartifact=org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0` puts the jar.
DEFAULT_JAR = os.path.expanduser("~/.m2/repository/org/apache/iceberg/iceberg-spark-runtime-4.0_2.13/1.10.0/"
                                 "iceberg-spark-runtime-4.0_2.13-1.10.0.jar")

# The scan metrics read() returns, when the scan reports them.
METRICS = ("resultDataFiles", "skippedDataFiles", "scannedDataManifests", "skippedDataManifests",
           "totalDataManifest", "resultDeleteFiles", "numOutputRows")


def local(path):
    return path[len("file://"):] if path.startswith("file://") else path


class Spark:
    """A local Spark session with Iceberg's runtime jar (jar: its path).
    scratch: a directory for Spark's local and warehouse directories."""

    def __init__(self, jar, scratch):
        if not os.path.isfile(jar):
            raise FileNotFoundError(f"Iceberg Spark runtime jar {jar} not found (scripts/spark/run.sh fetches it from Maven Central)")
        from pyspark.sql import SparkSession
        import pyspark
        self.session = (SparkSession.builder.master("local[2]").appName("lakemirror-readers")
                        .config("spark.jars", jar)
                        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                        .config("spark.sql.adaptive.enabled", "false")
                        .config("spark.sql.session.timeZone", "UTC")
                        .config("spark.ui.enabled", "false")
                        .config("spark.ui.showConsoleProgress", "false")
                        .config("spark.driver.memory", "1g")
                        .config("spark.sql.shuffle.partitions", "2")
                        .config("spark.local.dir", os.path.join(scratch, "spark-local"))
                        .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
                        .getOrCreate())
        self.session.sparkContext.setLogLevel("OFF")
        self.versions = {"spark": pyspark.__version__, "iceberg_jar": os.path.basename(jar)}

    def read(self, metadata, cols, where=None):
        """The table of the metadata file (a path or file:// URL): its
        columns cols of every row (WHERE where, Spark SQL, if given) as a
        list of tuples, timestamps as µs since the epoch (int), and the
        scan's metrics (dict name -> int, the names of METRICS that the
        scan reported). Raises what Spark raises (see error())."""
        from pyspark.sql.functions import col, unix_micros
        from pyspark.sql.types import TimestampNTZType, TimestampType
        df = self.session.read.format("iceberg").load(local(metadata))
        if where:
            df = df.where(where)
        types = {f.name: f.dataType for f in df.schema.fields}
        proj = [unix_micros(col(c)).alias(c) if isinstance(types.get(c), (TimestampType, TimestampNTZType)) else col(c) for c in cols]
        df = df.select(*proj)
        rows = [tuple(r) for r in df.collect()]
        return rows, self._metrics(df)

    @staticmethod
    def _metrics(df):
        plan = df._jdf.queryExecution().executedPlan()
        out = {}
        it = plan.collectLeaves().iterator()
        while it.hasNext():
            node = it.next()
            ms = node.metrics()
            for name in METRICS:
                m = ms.get(name)
                if m.isDefined():
                    out[name] = out.get(name, 0) + int(m.get().value())
        return out


def error(e):
    """A Spark error as one line: the Java exception's class and message
    (its first line) for errors raised in the JVM, else Python's; at most
    300 characters."""
    java = getattr(e, "java_exception", None)
    if java is not None:
        msg = str(java.toString())
    else:
        msg = f"{type(e).__name__}: {e}"
    return ((msg.strip().splitlines() or [type(e).__name__])[0])[:300]
