"""Reading the tables of an output directory with the schema they are written with.

``spark.read.parquet(dir)`` without a schema runs a Spark job to read Parquet footers before the
query even starts; an ``analyze`` read its tables about 25 times, one job each, whatever the
input size. The schemas are known (``core/tables.py`` is the one definition the writers follow),
so the readers pass them and Spark only lists the directory. ``tests/jobs/test_stored_tables.py``
checks every table an ``analyze`` writes against ``stored_schema``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Optional

import pyarrow as pa

from kafka_forensics.core.tables import FINDINGS, SCHEMAS

if TYPE_CHECKING:  # pyspark on use only: the driver engine's writer (local_tables) reads the Arrow schema
    import pandas as pd
    import pyarrow.dataset as ds
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


# A local table whose Parquet files hold at most this many bytes is read into memory once (``local_arrow``): a
# query scans a table in memory several times faster than its files (the check of the bundled sample: its 40
# queries), and a table this small costs what a fixed buffer would.
IN_MEMORY_BYTES = 8 << 20


def local_arrow(out_dir: str, name: str) -> pa.Table | ds.Dataset:
    """Table ``name`` of a local output directory, read in this process (no JVM): in memory if its files are small
    (``IN_MEMORY_BYTES``), else a pyarrow dataset read only as far as its reader asks (the check's DuckDB scans the
    columns a query names, batch by batch). Hidden and ``_``-prefixed files (``.crc``, ``_SUCCESS``) are skipped,
    as Spark does."""
    import os

    import pyarrow.dataset as ds

    dataset = ds.dataset(f"{out_dir}/{name}", format="parquet", schema=stored_arrow_schema(name))
    small = sum(os.path.getsize(f) for f in dataset.files) <= IN_MEMORY_BYTES
    return dataset.to_table() if small else dataset


def local_rows(source: pa.Table | ds.Dataset) -> int:
    """The rows of a ``local_arrow`` table (a dataset's from its Parquet footers)."""
    return source.num_rows if isinstance(source, pa.Table) else source.count_rows()


def local_frame(source: pa.Table | ds.Dataset, columns: Optional[Collection[str]] = None) -> pd.DataFrame:
    """The table ``source`` (``local_arrow``) as a pandas frame holding the values of ``columns`` only (None: all);
    every other column is in the frame by name, an Arrow null array (no memory), so the frame has the table's
    column list and row count. The check's pandas engine reads no more (``expectations.frame_columns``).

    A dataset is read a record batch at a time, one file ahead, so that what Arrow holds is a batch, not the
    table: the frame's values are the same as ``to_table().to_pandas()``'s (pandas unifies the batches' dtypes as
    Arrow's conversion of the whole column does: an integer column with a null is float64, a boolean one object).
    """
    import pandas as pd

    names = source.schema.names
    read = [c for c in names if columns is None or c in columns]
    if isinstance(source, pa.Table):
        parts = [source.select(read).to_pandas()]
    else:
        parts = [b.to_pandas() for b in source.to_batches(columns=read, batch_readahead=1, fragment_readahead=1)]
    if len(parts) > 1:
        values = pd.concat(parts, ignore_index=True)
    else:
        values = parts[0] if parts else source.schema.empty_table().select(read).to_pandas()
    for at, name in enumerate(names):
        if name not in read:
            values.insert(at, name, pd.arrays.ArrowExtensionArray(pa.nulls(len(values))))
    return values
