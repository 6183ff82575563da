"""The custom expectations' Spark SQL on DuckDB (expectations/dialects.py): pure, no Spark.

Every query of every suite is transpiled and run on an in-process DuckDB over empty tables of the
stored schemas (a function DuckDB lacks, or a column a query names wrongly, fails here in
milliseconds), and the two constructs sqlglot gets wrong by itself give Spark's text. Whether the
queries return Spark's rows is the differential tests' job (tests/cli/test_analyze.py,
tests/jobs/test_check_job.py).
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa
import pytest

from kafka_forensics.core.tables import TABLES
from kafka_forensics.expectations import custom
from kafka_forensics.expectations.dialects import spark_to_duckdb
from kafka_forensics.expectations.suites import SUITE_TABLES, SUITES, SuiteSettings, expectations_for
from kafka_forensics.expectations.views import TABLE_VIEWS, register_duckdb_views
from kafka_forensics.jobs.stored_tables import stored_arrow_schema

# The defaults, and thresholds that change every parameterised query's text.
SETTINGS = (
    SuiteSettings(),
    SuiteSettings(
        max_quarantine_rate=0.5, clock_skew_seconds=0.25, max_unavailable_seconds=1.5, max_under_min_isr_seconds=0
    ),
)


def _queries() -> list[tuple[str, str, str]]:
    """(suite, expectation type, query with ``{batch}`` = its table's view) of every custom expectation."""
    out = []
    for settings in SETTINGS:
        for suite in SUITES:
            for expectation in expectations_for(suite, settings):
                query = getattr(expectation, "unexpected_rows_query", None)
                if isinstance(query, str):
                    view = TABLE_VIEWS[SUITE_TABLES[suite]]
                    out.append((suite, expectation.expectation_type, query.format(batch=view)))
    return out


QUERIES = _queries()


@pytest.fixture(scope="module")
def con():
    con = duckdb.connect()
    con.sql("SET TimeZone = 'UTC'")
    register_duckdb_views(con, {t: stored_arrow_schema(t).empty_table() for t in TABLES})
    yield con
    con.close()


def test_every_custom_expectation_is_covered():
    classes = [
        c
        for c in vars(custom).values()
        if isinstance(c, type) and issubclass(c, custom.KafkaRowsExpectation) and c.__name__.startswith("Expect")
    ]
    assert len(classes) >= 20
    assert {t for _, t, _ in QUERIES} == {c.expectation_type for c in classes}


@pytest.mark.parametrize(("suite", "expectation", "query"), QUERIES, ids=[f"{s}.{e}" for s, e, _ in QUERIES])
def test_each_query_runs_on_duckdb_with_the_output_columns(con, suite, expectation, query):
    sql = spark_to_duckdb(query)
    assert "format_number" not in sql.lower() and "'T'" not in sql and "%z" not in sql
    relation = con.sql(sql)
    assert tuple(relation.columns) == custom.OUTPUT_COLUMNS
    assert relation.fetchall() == []


def test_timestamps_print_as_spark_prints_them(con):
    # custom.ts_text's Spark pattern: ISO-8601 UTC with milliseconds, as findings.jsonl and Spark print it
    sql = spark_to_duckdb(f"SELECT {custom.ts_text('ts')} AS ts FROM kf_t")
    assert "'%Y-%m-%dT%H:%M:%S.%gZ'" in sql
    instants = [dt.datetime(2024, 3, 4, 10, 5, 41, 991000, tzinfo=dt.timezone.utc)]
    instants.append(dt.datetime(2024, 3, 4, 23, 0, 0, 7000, tzinfo=dt.timezone(dt.timedelta(hours=2))))
    con.register("kf_t", pa.table({"ts": pa.array(instants, pa.timestamp("us", tz="UTC"))}))
    assert [r[0] for r in con.sql(sql).fetchall()] == ["2024-03-04T10:05:41.991Z", "2024-03-04T21:00:00.007Z"]


def test_format_number_gives_sparks_grouped_text(con):
    # Spark's own example (FormatNumber's ExpressionDescription, sql/catalyst .../stringExpressions.scala):
    # format_number(12332.123456, 4) -> 12,332.1235; the impact queries format seconds with 3 decimals.
    rows = con.sql(
        spark_to_duckdb("SELECT format_number(12332.123456, 4), format_number(61.5, 3), format_number(1234567.0, 3)")
    ).fetchall()
    assert rows == [("12,332.1235", "61.500", "1,234,567.000")]
