"""GX's pandas engine runs a custom expectation's query on DuckDB (expectations/duckdb_metrics.py), no Spark.

The suites' results are compared with Spark's by the differential tests; these cover what they do
not reach: a pandas frame that is not one of the check's tables (``{batch}`` is the frame itself)
and a query run outside a check's connection.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pandas as pd
import pytest

from kafka_forensics.expectations import custom, duckdb_metrics, gx_run


@pytest.fixture(scope="module")
def context():
    with gx_run.quiet_gx():
        yield gx_run.ephemeral_context()


def _events() -> pd.DataFrame:
    # two lines of broker-1's state-change.log: the second's timestamp text was not parsed
    ts = dt.datetime(2024, 3, 4, 10, 0, 0, 123000, tzinfo=dt.timezone.utc)
    return pd.DataFrame(
        {
            "topic": ["orders", "orders"],
            "partition": [0, 1],
            "replica": [None, None],
            "source_file": ["broker-1/state-change.log"] * 2,
            "line_no": [4, 5],
            "ts_raw": ["2024-03-04 10:00:00,123", "2024-03-04 10:00:00,1x3"],
            "ts": [ts, None],
        }
    )


def _validate(context, expectation) -> dict:
    return gx_run.validate(context, "single", "single", _events(), [expectation], datasource="pandas")["results"][0]


def test_a_frame_of_its_own_is_the_batch(context):
    with duckdb_metrics.using(duckdb.connect()), gx_run.quiet_gx():
        result = _validate(context, custom.ExpectTimestampsToBeParsed())
    assert result["success"] is False and result["result"]["observed_value"] == 1
    (row,) = result["result"]["details"]["unexpected_rows"]
    assert row["evidence"] == "broker-1/state-change.log:5" and row["ts"] == "2024-03-04 10:00:00,1x3"


def test_outside_a_connection_the_expectation_reports_the_error(context):
    with gx_run.quiet_gx():
        result = _validate(context, custom.ExpectTimestampsToBeParsed())
    assert result["success"] is False
    messages = [v.get("exception_message") or "" for v in result["exception_info"].values()]
    assert any("outside duckdb_metrics.using(connection)" in m for m in messages), messages


def _batch_markers(context) -> dict:
    expectation = custom.ExpectTimestampsToBeParsed()
    with duckdb_metrics.using(duckdb.connect()), gx_run.quiet_gx():
        result = gx_run.validate(context, "single", "single", _events(), [expectation], datasource="pandas")
    return result["meta"]["batch_markers"]


def test_a_check_does_not_hash_its_frames(context):
    """GX fingerprints (md5 over every row) each pandas batch it is given; ``no_batch_fingerprint`` turns it off for
    a check, as Spark's engine has none. Both halves: GX still does it (else the switch is dead code) and the switch
    still stops it (else GX renamed what it reads)."""
    assert "pandas_data_fingerprint" in _batch_markers(context)
    with gx_run.no_batch_fingerprint():
        markers = _batch_markers(context)
    assert "pandas_data_fingerprint" not in markers and "ge_load_time" in markers
    assert "pandas_data_fingerprint" in _batch_markers(context)  # restored after
