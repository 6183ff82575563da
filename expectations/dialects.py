"""The custom expectations' Spark SQL, transpiled for DuckDB: one definition of each query, two engines.

The queries in ``custom`` are written once, in Spark SQL. The DuckDB engine of the check
(``duckdb_metrics``) runs them through sqlglot, which models each SQL variant as a dialect; what
sqlglot 30.29's Spark dialect gets wrong for these queries is fixed here, in a dialect of our own,
rather than by rewriting query text:

- ``date_format(ts, "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")`` (``custom.ts_text``): sqlglot keeps the quotes
  of the quoted literals ``'T'``/``'Z'``, maps ``'Z'`` to ``%z`` and has no ``SSS``. ``KfSpark`` maps
  the literals to themselves and ``SSS`` to DuckDB's milliseconds (``%g``), giving
  ``%Y-%m-%dT%H:%M:%S.%gZ``, the text Spark prints.
- ``format_number(x, d)`` (the impact queries' seconds, ``1,234.568``) passes through untranslated
  and DuckDB has no such function: it becomes ``format('{:,.df}', CAST(x AS DOUBLE))``.

Everything else these queries use (``concat`` to ``||``, ``evidence[0]`` to 1-based indexing,
``LEFT ANTI JOIN``, ``min_by``, ``collect_set``, ``timestampadd``, ``RLIKE``) sqlglot translates
itself; ``tests/expectations/test_dialects.py`` transpiles every query, and the differential
tests compare DuckDB's results with Spark's. ``RLIKE`` is Java regex on Spark and RE2 on DuckDB:
a look-around or back-reference would differ, and only the differential tests would show it.
"""

from __future__ import annotations

from typing import ClassVar

import sqlglot
import sqlglot.expressions as exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.dialects.spark import Spark


class KfSpark(Spark):
    """Spark SQL as the custom expectations write it: sqlglot's Spark with Java's quoted date-format literals."""

    TIME_MAPPING: ClassVar[dict[str, str]] = {**Spark.TIME_MAPPING, "SSS": "%f_three", "'T'": "T", "'Z'": "Z"}


def _format_number(node: exp.Expression) -> exp.Expression:
    """Spark ``format_number(x, d)`` -> DuckDB ``format('{:,.df}', CAST(x AS DOUBLE))``: ``1,234.568`` in both."""
    if isinstance(node, exp.Anonymous) and node.name.upper() == "FORMAT_NUMBER":
        value, digits = node.expressions
        pattern = exp.Literal.string(f"{{:,.{int(digits.name)}f}}")
        return exp.func("format", pattern, exp.cast(value, "DOUBLE"))
    return node


def spark_to_duckdb(sql: str) -> str:
    """One Spark-SQL query of ``custom`` as DuckDB SQL."""
    tree = sqlglot.parse_one(sql, read=KfSpark)
    return tree.transform(_format_number).sql(dialect=DuckDB)


__all__ = ["KfSpark", "spark_to_duckdb"]
