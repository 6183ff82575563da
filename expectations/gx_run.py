"""Running the suites with Great Expectations: one file-backed context per check, DataFrames in.

The data source is the caller's choice (``DATASOURCES``): ``spark`` validates Spark DataFrames on
the caller's SparkSession (GX's Spark data source, created with ``force_reuse_spark_context``);
``pandas`` validates pandas frames, the custom expectations' queries running on DuckDB
(``duckdb_metrics``). Either way the DataFrames are passed in as batch parameters, never re-read
by GX.
The context lives in a local directory (``root_dir``), results are kept in its validation store
and Data Docs are built from them into ``docs_dir``.

GX noise silenced here (a scheduler's log should show our lines, not GX's):
- anonymous usage statistics: ``GX_ANALYTICS_ENABLED=false`` (set in the package ``__init__``,
  before GX is imported) and ``analytics_enabled: false`` in the context;
- ``Calculating Metrics`` tqdm progress bars: ``progress_bars`` off in the context variables;
- GX's INFO/WARNING log records: the ``great_expectations`` logger is at ERROR inside ``quiet_gx``;
- "unexpected_rows_query should contain the {batch} parameter", which GX *prints* (stdout) for a
  query without ``{batch}``: every query here names ``{batch}`` (an unused ``kf_unused`` CTE where
  the query reads other views), so the message never appears;
- Python warnings raised from GX's own modules while it runs: ignored inside ``quiet_gx``
  (none seen with 1.24.1 here; a GX upgrade's deprecation notices must not reach a scheduler's log).
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from typing import TYPE_CHECKING, Iterator, Literal, Mapping

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame

DATASOURCE = "kafka_forensics"
DATASOURCES = ("spark", "pandas")  # GX data source kinds validate() takes
DOCS_SITE = "kafka_forensics"


@contextlib.contextmanager
def quiet_gx() -> Iterator[None]:
    """Silence GX's loggers and warnings for the duration of a check."""
    logger = logging.getLogger("great_expectations")
    saved = logger.level
    logger.setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"great_expectations(\..*)?")
        try:
            yield
        finally:
            logger.setLevel(saved)


@contextlib.contextmanager
def no_batch_fingerprint() -> Iterator[None]:
    """GX's pandas engine without its batch fingerprint, for the duration of a check.

    For every batch under 1e9 bytes (``memory_usage()``, 8 bytes per object column's value), GX's
    ``PandasExecutionEngine.get_batch_data_and_markers`` hashes the whole frame, every row, into a
    ``pandas_data_fingerprint`` batch marker (``hash_pandas_dataframe``, great_expectations 1.24.1
    ``execution_engine/pandas_execution_engine.py:387-389``). Nothing reads it; GX's Spark engine has no such
    marker, so the driver engine's validation results differ from Spark's only by it; and on 1 M replayed lines
    it was 59 % of the check's CPU (bench/RESULTS.md, "The driver engine at a million lines"). Its threshold,
    a module constant GX reads at each batch, is set to 0 here and restored after.
    ``tests/expectations/test_duckdb_metrics.py`` fails if GX renames it or stops reading it."""
    from great_expectations.execution_engine import pandas_execution_engine as engine

    saved = engine.HASH_THRESHOLD
    engine.HASH_THRESHOLD = 0
    try:
        yield
    finally:
        engine.HASH_THRESHOLD = saved


def open_context(root_dir: str, docs_dir: str):
    """A fresh file-backed GX context under ``root_dir`` whose one Data Docs site is ``docs_dir``."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="file", project_root_dir=root_dir)
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    context.variables.analytics_enabled = False
    context.variables.save()
    for site in list(context.get_site_names()):
        context.delete_data_docs_site(site)
    context.add_data_docs_site(
        DOCS_SITE,
        {
            "class_name": "SiteBuilder",
            "show_how_to_buttons": False,
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": os.path.abspath(docs_dir)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        },
    )
    return context


def ephemeral_context():
    """An in-memory context (tests of single expectations: nothing written)."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    context.variables.analytics_enabled = False
    return context


def _data_source(context, kind: Literal["spark", "pandas"]):
    if kind == "spark":
        return context.data_sources.add_or_update_spark(DATASOURCE, force_reuse_spark_context=True)
    if kind == "pandas":
        from . import duckdb_metrics  # noqa: F401  (registers the custom expectations' metrics on pandas)

        return context.data_sources.add_or_update_pandas(DATASOURCE)
    raise ValueError(f"unknown GX data source {kind!r}: one of {', '.join(DATASOURCES)}")


def validate(
    context,
    suite_name: str,
    table: str,
    df: DataFrame | pd.DataFrame,
    expectations: list,
    evidence_columns: list[str] | None = None,
    datasource: Literal["spark", "pandas"] = "spark",
) -> dict:
    """Validate ``df`` against ``expectations`` as suite ``suite_name``; the result as a JSON dict.

    ``evidence_columns``: columns GX reports for the first offending rows of its built-in column
    expectations (``partial_unexpected_index_list``), e.g. ``source_file, line_no``.
    ``datasource``: ``spark`` for a Spark DataFrame, ``pandas`` for a pandas one (inside
    ``duckdb_metrics.using(connection)``).
    """
    import great_expectations as gx

    source = _data_source(context, datasource)
    try:
        asset = source.get_asset(table)
    except LookupError:
        asset = source.add_dataframe_asset(name=table)
    try:
        batch = asset.get_batch_definition(table)
    except (LookupError, KeyError):
        batch = asset.add_batch_definition_whole_dataframe(table)
    # copies without an id: an expectation object may be validated in more than one suite
    fresh = [e.copy(update={"id": None}) for e in expectations]
    suite = context.suites.add_or_update(gx.ExpectationSuite(name=suite_name, expectations=fresh))
    definition = context.validation_definitions.add_or_update(
        gx.ValidationDefinition(name=suite_name, data=batch, suite=suite)
    )
    result_format: dict = {"result_format": "SUMMARY"}
    if evidence_columns:
        result_format["unexpected_index_column_names"] = list(evidence_columns)
    result = definition.run(batch_parameters={"dataframe": df}, result_format=result_format)
    return result.to_json_dict()


def build_docs(context) -> None:
    context.build_data_docs(site_names=[DOCS_SITE])


def validate_one(context, df: DataFrame, expectation, name: str = "single") -> dict:
    """Validate one expectation on ``df`` (the tests' way to make a custom expectation fire)."""
    return validate(context, name, name, df, [expectation])["results"][0]


def results_by_key(result: Mapping) -> dict[str, dict]:
    """kf_key -> that expectation's result, from a suite result dict."""
    return {
        r["expectation_config"]["meta"].get("kf_key", r["expectation_config"]["type"]): r for r in result["results"]
    }


__all__ = [
    "build_docs",
    "ephemeral_context",
    "no_batch_fingerprint",
    "open_context",
    "quiet_gx",
    "results_by_key",
    "validate",
    "validate_one",
]
