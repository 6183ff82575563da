"""The engine seam: the report's queries are PySpark DataFrame code, run on Spark or on DuckDB through SQLFrame.

On a short run Spark's cost is its own, not the data's: the report's ~30 small queries took 16-21 s on a fresh
JVM for the 584-line sample and ~4 s on DuckDB through SQLFrame, with the same ``ReportData`` field by field
(/work/scratch/sqlspike/REPORT.md). The queries keep ONE definition, the PySpark DataFrame API; what differs
between the engines is only what this module hands out: the functions module, ``Window``, how a table and a
small file are read, and the two calls SQLFrame lacks (``broadcast``, ``unpersist``).

This is the only module that knows both engines. It never calls ``sqlframe.activate()``: that replaces
``pyspark`` in ``sys.modules`` for the whole process, so every other ``from pyspark import ...`` would get a
mock. A session, or a DataFrame of one, says which engine it belongs to (``on_duckdb``).

DuckDB reads local output directories only (a short run writes its DIR locally: ``engine.local_plain``).
"""

from __future__ import annotations

import glob
import logging
import os
from types import ModuleType
from typing import Any

from kafka_forensics.core.errors import InputError

from .fs import local_path
from .fs import path_exists as _spark_path_exists
from .fs import write_text as _spark_write_text

_SQLFRAME = "sqlframe."


def duckdb_session() -> Any:
    """The process's SQLFrame DuckDB session (SQLFrame keeps one per process), with the time zone UTC so that
    timestamps come back UTC-aware and equal to Spark's, and SQLFrame's logger quiet (``cache()`` logs that
    DuckDB does not cache on every call)."""
    from sqlframe.duckdb import DuckDBSession

    logging.getLogger("sqlframe").setLevel(logging.ERROR)
    session = DuckDBSession.builder.getOrCreate()
    session.conf.set("spark.sql.session.timeZone", "UTC")
    return session


def on_duckdb(session_or_frame: Any) -> bool:
    """True for a SQLFrame (DuckDB) session or DataFrame, False for Spark's: told by the class's module, so the
    Spark path never imports SQLFrame."""
    return type(session_or_frame).__module__.startswith(_SQLFRAME)


def functions_of(session_or_frame: Any) -> ModuleType:
    """``pyspark.sql.functions`` or ``sqlframe.duckdb.functions``: the module the queries build columns with."""
    if on_duckdb(session_or_frame):
        from sqlframe.duckdb import functions as duck_functions

        return duck_functions
    from pyspark.sql import functions as spark_functions

    return spark_functions


def window_of(session_or_frame: Any) -> Any:
    """``Window`` of the engine (``pyspark.sql.Window`` or ``sqlframe.duckdb.Window``)."""
    if on_duckdb(session_or_frame):
        from sqlframe.duckdb import Window as DuckWindow

        return DuckWindow
    from pyspark.sql import Window as SparkWindow

    return SparkWindow


def read_table(session: Any, out_dir: str, name: str) -> Any:
    """Table ``name`` of an output directory with its stored schema (``stored_tables.stored_schema``, the one
    definition). On DuckDB: its Parquet parts, with the schema given so SQLFrame runs no probe query first."""
    from .stored_tables import read_table as spark_read_table
    from .stored_tables import stored_schema

    if not on_duckdb(session):
        return spark_read_table(session, out_dir, name)
    schema = sqlframe_schema(stored_schema(name))
    folder = f"{_local(out_dir)}/{name}"
    if not glob.glob(f"{glob.escape(folder)}/*.parquet"):  # a table of no rows may be written without parts
        if not os.path.isdir(folder):
            raise InputError(f"{folder}: no such table")
        return session.createDataFrame([], schema)
    return session.read.load(f"{folder}/*.parquet", format="parquet", schema=schema)


def sqlframe_schema(spark_type: Any) -> Any:
    """A Spark schema (``pyspark.sql.types``) as SQLFrame's types: same class names, same nesting. (SQLFrame's
    DDL-string parser splits on commas, so ``map<string,string>`` cannot be given to it as text.)"""
    from sqlframe.base import types as T

    kind = type(spark_type).__name__
    if kind == "StructType":
        return T.StructType([T.StructField(f.name, sqlframe_schema(f.dataType), f.nullable) for f in spark_type.fields])
    if kind == "ArrayType":
        return T.ArrayType(sqlframe_schema(spark_type.elementType), spark_type.containsNull)
    if kind == "MapType":
        return T.MapType(
            sqlframe_schema(spark_type.keyType), sqlframe_schema(spark_type.valueType), spark_type.valueContainsNull
        )
    atomic = getattr(T, kind, None)
    if atomic is None or kind in ("DataType", "DecimalType", "CharType", "VarcharType"):
        raise TypeError(f"no SQLFrame type for Spark's {spark_type!r}: add it to frames.sqlframe_schema")
    return atomic()


def path_exists(session: Any, path: str) -> bool:
    """Whether a path exists (Spark: through Hadoop's FileSystem, any scheme; DuckDB: a local path)."""
    if on_duckdb(session):
        return os.path.exists(_local(path))
    return _spark_path_exists(session, path)


def read_text(session: Any, path: str) -> str | None:
    """A whole small text file (``verdict.json``, ``story.json``); None if Spark reads no row from it."""
    if on_duckdb(session):
        with open(_local(path), encoding="utf-8") as fh:
            return fh.read()
    rows = session.read.text(path, wholetext=True).collect()
    return rows[0][0] if rows else None


def write_text(session: Any, path: str, text: str) -> None:
    """Write a whole small text file (Spark: through Hadoop's FileSystem, any scheme; DuckDB: a local path)."""
    if on_duckdb(session):
        with open(_local(path), "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    _spark_write_text(session, path, text)


def broadcast(frame: Any) -> Any:
    """Spark's broadcast-join hint; DuckDB plans its joins itself (SQLFrame has no hint), so the frame as is."""
    if on_duckdb(frame):
        return frame
    return functions_of(frame).broadcast(frame)


def unpersist(frame: Any) -> None:
    """Drop a ``cache()`` on Spark; SQLFrame's ``cache()`` keeps nothing on DuckDB (and it has no ``unpersist``)."""
    if not on_duckdb(frame):
        frame.unpersist()


def _local(path: str) -> str:
    """A local path for DuckDB (``fs.local_path``); any other filesystem is Spark's to read."""
    local = local_path(path)
    if local is None:
        raise InputError(f"{path}: DuckDB reads local paths only; Spark reads this one")
    return local


__all__ = [
    "broadcast",
    "duckdb_session",
    "functions_of",
    "on_duckdb",
    "path_exists",
    "read_table",
    "read_text",
    "sqlframe_schema",
    "unpersist",
    "window_of",
    "write_text",
]
