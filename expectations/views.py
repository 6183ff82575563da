"""Names of the views the custom expectations read besides their own ``{batch}``, in either engine.

GX substitutes ``{batch}`` with a view of the validated table; an expectation that needs a second
table (events for a timeline row's cause line, the legal-transition table) reads it under one of
these names. ``register_views`` creates them in the Spark session, ``register_duckdb_views`` on
the check's DuckDB connection (``duckdb_metrics``): same names, same two rule tables, so a query
reads the same in both engines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import pyarrow as pa

from kafka_forensics.core import tables

from .legality import era_state_rows, legal_transition_rows

if TYPE_CHECKING:
    import duckdb
    import pyarrow.dataset as ds
    from pyspark.sql import DataFrame, SparkSession

TABLE_VIEWS = {name: f"kf_{name}" for name in tables.TABLES}  # table -> its view
EVENTS = TABLE_VIEWS[tables.EVENTS]
QUARANTINE = TABLE_VIEWS[tables.QUARANTINE]
FILES = TABLE_VIEWS[tables.FILES]
PARTITION_TIMELINE = TABLE_VIEWS[tables.PARTITION_TIMELINE]
REPLICA_TIMELINE = TABLE_VIEWS[tables.REPLICA_TIMELINE]
CONTROLLERS = TABLE_VIEWS[tables.CONTROLLERS]
BROKERS = TABLE_VIEWS[tables.BROKERS]
FINDINGS = TABLE_VIEWS[tables.FINDINGS]
LEGAL_TRANSITIONS = "kf_legal_transitions"
ERA_STATES = "kf_era_states"
# The two rule tables derived from statemachines/: view -> (columns, rows). All columns are strings.
RULE_TABLES = {
    LEGAL_TRANSITIONS: (("dialect", "entity", "from_state", "to_state"), legal_transition_rows),
    ERA_STATES: (("dialect", "entity", "state"), era_state_rows),
}


def register_views(spark: SparkSession, tables: Mapping[str, DataFrame]) -> None:
    """Register ``tables`` (keys of ``TABLE_VIEWS``) and the two rule tables derived from statemachines/."""
    for name, df in tables.items():
        df.createOrReplaceTempView(TABLE_VIEWS[name])
    for view, (columns, rows) in RULE_TABLES.items():
        schema = ", ".join(f"{c} string" for c in columns)
        spark.createDataFrame(list(rows()), schema).createOrReplaceTempView(view)


def drop_views(spark: SparkSession) -> None:
    """Drop the views ``register_views`` made (the session may outlive the check)."""
    for name in (*TABLE_VIEWS.values(), *RULE_TABLES):
        spark.catalog.dropTempView(name)


def register_duckdb_views(con: duckdb.DuckDBPyConnection, tables: Mapping[str, pa.Table | ds.Dataset]) -> None:
    """``register_views`` on a DuckDB connection: Arrow ``tables`` (tables in memory, or datasets a query scans
    as it runs) and the two rule tables, same names."""
    for name, table in tables.items():
        con.register(TABLE_VIEWS[name], table)
    for view, (columns, rows) in RULE_TABLES.items():
        schema = pa.schema([(c, pa.string()) for c in columns])
        con.register(view, pa.Table.from_pylist([dict(zip(columns, row)) for row in rows()], schema=schema))
