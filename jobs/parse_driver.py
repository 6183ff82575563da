"""The parse job's work in the driver alone, for a local run that fits it (``jobs/engine.py``): the same tables, no JVM.

On a small input (the bundled sample: 584 lines) the Spark parse job's cost is Spark's, not the
parsing: a session, a listing, one job to parse and stage, three to move and reshape the tables and
three to summarize them (bench/RESULTS.md, "The driver engine"). Here each file is parsed by the
function a Spark worker runs on it (``local_splits.parse_split``: one split per file), its events are
written by the workers' own writer (``events_writer``: the same ``part-<hash>.parquet`` per input
file), and the quarantine and files tables get the rows and types Spark's writer gives them
(``parse_job.quarantine_of``, ``files_of``). The summary is ``parse_job.summary_of`` of the same
counts. ``tests/jobs/test_parse_driver.py`` holds the two engines' tables equal.

A large input is parsed on every core (``parse_pool``): its large plain files in byte-range splits, each
split parsed and its events written by a worker process (``parse_and_write``), the small rows combined here
in the splits' order, what needs a whole file settled across its splits as the Spark job settles them
(``local_splits.settle``). ``tests/jobs/test_parse_pool.py`` holds the tables equal to the serial parse's.
"""

from __future__ import annotations

import functools
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kafka_forensics.core.errors import InputError, KafkaForensicsError
from kafka_forensics.core.tables import (
    EVENTS,
    FILE_COUNTS,
    FILES,
    PARSE_TABLES,
    QUARANTINE,
)
from kafka_forensics.parsers.columnar import ROW_BY_ROW_BELOW
from kafka_forensics.parsers.records import ParseOptions

from .discovery import discover
from .events_writer import write_events
from .fs import absolute
from .local_splits import SPLIT_BYTES, Split, SplitFacts, parse_split, plan_splits, settle
from .local_splits import part_name as split_part
from .local_tables import write_table, write_text
from .parse_job import QUARANTINE_REASONS, ParseSummary, no_records, summary_of
from .parse_pool import POOL_MIN_PARSE_SECONDS, map_in_pool, pool_split_bytes, pool_workers

# Split size of the serial parse: a file is read whole up to the Spark job's split size (``local_splits.SPLIT_BYTES``,
# 64 MiB), larger plain files in splits of that size. A split's parse peaks at about 7 times its bytes (0.41 GB over
# the process's own for one 58 MB file of 172,357 simulated 2.4 TRACE lines), whatever the file's size: the driver's
# memory bound (``engine.fits_the_driver``) no longer grows with the lines, so neither may the parse's.
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


@dataclass(frozen=True)
class ParsedSplit:
    """What parsing one split leaves besides its events file (which whoever parsed it wrote): small rows."""

    file_row: dict  # the files table's row of these lines (a file cut in splits: one per split, summed later)
    quarantine: list[dict]
    per_type: dict[str, tuple[int, int]]  # event type -> records, out-of-order records
    facts: SplitFacts | None  # for ``local_splits.settle``: a split of a file cut in several, else None


def parse_and_write(split: Split, options: ParseOptions, events_dir: str) -> ParsedSplit:
    """Parse one split and write its events to ``events_dir`` (in this process or a pool's worker)."""
    result = parse_split(split, options)
    write_events(result.events.to_batches(), events_dir, split.uri, split_part(split.uri, split.index))
    per_type: dict[str, tuple[int, int]] = {}
    _count_types(result.events, per_type)
    facts = None
    if split.count > 1:
        facts = SplitFacts(
            split.uri,
            split.display,
            split.index,
            split.count,
            tuple(result.owners),
            result.unowned,
            result.first_ts,
            result.max_ts,
        )
    return ParsedSplit(_file_row(result.summary), result.quarantine, per_type, facts)


