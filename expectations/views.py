"""Names of the Spark temp views the custom expectations read besides their own ``{batch}``.

GX on Spark substitutes ``{batch}`` with a temp view of the validated DataFrame; an expectation
that needs a second table (events for a timeline row's cause line, the legal-transition table)
reads it under one of these names, which ``register_views`` creates in the shared session.
"""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import DataFrame, SparkSession

from kafka_forensics.core import tables

from .legality import era_state_rows, legal_transition_rows

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


def register_views(spark: SparkSession, tables: Mapping[str, DataFrame]) -> None:
    """Register ``tables`` (keys of ``TABLE_VIEWS``) and the two rule tables derived from statemachines/."""
    for name, df in tables.items():
        df.createOrReplaceTempView(TABLE_VIEWS[name])
    spark.createDataFrame(
        list(legal_transition_rows()), "dialect string, entity string, from_state string, to_state string"
    ).createOrReplaceTempView(LEGAL_TRANSITIONS)
    spark.createDataFrame(
        list(era_state_rows()), "dialect string, entity string, state string"
    ).createOrReplaceTempView(ERA_STATES)


def drop_views(spark: SparkSession) -> None:
    """Drop the views ``register_views`` made (the session may outlive the check)."""
    for name in (*TABLE_VIEWS.values(), LEGAL_TRANSITIONS, ERA_STATES):
        spark.catalog.dropTempView(name)
