"""The report, built beside the check: only its last step, reading the verdict, needs the check done.

``ReportBeside`` (the driver engine): in a process of its own. Why: on the driver engine the check (GX's pandas engine) and the report (SQLFrame on DuckDB, plotly) are Python that
holds the GIL, so a report built in a thread beside the check took turns with it: on 998,821 simulated lines the
check's 5.9 s and the report's 6.6 s added up to about 11.5 s of ``analyze``'s 27 (2026-11-26). In its own process
the report runs on the other core. It reads only what the replay wrote and, last, the verdict: the process waits
for the check's signal (``ReportBeside.verdict_written``) just before it reads ``verdict.json``, as the thread did.

The process is forked from the pools' server (``process_pool``), never from this process (its Polars/pyarrow threads
may hold locks). Its error comes back as itself and is raised here; when the check fails, the process is ended.

``ReportThread`` (Spark): in another thread of this process, the same calls. Most of either stage is Spark's fixed
cost per query, on a JVM with two cores, so a thread is enough.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from kafka_forensics.core.errors import JobError

from .process_pool import server_context

# the report's whole result travels back through a pipe: (summary or error, seconds)
_OK, _FAILED = "ok", "failed"


def _build(out_dir: str, report_path: str, top_partitions: int, verdict_written: Any, results: Any) -> None:
    """In the report's process: ``build_report`` on this process's DuckDB, its result (or error) sent back."""
    began = time.monotonic()
    try:
        from .frames import duckdb_session
        from .report_job import build_report

        summary = build_report(
            duckdb_session(), out_dir, report_path, top_partitions=top_partitions, verdict_ready=verdict_written.wait
        )
        results.send((_OK, summary, time.monotonic() - began))
    except BaseException as err:  # raised again in the command's process
        results.send((_FAILED, err, time.monotonic() - began))
    finally:
        results.close()


class ReportBeside:
    """The report of ``out_dir`` being built in its own process, from its creation on."""

    def __init__(self, out_dir: str, report_path: str, top_partitions: int):
        context = server_context()
        self._verdict_written = context.Event()
        self._results, theirs = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_build,
            args=(out_dir, report_path, top_partitions, self._verdict_written, theirs),
            name="kafka-forensics-report",
            daemon=True,
        )
        self._process.start()
        theirs.close()

    def verdict_written(self) -> None:
        """The check is done (or failed): the report may read the verdict."""
        self._verdict_written.set()

    def result(self) -> tuple[Any, float]:
        """(``report_job.ReportSummary``, the report's seconds), once built; its error raised here."""
        try:
            status, value, seconds = self._results.recv()
        except EOFError:
            self._process.join()
            raise JobError(f"report: its process ended without a result (exit {self._process.exitcode})") from None
        self._process.join()
        if status == _FAILED:
            raise value
        return value, seconds

    def end(self) -> None:
        """End the report's process if it still runs (the command is ending with another error)."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()


class ReportThread:
    """The report of ``out_dir`` being built by ``spark`` in another thread, from its creation on (``ReportBeside``'s
    calls)."""

    def __init__(self, spark: Any, out_dir: str, report_path: str, top_partitions: int):
        self._checked = threading.Event()
        self._built: dict[str, Any] = {}
        # a daemon: when the check fails, the command ends with its error without waiting for the report
        self._thread = threading.Thread(
            target=self._build,
            args=(spark, out_dir, report_path, top_partitions),
            name="kafka-forensics-report",
            daemon=True,
        )
        self._thread.start()

    def _build(self, spark: Any, out_dir: str, report_path: str, top_partitions: int) -> None:
        from .report_job import build_report

        began = time.monotonic()
        try:
            self._built["report"] = build_report(
                spark, out_dir, report_path, top_partitions=top_partitions, verdict_ready=self._checked.wait
            )
        except BaseException as err:  # raised again in the command's thread
            self._built["error"] = err
        self._built["seconds"] = time.monotonic() - began

    def verdict_written(self) -> None:
        """The check is done: the report may read the verdict."""
        self._checked.set()

    def result(self) -> tuple[Any, float]:
        """(``report_job.ReportSummary``, the report's seconds), once built; its error raised here."""
        self._thread.join()
        if "error" in self._built:
            raise self._built["error"]
        return self._built["report"], self._built["seconds"]

    def end(self) -> None:
        """The check failed: the report is let go (a daemon thread; the command ends without waiting for it)."""
        self._checked.set()


__all__ = ["ReportBeside", "ReportThread"]