def parse_in_driver(
    inputs: list[str],
    out_dir: str,
    options: ParseOptions,
    *,
    scratch: bool = False,
    pool_min_seconds: float = POOL_MIN_PARSE_SECONDS,
    split_bytes: int | None = None,
) -> ParseSummary:
    """``parse_job.run_parse`` without Spark: ``events/``, ``quarantine/``, ``files/`` and
    ``parse_summary.json`` under the local directory ``out_dir`` (relative: to this process's working
    directory, ``fs.absolute``, as the Spark job resolves it). ``scratch``: ``out_dir`` is a temporary
    directory the caller deletes, so an input without records is not told to look at its quarantine.

    An input whose serial parse would take ``pool_min_seconds`` or more (``parse_pool.pool_workers``) is
    parsed in a pool of processes, its large plain files in splits; the tables are the serial parse's.
    ``split_bytes``: the split size (default: ``local_splits.SPLIT_BYTES`` serially, ``parse_pool.pool_split_bytes`` in a pool).
    The pool's processes import the caller's main module, as ``multiprocessing`` does: a script that calls this
    guards its top level with ``if __name__ == "__main__":``."""
    notes: list[str] = []
    files = discover(None, inputs, notes)
    out = Path(absolute(out_dir))
    staging = out / "_staging_events"
    shutil.rmtree(staging, ignore_errors=True)
    paths = {f.uri: path_of(f.uri) for f in files}
    workers = pool_workers(list(paths.values()), ROW_BY_ROW_BELOW, pool_min_seconds)
    try:
        if split_bytes is None:
            split_bytes = SPLIT_BYTES if workers == 1 else pool_split_bytes(sum(f.size for f in files), workers)
        if options.use_lark:  # plain Lark (--lark) reads whole files, row by row, as the Spark job does
            split_bytes = WHOLE_FILES
        splits = plan_splits(files, paths, options, split_bytes)
        parse = functools.partial(parse_and_write, options=options, events_dir=str(staging))
        if workers == 1 or len(splits) == 1:
            parsed = [parse(split) for split in splits]
        else:
            parsed = map_in_pool(parse, splits, min(workers, len(splits)), cost=lambda s: s.end - s.start)
        added = settle([p.facts for p in parsed if p.facts is not None], str(staging))
    except KafkaForensicsError:
        raise
    except OSError as err:
        raise InputError(f"cannot read the input: {err}") from err
    per_type: dict[str, tuple[int, int]] = {}
    for split, one in zip(splits, parsed):
        counts = one.per_type
        if added.get(split.display):  # flags settled across splits: count this split's file as it now is
            counts = _types_in(staging / split_part(split.uri, split.index))
        for event_type, (n, o) in counts.items():
            before = per_type.get(event_type, (0, 0))
            per_type[event_type] = (before[0] + n, before[1] + o)
    quarantine = [row for one in parsed for row in one.quarantine]
    file_rows = _file_rows([one.file_row for one in parsed], added)
    for table in PARSE_TABLES:
        shutil.rmtree(out / table, ignore_errors=True)
    if any(staging.glob("part-*.parquet")):
        staging.rename(out / EVENTS)
    else:
        shutil.rmtree(staging, ignore_errors=True)
        write_table(out, EVENTS, [])
    write_table(out, QUARANTINE, quarantine)
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


def _file_rows(split_rows: list[dict], added_out_of_order: dict[str, int]) -> list[dict]:
    """The files table: one row per file, in ``source_file`` order, a file's splits summed as the Spark job
    sums them (``parse_job.files_of``: counters summed over non-null values, the first split's dialect,
    compressed if any is, the first read error) plus the out-of-order flags settled across its splits."""
    by_file: dict[str, dict] = {}
    for row in split_rows:
        merged = by_file.get(row["source_file"])
        if merged is None:
            by_file[row["source_file"]] = dict(row)
            continue
        for key in FILE_COUNTS:
            if row[key] is not None:
                merged[key] = row[key] if merged[key] is None else merged[key] + row[key]
        merged["compressed"] = merged["compressed"] or row["compressed"]
        merged["read_error"] = merged["read_error"] or row["read_error"]
    for display, added in added_out_of_order.items():
        if by_file[display]["out_of_order"] is not None:
            by_file[display]["out_of_order"] += added
    return sorted(by_file.values(), key=lambda r: r["source_file"])


def _types_in(events_file: Path) -> dict[str, tuple[int, int]]:
    """Records and out-of-order records per event type of one events file (none if it was not written)."""
    per_type: dict[str, tuple[int, int]] = {}
    if events_file.exists():
        _count_types(pq.read_table(events_file, columns=["event_type", "ts_out_of_order"]), per_type)
    return per_type


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


__all__ = ["ParsedSplit", "parse_and_write", "parse_in_driver"]
