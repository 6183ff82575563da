"""The custom expectations' query metrics for GX's pandas engine, run on DuckDB.

GX 1.24.1 computes ``unexpected_rows_query.table`` and ``.row_count`` (what every
``UnexpectedRowsExpectation`` asks for) only on its Spark and SQL engines. GX registers a metric's
providers per engine, so the subclasses below add the pandas engine's: each runs the expectation's
Spark-SQL query, transpiled by ``dialects.spark_to_duckdb``, on the check's DuckDB connection, where
``views.register_duckdb_views`` registered every table and rule table under the names the queries
read. ``{batch}`` is the validated table's own view (``BATCH_VIEW_ATTR`` in the pandas frame's
``attrs``); a frame without one (a test's own frame) is registered for the query under ``kf_batch``.

Both providers behave like GX's Spark ones: the table metric keeps the first
``MAX_RESULT_RECORDS`` rows of the ordered query (a relation's ``limit`` keeps its ORDER BY, as
Spark's ``limit`` does); the row count counts all of them.

Importing this module registers the providers; ``gx_run.validate`` does so for the pandas data
source. The connection is the caller's, for the duration of ``using(con)``. These classes
subclass GX-internal metric classes (their module paths are not GX's public API): a GX upgrade
may move them.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import TYPE_CHECKING, Iterator

from great_expectations.constants import MAX_RESULT_RECORDS
from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine import PandasExecutionEngine
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.query_metrics.query_row_count.unexpected_rows_query_row_count import (
    UnexpectedRowsQueryRowCount,
)
from great_expectations.expectations.metrics.query_metrics.query_table.unexpected_rows_query_table import (
    UnexpectedRowsQueryTable,
)

from kafka_forensics.core.errors import JobError

from .dialects import spark_to_duckdb

if TYPE_CHECKING:
    import duckdb

BATCH_VIEW_ATTR = "kf_view"  # pandas ``DataFrame.attrs`` key: the DuckDB view holding the same table
_FRAME_VIEW = "kf_batch"
_CONNECTION: contextvars.ContextVar[duckdb.DuckDBPyConnection | None] = contextvars.ContextVar(
    "kafka_forensics_duckdb_connection", default=None
)


@contextlib.contextmanager
def using(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Run the custom expectations' queries on ``con`` while inside (a check's validations)."""
    token = _CONNECTION.set(con)
    try:
        yield
    finally:
        _CONNECTION.reset(token)


def _connection() -> duckdb.DuckDBPyConnection:
    con = _CONNECTION.get()
    if con is None:
        raise JobError("a custom expectation ran on the pandas engine outside duckdb_metrics.using(connection)")
    return con


def _duckdb_query(cls, execution_engine: PandasExecutionEngine, metric_domain_kwargs: dict, metric_value_kwargs: dict):
    """(connection, the expectation's query in DuckDB SQL with ``{batch}`` the validated table's view)."""
    con = _connection()
    query = cls._get_query_from_metric_value_kwargs(metric_value_kwargs)
    frame, _, _ = execution_engine.get_compute_domain(metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE)
    view = frame.attrs.get(BATCH_VIEW_ATTR)
    if view is None:
        con.register(_FRAME_VIEW, frame)
        view = _FRAME_VIEW
    return con, spark_to_duckdb(cls._format_query(query, batch=view))


class DuckDBUnexpectedRowsQueryTable(UnexpectedRowsQueryTable):
    """``unexpected_rows_query.table`` on the pandas engine: the first rows of the query, on DuckDB."""

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
        con, sql = _duckdb_query(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs)
        relation = con.sql(sql)
        if not metric_value_kwargs.get("fetch_all", False):
            relation = relation.limit(MAX_RESULT_RECORDS)
        names = relation.columns
        return [dict(zip(names, row)) for row in relation.fetchall()]


class DuckDBUnexpectedRowsQueryRowCount(UnexpectedRowsQueryRowCount):
    """``unexpected_rows_query.row_count`` on the pandas engine: the query's rows, counted on DuckDB."""

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics, runtime_configuration):
        con, sql = _duckdb_query(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs)
        ((count,),) = con.sql(f"SELECT count(*) FROM ({sql}) AS kf_query").fetchall()
        return int(count)


__all__ = ["BATCH_VIEW_ATTR", "DuckDBUnexpectedRowsQueryRowCount", "DuckDBUnexpectedRowsQueryTable", "using"]
