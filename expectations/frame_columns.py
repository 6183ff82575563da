"""Which columns' values a suite's expectations read from the pandas frame GX validates (the check without Spark).

The check without Spark gives GX's pandas engine a frame per suite; what GX reads from it depends on each
expectation's domain (great_expectations 1.24.1 ``expectations/expectation.py``):
- a column, column-pair or multicolumn expectation reads the values of the columns its domain names
  (``column``, ``column_A``/``column_B``, ``column_list``);
- a table expectation that depends only on the table's shape (``SHAPE_METRICS``: its column names, their
  count, its row count) reads no values, only the frame's column list and length;
- an ``UnexpectedRowsExpectation`` (every custom expectation) runs its query on DuckDB, over the table's view
  (``duckdb_metrics``), never over the frame;
- anything else, and any expectation with a ``row_condition``, may read any column: ``columns_read`` answers
  None (load them all).

The check loads values only for the columns ``columns_read`` names (and the evidence columns GX reports for
offending rows); the others are in the frame by name only, so a table expectation sees the whole column list.
"""

from __future__ import annotations

from typing import Iterable, Optional

from great_expectations.expectations import UnexpectedRowsExpectation
from great_expectations.expectations.expectation import Expectation

# Metrics of a table's shape: an expectation that depends on these alone reads no column's values.
SHAPE_METRICS = frozenset({"table.columns", "table.column_count", "table.row_count"})
_COLUMN_KEYS = ("column", "column_A", "column_B")  # domain keys naming one column
_COLUMN_LIST_KEY = "column_list"  # a multicolumn expectation's domain


def _domain_columns(expectation: Expectation) -> Optional[set[str]]:
    """The columns ``expectation`` reads values of, or None if it may read any."""
    if isinstance(expectation, UnexpectedRowsExpectation):
        return set()
    if getattr(expectation, "row_condition", None):  # its condition may read any column
        return None
    keys = type(expectation).domain_keys
    named = {getattr(expectation, k) for k in _COLUMN_KEYS if k in keys}
    if _COLUMN_LIST_KEY in keys:
        named.update(getattr(expectation, _COLUMN_LIST_KEY) or ())
    if named:
        return named
    depends = set(getattr(type(expectation), "metric_dependencies", ()) or ())
    return set() if depends and depends <= SHAPE_METRICS else None


def columns_read(expectations: Iterable[Expectation], evidence_columns: Iterable[str] = ()) -> Optional[frozenset[str]]:
    """The columns whose values validating ``expectations`` reads from the frame (with ``evidence_columns``, which
    GX reads for the offending rows of a column expectation), or None if one of them may read any column."""
    out = set(evidence_columns)
    for expectation in expectations:
        named = _domain_columns(expectation)
        if named is None:
            return None
        out |= named
    return frozenset(out)


__all__ = ["SHAPE_METRICS", "columns_read"]
