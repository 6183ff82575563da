"""Log files on this machine, read by the Python workers themselves, large ones in byte-range splits.

Why: Spark's binaryFile source reads each file whole in the JVM and hands its bytes to a Python
worker (≈ 6-9 µs of JVM CPU per line, ``bench/RESULTS.md``), a worker then holds the whole file,
and a file over 2 GiB cannot be read at all. When the job runs on one machine (a ``local`` master)
and the inputs are local files, each task gets a small description of what to read instead, opens
the file itself and reads its range in pieces (``parsers.columnar.parse_range``): memory follows
the split size, not the file size.

A split is a nominal byte range ``[start, end)`` of a plain (not gzip, not a metadata dump) file
larger than ``SPLIT_BYTES``. Its task owns the lines from the first **record line** at or after
``start`` up to the first record line at or after ``end`` (the next task's start): a record's
continuation lines and joined message lines never cross a split, exactly as they never cross a
block of the columnar parse. Line numbers stay exact: the driver counts the newlines before each
nominal start once (one sequential read, no parsing) and each task counts the few up to its first
record line. The file's dialect is detected once by the driver from the file's first lines (as
``parse_file`` does) and given to every split.

Two facts need the whole file, and the driver settles them after the parse (``settle``), from each
split's small summary: the file owner (the one broker the lines name, which fills rows that name
none: only if all splits together name exactly one) and ``ts_out_of_order`` (earlier than the
latest valid timestamp *before it in the file*: a split can only compare with its own earlier
lines, so a split whose first timestamp is earlier than the latest of the splits before it gets
the rest of its flags then). Both rewrite only the events files of the splits they change, which
in ordinary logs (one broker per file named in its path, time moving forward) is none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from kafka_forensics.core.tables import EVENT_FIELDS, EVENTS_SCHEMA
from kafka_forensics.parsers.columnar import (
    SplitResult,
    fill_owner,
    head_texts,
    parse_file_columnar,
    parse_range,
    record_boundary,
)
from kafka_forensics.parsers.columnar_plan import columnar_plan
from kafka_forensics.parsers.metadata_dump import looks_like_metadata_dump
from kafka_forensics.parsers.reader import GZIP_MAGIC
from kafka_forensics.parsers.records import COL, ParseOptions, file_dialect

from .events_writer import part_name as file_part_name

SPLIT_BYTES = 64 << 20  # a plain file larger than this is parsed in splits of about this size
SPLIT_CONF = "spark.kafka_forensics.split_bytes"
PIECE = 8 << 20  # bytes read at a time
HEAD = 1 << 20  # bytes read to decide whether a file is plain text (and to detect its dialect)


@dataclass(frozen=True)
class Split:
    uri: str  # the file as listed (names its events files)
    display: str  # the file as findings cite it
    path: str  # the local path the worker opens
    index: int
    count: int  # splits of this file (1: the task reads the whole file and settles everything)
    start: int  # nominal byte range
    end: int
    newlines_before: int  # newlines in the file before ``start``
    dialect: str | None  # None: detected by the task (a one-split file)


def plan_splits(files: list, paths: dict[str, str], options: ParseOptions, split_bytes: int) -> list[Split]:
    """The splits of every file (``paths``: local path of each file's URI)."""
    splits: list[Split] = []
    for f in files:
        path = paths[f.uri]
        size = Path(path).stat().st_size
        if size <= split_bytes or not _plain(path):
            splits.append(Split(f.uri, f.display, path, 0, 1, 0, size, 0, None))
            continue
        starts = list(range(0, size, split_bytes))
        counts = _newlines_per_range(path, starts, size)
        dialect = file_dialect(options, _file_head_texts(path, options))
        before = np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()
        for k, start in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else size
            splits.append(Split(f.uri, f.display, path, k, len(starts), start, end, int(before[k]), dialect))
    return splits


def _plain(path: str) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(HEAD)
    return head[:2] != GZIP_MAGIC and not looks_like_metadata_dump(head)


def _newlines_per_range(path: str, starts: list[int], size: int) -> list[int]:
    counts = []
    with open(path, "rb") as handle:
        for k, start in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else size
            handle.seek(start)
            left, count = end - start, 0
            while left > 0:
                piece = handle.read(min(PIECE, left))
                if not piece:
                    break
                count += piece.count(b"\n")
                left -= len(piece)
            counts.append(count)
    return counts


def _file_head_texts(path: str, options: ParseOptions) -> Iterator[str]:
    """The file's first lines for dialect detection (``parse_file`` reads the same ones)."""

    def pieces() -> Iterator[bytes]:
        with open(path, "rb") as handle:
            while piece := handle.read(PIECE):
                yield piece

    return head_texts(pieces(), options)


# ---- in the worker ----------------------------------------------------------------------------------


def parse_split(split: Split, options: ParseOptions) -> SplitResult:
    """One split's rows (a one-split file: the whole file, owner settled)."""
    if split.count == 1:
        return parse_file_columnar(Path(split.path).read_bytes(), split.display, options)
    assert split.dialect is not None
    plan = columnar_plan(split.dialect, options.layout)
    with open(split.path, "rb") as handle:
        size = handle.seek(0, 2)
        first, first_line_no = _line_start(handle, split.start, split.newlines_before)
        stop, _ = _line_start(handle, split.end, 0) if split.end < size else (size, 0)
        begin, skipped = _record_start(handle, first, stop, size, plan, options)
        if begin is None:  # no record line in this split's range: the one before reads on
            return parse_range(iter(()), split.display, options, split.dialect, first_line_no, whole_file=False)
        return parse_range(
            _pieces(handle, begin, stop, size, plan, options),
            split.display,
            options,
            split.dialect,
            first_line_no + skipped,
            whole_file=False,
        )


def _line_start(handle, offset: int, newlines_before: int) -> tuple[int, int]:
    """(first line start at or after ``offset``, its line number given the newlines before ``offset``)."""
    if offset == 0:
        return 0, 1
    handle.seek(offset - 1)
    position = offset - 1
    while piece := handle.read(1 << 16):
        at = piece.find(b"\n")
        if at >= 0:
            start = position + at + 1
            return start, newlines_before + 1 + (1 if start > offset else 0)
        position += len(piece)
    return position, newlines_before + 1


def _find_record(handle, position: int, limit: int, size: int, plan, options: ParseOptions) -> tuple[int | None, int]:
    """(the first record line starting in [position, limit), or None; the newlines before it from
    ``position``). ``position`` is a line start; the file is read in windows of whole lines."""
    skipped = 0
    width = PIECE
    while position < limit:
        handle.seek(position)
        window = handle.read(min(width, size - position))
        found = record_boundary(window, 0, plan, options)
        if found is not None:
            if position + found >= limit:
                return None, 0
            return position + found, skipped + window.count(b"\n", 0, found)
        last = window.rfind(b"\n")
        if position + len(window) >= size:
            return None, 0
        if last < 0:  # one line longer than the window: read a wider one
            width *= 2
            continue
        skipped += window.count(b"\n", 0, last + 1)
        position += last + 1
        width = PIECE
    return None, 0


def _record_start(handle, start: int, stop: int, size: int, plan, options: ParseOptions) -> tuple[int | None, int]:
    """(the first record line starting in [start, stop) or None, newlines between ``start`` and it)."""
    if start == 0:
        return 0, 0
    return _find_record(handle, start, stop, size, plan, options)


def _pieces(handle, begin: int, stop: int, size: int, plan, options: ParseOptions) -> Iterator[bytes]:
    """The bytes from ``begin`` to the first record line at or after ``stop`` (or the end)."""
    end, _ = _find_record(handle, stop, size, size, plan, options) if stop < size else (None, 0)
    end = size if end is None else end
    handle.seek(begin)
    position = begin
    while position < end:
        piece = handle.read(min(PIECE, end - position))
        if not piece:
            return
        position += len(piece)
        yield piece


# ---- after the job, in the driver ------------------------------------------------------------------------


def part_name(uri: str, index: int) -> str:
    """The events file of one split (the first split's is the whole file's ``events_writer.part_name``)."""
    return file_part_name(uri if index == 0 else f"{uri}#split={index}")


@dataclass
class SplitFacts:
    """What a split tells the driver (from its file row)."""

    uri: str
    display: str
    index: int
    count: int
    owners: tuple[int, ...]
    unowned: int
    first_ts: int | None
    max_ts: int | None


def settle(facts: list[SplitFacts], events_dir: str) -> dict[str, int]:
    """Fill the file owner and the out-of-order flags across the splits of each file, rewriting
    only the events files that change. Returns, per file (display), the flags it added."""
    added: dict[str, int] = {}
    by_file: dict[str, list[SplitFacts]] = {}
    for fact in facts:
        if fact.count > 1:
            by_file.setdefault(fact.uri, []).append(fact)
    for splits in by_file.values():
        splits.sort(key=lambda f: f.index)
        owners = {o for f in splits for o in f.owners}
        many = any(len(f.owners) > 1 for f in splits)
        owner = next(iter(owners)) if len(owners) == 1 and not many else None
        latest: int | None = None
        for fact in splits:
            later_than = latest if fact.first_ts is not None and latest is not None and fact.first_ts < latest else None
            fill = owner if owner is not None and fact.unowned else None
            if later_than is not None or fill is not None:
                flagged = _rewrite(Path(events_dir) / part_name(fact.uri, fact.index), fill, later_than)
                added[fact.display] = added.get(fact.display, 0) + flagged
            if fact.max_ts is not None:
                latest = fact.max_ts if latest is None else max(latest, fact.max_ts)
    return added


def _rewrite(path: Path, owner: int | None, later_than: int | None) -> int:
    if not path.exists():
        return 0
    table = pq.read_table(path, schema=EVENTS_SCHEMA)
    flagged = 0
    if owner is not None:
        table = fill_owner(table, owner)
    if later_than is not None:
        ts = pl.Series(table.column("ts")).cast(pl.Int64)
        old = pl.Series(table.column("ts_out_of_order"))
        new = old | (ts < later_than).fill_null(False)
        flagged = int(new.sum() - old.sum())
        table = table.set_column(COL["ts_out_of_order"], EVENT_FIELDS[COL["ts_out_of_order"]], new.to_arrow())
    temporary = path.with_name(f".{path.name}.settle.tmp")
    pq.write_table(pa.Table.from_batches(table.to_batches(), schema=EVENTS_SCHEMA), temporary, compression="snappy")
    temporary.replace(path)
    return flagged
