"""Reading the tables of an output directory with the schema they are written with.

``spark.read.parquet(dir)`` without a schema runs a Spark job to read Parquet footers before the
query even starts; an ``analyze`` read its tables about 25 times, one job each, whatever the
input size. The schemas are known (``core/tables.py`` is the one definition the writers follow),
so the readers pass them and Spark only lists the directory. ``tests/jobs/test_stored_tables.py``
checks every table an ``analyze`` writes against ``stored_schema``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from kafka_forensics.core.tables import FINDINGS, SCHEMAS

if TYPE_CHECKING:  # pyspark on use only: the driver engine's writer (local_tables) reads the Arrow schema
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

# Columns the jobs carry in memory but do not store in the table: a finding's JSON line is
# stored as findings.jsonl.
NOT_STORED: dict[str, tuple[str, ...]] = {FINDINGS: ("json",)}


def stored_arrow_schema(name: str) -> pa.Schema:
    """The Arrow schema of table ``name`` as its writer stores it (every column nullable, as read)."""
    dropped = NOT_STORED.get(name, ())
    return pa.schema([f.with_nullable(True) for f in SCHEMAS[name] if f.name not in dropped])


def stored_schema(name: str) -> StructType:
    """The Spark schema of table ``name`` as its writer stores it (every column nullable, as read)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(stored_arrow_schema(name))


def read_table(spark: SparkSession, out_dir: str, name: str) -> DataFrame:
    """Table ``name`` of an output directory (local or any Hadoop filesystem), without a footer job."""
    return spark.read.schema(stored_schema(name)).parquet(f"{out_dir}/{name}")


def read_local_arrow(out_dir: str, name: str) -> pa.Table:
    """Table ``name`` of a local output directory, read with pyarrow in this process (no JVM): the check's
    DuckDB engine. Hidden and ``_``-prefixed files (``.crc``, ``_SUCCESS``) are skipped, as Spark does."""
    import pyarrow.dataset as ds

    return ds.dataset(f"{out_dir}/{name}", format="parquet", schema=stored_arrow_schema(name)).to_table()
