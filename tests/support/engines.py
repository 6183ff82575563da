"""The report on both engines (jobs/frames.py): Spark is the oracle, DuckDB through SQLFrame must equal it.

``assert_report_engines_agree`` builds the report of an output directory an existing fixture already wrote,
on Spark and on DuckDB, and compares the ``ReportData`` models field by field, the written HTML byte for
byte, ``analyze_job.summarize`` and ``replay_job.top_findings``. ``differences`` is the field-by-field differ:
it names every difference by its path, so a failure says where the engines part.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path
from typing import Any, Optional
from unittest import mock

from kafka_forensics.jobs import frames, report_job
from kafka_forensics.jobs.analyze_job import AnalyzeResult, summarize
from kafka_forensics.jobs.replay_job import top_findings
from kafka_forensics.reports.model import ReportData


def differences(spark_value: Any, duck_value: Any, where: str = "") -> list[str]:
    """Every difference between two values: dataclasses field by field, dicts key by key (and their order),
    sequences item by item (and their type), datetimes with their time zone, other values by type and value."""
    a, b = spark_value, duck_value
    if dataclasses.is_dataclass(a) and dataclasses.is_dataclass(b) and type(a) is type(b):
        out: list[str] = []
        for f in dataclasses.fields(a):
            out += differences(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=repr):
            if key not in a or key not in b:
                out.append(f"{where}[{key!r}]: only on {'Spark' if key in a else 'DuckDB'}")
            else:
                out += differences(a[key], b[key], f"{where}[{key!r}]")
        if not out and list(a) != list(b):
            out.append(f"{where}: key order {list(a)} (Spark) vs {list(b)} (DuckDB)")
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        out = [] if type(a) is type(b) else [f"{where}: {type(a).__name__} vs {type(b).__name__}"]
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} items (Spark) vs {len(b)} (DuckDB)")
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{where}[{i}]")
        return out
    if isinstance(a, datetime) and isinstance(b, datetime) and (a.tzinfo is None) != (b.tzinfo is None):
        return [f"{where}: {a!r} (Spark) vs {b!r} (DuckDB): one has no time zone"]
    if type(a) is not type(b):
        return [f"{where}: {a!r:.200} ({type(a).__name__}, Spark) vs {b!r:.200} ({type(b).__name__}, DuckDB)"]
    return [] if a == b else [f"{where}: {a!r:.300} (Spark) vs {b!r:.300} (DuckDB)"]


def _assert_same(spark_value: Any, duck_value: Any, what: str) -> None:
    found = differences(spark_value, duck_value)
    assert not found, f"{what} differs between Spark and DuckDB ({len(found)}):\n" + "\n".join(found[:40])


def built_report(session, out_dir: str, out_html: Path, top_partitions: int) -> ReportData:
    """``build_report`` on ``session``, writing ``out_html``; the model it rendered (a spy on ``render_report``, so
    the model and the page come from one run of the queries)."""
    with mock.patch.object(report_job, "render_report", wraps=report_job.render_report) as render:
        report_job.build_report(session, out_dir, str(out_html), top_partitions=top_partitions)
    assert render.call_count == 1
    return render.call_args.args[0]


def assert_report_engines_agree(
    spark, out: Path, tmp_path: Path, *, top_partitions: int = 20, spark_html: Optional[Path] = None
) -> None:
    """The report of ``out`` on DuckDB equals Spark's: the model field by field and the page byte for byte, then
    analyze's summary and the whole findings listing. ``spark_html``: the report a fixture already wrote with
    Spark for the same ``top_partitions`` (then only Spark's model is collected here)."""
    duck = frames.duckdb_session()
    out_dir = str(out)
    duck_data = built_report(duck, out_dir, tmp_path / "duckdb.html", top_partitions)
    if spark_html is None:
        spark_html = tmp_path / "spark.html"
        spark_data = built_report(spark, out_dir, spark_html, top_partitions)
    else:
        spark_data = report_job.collect_report_data(
            spark,
            out_dir,
            top_partitions=top_partitions,
            max_findings=report_job.MAX_FINDINGS,
            evidence_limit=report_job.EVIDENCE_LIMIT,
        )
    _assert_same(spark_data, duck_data, "the report's model")
    assert (tmp_path / "duckdb.html").read_bytes() == spark_html.read_bytes(), "the HTML differs between the engines"

    summaries = []
    for session in (spark, duck):
        result = AnalyzeResult(out_dir=out_dir, report_path="")
        summarize(session, result, 5)
        summaries.append((result.window, result.controllers, result.by_severity, result.top_findings))
    _assert_same(*summaries, "analyze's summary")
    listings = [top_findings(session, out_dir, 10_000) for session in (spark, duck)]
    assert listings[0], "no findings: the listing would compare nothing"
    _assert_same(*listings, "the findings listing")
