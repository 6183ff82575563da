"""The parse job's work in the driver alone, for a local run that fits it (``jobs/engine.py``): the same tables, no JVM.

On a small input (the bundled sample: 584 lines) the Spark parse job's cost is Spark's, not the
parsing: a session, a listing, one job to parse and stage, three to move and reshape the tables and
three to summarize them (bench/RESULTS.md, "The driver engine"). Here each file is parsed by the
function a Spark worker runs on it (``local_splits.parse_split``: one split per file), its events are
written by the workers' own writer (``events_writer``: the same ``part-<hash>.parquet`` per input
file), and the quarantine and files tables get the rows and types Spark's writer gives them
(``parse_job.quarantine_of``, ``files_of``). The summary is ``parse_job.summary_of`` of the same
counts. ``tests/jobs/test_parse_driver.py`` holds the two engines' tables equal.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from kafka_forensics.core.errors import InputError, KafkaForensicsError
from kafka_forensics.core.tables import (
    EVENTS,
    FILE_COUNTS,
    FILES,
    PARSE_TABLES,
    QUARANTINE,
)
from kafka_forensics.parsers.records import ParseOptions

from .discovery import InputFile, discover
from .events_writer import write_events
from .fs import absolute
from .local_splits import Split, parse_split, plan_splits
from .local_splits import part_name as split_part
from .local_tables import write_table, write_text
from .parse_job import QUARANTINE_REASONS, ParseSummary, no_records, summary_of

# Split size: every file is one split, read whole. Its parse peaks at about 7 times its bytes (0.41 GB over the
# process's own for one 58 MB file of 172,357 simulated 2.4 TRACE lines: 2.4 KB a line), under the replay's
# 3.1 KB a line that bounds what the driver takes (``engine.fits_the_driver``).
WHOLE_FILES = 1 << 62


def path_of(uri: str) -> str:
    """The path on disk of a local file as discovery names it (``file:<absolute path>``)."""
    return uri[len("file:") :] if uri.startswith("file:") else uri


def _file_row(summary: dict) -> dict:
    """A reader's summary as the files table holds it (``parse_job.files_of``: counters as longs,
    ``compressed`` a boolean)."""
    row = {k: None if summary.get(k) is None else int(summary[k]) for k in FILE_COUNTS}
    return {
        "source_file": summary["source_file"],
        **row,
        "dialect": summary.get("dialect"),
        "compressed": bool(summary.get("compressed")),
        "read_error": summary.get("read_error") or None,
    }


def parse_in_driver(inputs: list[str], out_dir: str, options: ParseOptions, *, scratch: bool = False) -> ParseSummary:
    """``parse_job.run_parse`` without Spark: ``events/``, ``quarantine/``, ``files/`` and
    ``parse_summary.json`` under the local directory ``out_dir`` (relative: to this process's working
    directory, ``fs.absolute``, as the Spark job resolves it). ``scratch``: ``out_dir`` is a temporary
    directory the caller deletes, so an input without records is not told to look at its quarantine."""
    notes: list[str] = []
    files = discover(None, inputs, notes)
    out = Path(absolute(out_dir))
    staging = out / "_staging_events"
    shutil.rmtree(staging, ignore_errors=True)
    quarantine: list[dict] = []
    file_rows: list[dict] = []
    per_type: dict[str, tuple[int, int]] = {}
    try:
        for split in _splits(files, options):
            result = parse_split(split, options)
            write_events(result.events.to_batches(), str(staging), split.uri, split_part(split.uri, split.index))
            _count_types(result.events, per_type)
            quarantine.extend(result.quarantine)
            file_rows.append(_file_row(result.summary))
    except KafkaForensicsError:
        raise
    except OSError as err:
        raise InputError(f"cannot read the input: {err}") from err
    for table in PARSE_TABLES:
        shutil.rmtree(out / table, ignore_errors=True)
    if any(staging.glob("part-*.parquet")):
        staging.rename(out / EVENTS)
    else:
        shutil.rmtree(staging, ignore_errors=True)
        write_table(out, EVENTS, [])
    write_table(out, QUARANTINE, quarantine)
    file_rows.sort(key=lambda r: r["source_file"])
    write_table(out, FILES, file_rows)
    reasons: dict[str, int] = {}
    for q in quarantine:
        reasons[q["reason"]] = reasons.get(q["reason"], 0) + 1
    top = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:QUARANTINE_REASONS]
    summary = summary_of(str(out), file_rows, per_type, len(quarantine), dict(top))
    summary.notes = notes
    write_text(out / "parse_summary.json", summary.to_json())
    if summary.records == 0:
        raise no_records(summary, len(files), None if scratch else str(out))
    return summary


def _splits(files: list[InputFile], options: ParseOptions) -> list[Split]:
    return plan_splits(files, {f.uri: path_of(f.uri) for f in files}, options, WHOLE_FILES)


def _count_types(events: pa.Table, per_type: dict[str, tuple[int, int]]) -> None:
    """Add one file's records and out-of-order records per event type."""
    if events.num_rows == 0:
        return
    grouped = (
        pa.table(
            {
                "t": events.column("event_type"),
                "o": pc.cast(pc.fill_null(events.column("ts_out_of_order"), False), pa.int64()),
            }
        )
        .group_by("t")
        .aggregate([("o", "count"), ("o", "sum")])
    )
    for event_type, n, o in zip(*(grouped.column(c).to_pylist() for c in ("t", "o_count", "o_sum"))):
        before = per_type.get(event_type, (0, 0))
        per_type[event_type] = (before[0] + n, before[1] + (o or 0))


__all__ = ["parse_in_driver"]
