"""The columnar parse: ``parse_file``'s rows, made column-wise over Arrow/Polars columns of lines.

Why: per line, ``parse_file`` spends most of its time in the Python around its regexes (a Line, a
LineResult, a dict of fields, a row list, then Arrow conversion). Here a block of lines is one
column and every step runs over all its lines at once:

1. **lines** (``columnar_reader``): numpy newline offsets, one column of Arrow string views over
   the bytes themselves (no copy);
2. **header**: the fast path's header regex, translated (exactly) for Polars, as its parts before
   and after the message: which lines are records and their timestamp, level, message and logger;
   on the lines it leaves, its second header, the same after a tooling prefix (docker compose, grep);
3. **identity prefix**: the ``ident`` expansions in grammar order, exact ones column-wise (and
   ``OTHER_IDENT``, whose lookahead is an exclusion, ``vector_regex``, on the rows it leaves), the
   others by the fast path's own regex on the rows they may match;
4. **template**: the first template (in the fast path's order) whose skeleton (literal text, digit
   runs as "0") the message starts with, from one column-wise alternation (one Polars pass per grammar,
   never one per template); then one C-level match per row, that template's own regex (else the
   alternation of the later templates of its bucket that share its start, which gives the bucket's
   answer: ``columnar_plan.later_rules``), which also captures the fields; the generic bucket
   only on rows one column-wise superset filter lets through, its candidate the first template
   whose translation accepts the row (one Polars pass per generic template);
5. **fields** (``columnar_assembly``, ``columnar_fields``): each field converted once over every
   row that has it, whatever its template; the columns merged in the order ``apply_fields`` writes
   them;
6. **rows**: broker, log kind, timestamps, event type as columns; one Arrow table.

Everything the column-wise steps are not certain about goes through the reference code: lines
that are not plain records (stack traces, joined messages, quarantine, non-ASCII) run through
``records.parse_lines``'s per-line decisions in file order; a record whose field text is unusual
is built by ``records._event_row``
from the fast path's ``classify``; any unexpected error makes the whole block fall back to
``records.parse_lines``. ``tests/parsers/test_columnar.py`` checks every row, all columns, against
``parse_file`` (and so against plain Lark) over every corpus we have.

A file is parsed in **blocks** that begin at a record line (``record_boundary``): a record's
continuation lines never cross a block, so blocks only share the latest timestamp (for
``ts_out_of_order``), the line numbering and, at the end, the file owner. The same holds for
**splits** of a large file parsed in parallel (``parse_split``): the caller supplies the first
line number, and the two facts that need the whole file (owner, latest earlier timestamp) are
returned for it to settle (``SplitResult``).
"""

from __future__ import annotations

import os

os.environ.setdefault("POLARS_MAX_THREADS", "1")  # parallelism comes from Spark tasks, one per core

import bisect
import re
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import is_not
from typing import Iterable, Iterator

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from kafka_forensics.core.eras import AUTO
from kafka_forensics.core.tables import EVENT_COLUMNS, EVENT_FIELDS, EVENTS_SCHEMA

from .columnar_assembly import Shape, assemble
from .columnar_plan import DIGIT_RUN, ColumnarPlan, columnar_plan
from .columnar_reader import LineBlock, line_bounds, read_block
from .gc_pause import cyclic_gc_paused
from .lines import CONTINUATION, NOT_A_RECORD, QUARANTINE, RECORD, LineResult
from .metadata_dump import looks_like_metadata_dump, parse_metadata_dump
from .reader import GZIP_MAGIC, _decompress
from .records import (
    _I32_MAX,
    _I32_MIN,
    COL,
    ORPHAN,
    OTHER,
    FileResult,
    LineContext,
    ParseOptions,
    _internal_error,
    _join_message_lines,
    _path_broker,
    _record_repairs,
    file_dialect,
    line_parser,
    log_kind,
    parse_file,
    parse_lines,
)

SMALL = 256  # fewer rows than this skip a column-wise filter (its fixed cost exceeds what it saves)
STRICT = False  # tests: raise instead of falling back to the reference loop for a whole block
BLOCK_BYTES = 16 << 20  # lines parsed together (a block ends at the first record line after this)
DETECT_LINES = 2000  # detect.SAMPLE_LINES: the lines dialect detection reads
_TYPES = {f.name: f.type for f in EVENT_FIELDS}
_MAP = _TYPES["attrs"]
_ROW_KEYS = ("records", "continuation_lines", "quarantined", "out_of_order", "ts_invalid")


@dataclass
class SplitResult:
    """Rows of one file, or of one split of it (``events`` in EVENTS_SCHEMA, in line order)."""

    events: pa.Table
    quarantine: list[dict] = field(default_factory=list)
    summary: dict = field(default_factory=dict)  # FileResult.summary's keys, for these lines
    owners: tuple[int, ...] = ()  # distinct brokers the lines name themselves (two at most)
    unowned: int = 0  # rows with no broker (the file owner, if any, fills them)
    first_ts: int | None = None  # the first valid timestamp (µs)
    max_ts: int | None = None  # the latest valid timestamp (µs)


class _Fallback(Exception):
    """The block is parsed by the reference loop instead (never seen by callers)."""


# ---- whole files ------------------------------------------------------------------------------------

# Below this many lines a plain file is parsed row by row (``parse_file``): the column-wise parse has
# a fixed cost per file, per grammar and per field (a few Polars queries each) that only a large file
# pays back. Measured in one run on the same lines (bench/RESULTS.md, issue 15, 2026-11-26, branch
# colreal2): on the generated 2.4 log the columnar parse is 0.21x the row-by-row path at 200 lines,
# 1.21x at 3,000 and 1.93x at 10,000; on the real corpus mixed 0.28x, 0.91x and 1.40x (crossovers near
# 2,500 and 3,500 lines; between those and 5,000 it would gain about 10 % at most). The rows are the
# same either way (tests/parsers/test_columnar.py runs the column-wise path on small inputs too).
ROW_BY_ROW_BELOW = 5_000


def parse_file_columnar(
    data: bytes, source_file: str, options: ParseOptions | None = None, row_by_row_below: int = ROW_BY_ROW_BELOW
) -> SplitResult:
    """``parse_file(data, source_file, options)``, as one Arrow table of events; a plain file of fewer
    than ``row_by_row_below`` lines, and ``--lark``, go through ``parse_file`` itself."""
    options = options or ParseOptions()
    small = data[:2] != GZIP_MAGIC and data.count(b"\n") < row_by_row_below
    if options.use_lark or small:  # --lark: the plain-Lark reference (comparisons, benchmarks)
        reference = parse_file(data, source_file, options)
        return SplitResult(rows_table(reference.rows), reference.quarantine, reference.summary)
    with cyclic_gc_paused():
        if looks_like_metadata_dump(data):
            owner = _path_broker(re.compile(options.broker_from_path), source_file)
            rows, quarantine, summary = parse_metadata_dump(data, source_file, owner, options.max_line_bytes)
            return SplitResult(rows_table(rows), quarantine, summary)
        compressed, read_error = False, None
        if data[:2] == GZIP_MAGIC:
            compressed = True
            data, read_error = _decompress(data)
        dialect = file_dialect(options, head_texts(_chunks(data), options))
        result = parse_range(iter([data]), source_file, options, dialect, 1, whole_file=True)
        result.summary["compressed"] = compressed
        result.summary["read_error"] = read_error
        if read_error:
            last = result.summary["lines_read"]
            ctx = LineContext.of(source_file, dialect, options)
            result.quarantine.append(ctx.quarantine_row(last + 1, "", read_error))
            result.summary["lines_read"] += 1
            result.summary["quarantined"] += 1
        return result


def head_texts(pieces: Iterable[bytes], options: ParseOptions) -> Iterator[str]:
    """The readable lines' texts from the start of a file given in pieces, read as they are
    consumed (dialect detection reads the first ones only, as ``parse_file`` gives them)."""
    pending = b""
    line_no = 1
    source = iter(pieces)
    done = False
    while not done:
        piece = next(source, None)
        done = piece is None
        pending += piece or b""
        cut = len(pending) if done else pending.rfind(b"\n") + 1
        if cut <= 0:
            continue
        block = read_block(pending[:cut], line_no, options.max_line_bytes, final=done)
        pending = pending[cut:]
        line_no += len(block)
        yield from (t for t in block.texts() if t)


def _chunks(data: bytes, size: int = 1 << 20) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


# ---- a range of lines -------------------------------------------------------------------------------


def parse_range(
    pieces: Iterable[bytes],
    source_file: str,
    options: ParseOptions,
    dialect: str,
    first_line_no: int,
    whole_file: bool,
    last_ts: int | None = None,
) -> SplitResult:
    """Parse consecutive whole lines given as byte pieces (cut anywhere), in blocks that start at
    record lines. ``whole_file``: these are all the lines of the file, so the file owner is filled
    in here; otherwise the caller settles it across splits (``fill_owner``)."""
    ctx = LineContext.of(source_file, dialect, options)
    plan = columnar_plan(dialect, options.layout)
    tables: list[pa.Table] = []
    quarantine: list[dict] = []
    counts = dict.fromkeys(_ROW_KEYS, 0)
    repairs = {"bom_lines": 0, "ansi_lines": 0, "control_lines": 0}
    lines_read = 0
    line_no = first_line_no
    first_ts = None
    pending, pos = b"", 0  # bytes read and not parsed yet: pending[pos:]
    source = iter(pieces)
    done = False
    while not done:
        piece = next(source, None)
        done = piece is None
        if piece:
            pending = pending[pos:] + piece if pos < len(pending) else piece
            pos = 0
        while pos < len(pending):
            cut = len(pending) if done else _block_end(pending, pos, plan, options)
            if cut is None:
                break  # read on: no record line to end a block at yet
            block = read_block(memoryview(pending)[pos:cut], line_no, options.max_line_bytes, final=done)
            pos = cut
            if not len(block):
                continue
            out = parse_block(block, ctx, plan, last_ts)
            tables.append(out.events)
            quarantine.extend(out.quarantine)
            for key in _ROW_KEYS:
                counts[key] += out.counts[key]
            repairs["bom_lines"] += int(block.bom.sum())
            repairs["ansi_lines"] += int((block.ansi > 0).sum())
            repairs["control_lines"] += int((block.control > 0).sum())
            if first_ts is None:
                first_ts = out.first_ts
            last_ts = out.last_ts
            lines_read += len(block)
            line_no += len(block)
    events = pa.concat_tables(tables) if tables else EVENTS_SCHEMA.empty_table()
    result = SplitResult(events, quarantine)
    result.summary = {
        "source_file": source_file,
        "lines_read": lines_read,
        **counts,
        **repairs,
        "dialect": dialect,
        "compressed": False,
        "read_error": None,
    }
    result.first_ts, result.max_ts = first_ts, last_ts
    _owner_facts(result)
    if whole_file and len(result.owners) == 1 and result.unowned:
        result.events = fill_owner(result.events, result.owners[0])
        result.unowned = 0
    return result


def _block_end(data: bytes, pos: int, plan: ColumnarPlan, options: ParseOptions) -> int | None:
    """Where the block that starts at ``pos`` ends: the first record line at least BLOCK_BYTES on
    (None: ``data`` has none yet)."""
    if len(data) - pos < BLOCK_BYTES:
        return None
    at = data.find(b"\n", pos + BLOCK_BYTES - 1)
    if at < 0:
        return None
    return record_boundary(data, at + 1, plan, options)


def record_boundary(data: bytes, start: int, plan: ColumnarPlan, options: ParseOptions) -> int | None:
    """Offset of the first line starting at or after ``start`` (itself a line start) that is a
    record by the column-wise header alone: nothing before it can attach to anything after it.
    None if there is none among the whole lines of ``data``."""
    last = data.rfind(b"\n")
    window = 1 << 16  # a record line is usually among the first few: read on in doubling windows
    while start <= last:
        end = data.rfind(b"\n", start, min(start + window, last + 1)) if start + window <= last else last
        if end < start:
            end = data.find(b"\n", start)
        block = read_block(data[start : end + 1], 1, options.max_line_bytes, final=False)
        records = np.flatnonzero(_header_records(block.text, plan).to_numpy())
        if records.size:
            buf = np.frombuffer(data, np.uint8, count=end + 1 - start, offset=start)
            starts, _ = line_bounds(buf, final=False)
            return start + int(starts[records[0]])
        start, window = end + 1, window * 2
    return None


def fill_owner(events: pa.Table, owner: int) -> pa.Table:
    """Rows with no broker belong to the file's one writer (``records._fill_file_owner``)."""
    frame = pl.from_arrow(events.select(["broker", "broker_source"]))
    assert isinstance(frame, pl.DataFrame)
    missing = frame["broker"].is_null()
    if not missing.any():
        return events
    broker = frame["broker"].fill_null(owner).cast(pl.Int32).to_arrow()
    source = pl.Series(["file"] * len(frame)).zip_with(missing, frame["broker_source"]).to_arrow()
    events = events.set_column(COL["broker"], EVENT_FIELDS[COL["broker"]], broker)
    return events.set_column(COL["broker_source"], EVENT_FIELDS[COL["broker_source"]], source.cast(pa.string()))


def _owner_facts(result: SplitResult) -> None:
    events = result.events
    if not events.num_rows:
        return
    frame = pl.from_arrow(events.select(["broker", "broker_source"]))
    assert isinstance(frame, pl.DataFrame)
    owners = frame.filter(pl.col("broker_source") == "line")["broker"].unique().sort().head(2).to_list()
    result.owners = tuple(int(o) for o in owners if o is not None)
    result.unowned = int(frame["broker"].null_count())


# ---- one block ----------------------------------------------------------------------------------


@dataclass
class BlockOutput:
    events: pa.Table
    quarantine: list[dict]
    counts: dict
    first_ts: int | None
    last_ts: int | None


def parse_block(block: LineBlock, ctx: LineContext, plan: ColumnarPlan, last_ts: int | None) -> BlockOutput:
    """One block's rows (owner not filled), column-wise where certain, else by the reference."""
    try:
        return _Block(block, ctx, plan).run(last_ts)
    except Exception:  # anything unexpected: the reference loop decides every line of the block
        if STRICT:
            raise
        return _reference_block(block, ctx, last_ts)


def _reference_block(block: LineBlock, ctx: LineContext, last_ts: int | None) -> BlockOutput:
    result = FileResult()
    lines = [block.line(i) for i in range(len(block))]
    counts, last_ts = parse_lines(lines, ctx, result, last_ts)
    table = rows_table(result.rows)
    ts = pl.Series(table.column("ts")).cast(pl.Int64).drop_nulls()
    return BlockOutput(table, result.quarantine, counts, int(ts[0]) if len(ts) else None, last_ts)


class _Lines:
    """``block.line(i)`` as a sequence (what ``_join_message_lines`` reads)."""

    def __init__(self, block: LineBlock) -> None:
        self.block = block

    def __len__(self) -> int:
        return len(self.block)

    def __getitem__(self, i: int):
        return self.block.line(i)


class _Block:
    def __init__(self, block: LineBlock, ctx: LineContext, plan: ColumnarPlan) -> None:
        self.block, self.ctx, self.plan = block, ctx, plan
        self.quarantine: list[dict] = []
        self.counts = dict.fromkeys(_ROW_KEYS, 0)
        self.reference_rows: dict[int, list] = {}  # line index → row built by the reference
        self.prefixes: dict[int, str] = {}  # record line index → its tooling prefix (records that have one)
        self.stack: dict[int, list[str]] = {}  # record line index → its continuation texts
        self.stack_lines: dict[int, list[int]] = {}  # record line index → those lines' indices
        self.joined: dict[int, int] = {}  # record line index → message lines joined to it
        self.attached: dict[int, list[int]] = {}  # record line index → line indices it took

    # -- the steps --

    def run(self, last_ts: int | None) -> BlockOutput:
        block = self.block
        text = block.text
        header = _header_columns(text, self.plan)
        is_record = header["record"].to_numpy()
        records = np.flatnonzero(is_record)
        if "prefix" in header:
            prefix = header["prefix"]
            has = prefix.is_not_null().to_numpy()
            self.prefixes.update(zip(records[has].tolist(), prefix.filter(pl.Series(has)).to_list()))
        self._sequential(np.flatnonzero(~is_record), records)
        table = self._records(records, header)
        return self._finish(table, last_ts)

    def _sequential(self, others: np.ndarray, records: np.ndarray) -> None:
        """``parse_lines``'s decisions for every line the header left, in file order. A line no
        record header can start (column-wise, a superset of every header's start) is classified
        by the reference's own answer for such lines (continuation or not a record) without
        trying the headers one by one, after the others (``_headerless_lines``): it changes no
        state the others read."""
        ctx, block = self.ctx, self.block
        classify = ctx.classify
        auto = line_parser(AUTO, ctx.options.layout, False).primary  # as parse_lines
        record_start, tooling_prefix = auto.record_start, auto.line_prefix
        headerless = self._headerless(others)
        texts = dict(zip(others.tolist(), block.texts_at(others)))
        lines = _Lines(block)
        record_list = records.tolist()
        last_reference = -1
        skip_until = -1
        joined: list[tuple[int, int]] = []  # (first, last) lines joined to a record's message
        for i in np.setdiff1d(others, headerless, assume_unique=True).tolist():
            if i <= skip_until:
                continue
            text = texts[i]
            if text is None:
                line = block.line(i)
                self._quarantine(line.line_no, line.raw or "", line.problem or "unreadable line")
                continue
            parsed = classify(text)
            message_lines = 0
            if parsed.kind == QUARANTINE and record_start.match(text):
                parsed, message_lines = _join_message_lines(classify, record_start, tooling_prefix, lines, i, parsed)
            at = bisect.bisect_left(record_list, i) - 1
            current = max(record_list[at] if at >= 0 else -1, last_reference)
            if parsed.kind != RECORD:
                self._not_a_record(i, text, parsed, current)
                continue
            line = block.line(i)
            try:
                row = ctx.event_row(parsed, line)
            except Exception as err:
                self._quarantine(line.line_no, text, _internal_error("building the record of this line", err))
                continue
            self.reference_rows[i] = row
            if parsed.prefix:
                self.prefixes[i] = parsed.prefix
            last_reference = i
            if message_lines:
                self.joined[i] = message_lines
                self.counts["continuation_lines"] += message_lines
                self.attached.setdefault(i, []).extend(range(i + 1, i + 1 + message_lines))
                skip_until = i + message_lines
                joined.append((i + 1, skip_until))
        if headerless.size:
            self._headerless_lines(headerless, texts, records, joined)

    def _not_a_record(self, i: int, text: str, parsed: LineResult, current: int) -> None:
        """Line ``i`` is no record: a continuation of the record ``current`` (-1: none), or
        quarantined. The tooling prefix of ``current``, if it has one, may lead the line."""
        inner = self._prefix_led(current, text)
        if inner is not None:
            parsed = LineResult(CONTINUATION, message=inner)
        if parsed.kind == CONTINUATION:
            if current < 0:
                self._quarantine(int(self.block.line_no[i]), text, ORPHAN)
            else:
                self.counts["continuation_lines"] += 1
                self.stack.setdefault(current, []).append(parsed.message if parsed.message is not None else text)
                self.stack_lines.setdefault(current, []).append(i)
                self.attached.setdefault(current, []).append(i)
            return
        self._quarantine(int(self.block.line_no[i]), text, parsed.reason or "not a log record")

    def _prefix_led(self, current: int, text: str) -> str | None:
        """The rest of ``text`` after the tooling prefix of the record ``current``, where that rest is a
        continuation line (a stack line the tooling prefixed too: ``parse_lines``); else None.
        ``classify`` calls the rest a continuation where no header matches it and the continuation
        regex does; where ``record_start`` (every header's beginning) does not match, no header can,
        and the two regexes decide without the rest of ``classify``."""
        prefix = self.prefixes.get(current)
        if not prefix or not text.startswith(prefix):
            return None
        inner = text[len(prefix) :]
        fast = self.plan.fast.primary
        if fast.record_start.match(inner) is None:
            return inner if fast.continuation.match(inner) is not None else None
        return inner if self.ctx.classify(inner).kind == CONTINUATION else None

    def _headerless_lines(
        self, headerless: np.ndarray, texts: dict, records: np.ndarray, joined: list[tuple[int, int]]
    ) -> None:
        """``_not_a_record`` for the lines no header can start, column-wise: each one's record is
        the latest record line or reference row before it; its kind is the continuation regex's
        answer (``lines.FastLineParser._not_a_record``). Lines joined to a record's message are
        not lines of their own; a line after a record with a tooling prefix may be led by that
        prefix (``_prefix_led``)."""
        if joined:
            first, last = np.array(joined).T
            at = np.searchsorted(first, headerless, "right") - 1
            inside = (at >= 0) & (headerless <= last[np.maximum(at, 0)])
            headerless = headerless[~inside]
        if not headerless.size:
            return
        anchors = _union(records, np.fromiter(self.reference_rows, np.int64, len(self.reference_rows)))
        at = np.searchsorted(anchors, headerless) - 1
        current = np.where(at >= 0, anchors[np.maximum(at, 0)], -1)
        line_texts = [texts[i] for i in headerless.tolist()]
        continuation = self.plan.fast.primary.continuation.match
        is_continuation = np.fromiter((continuation(t) is not None for t in line_texts), bool, len(line_texts))
        if self.prefixes:  # after a record with a tooling prefix, the prefix may lead the line
            for k in np.flatnonzero(np.isin(current, list(self.prefixes))).tolist():
                inner = self._prefix_led(int(current[k]), line_texts[k])
                if inner is not None:
                    line_texts[k], is_continuation[k] = inner, True
        for k in np.flatnonzero(~is_continuation | (current < 0)).tolist():
            i, c = int(headerless[k]), int(current[k])
            parsed = LineResult(CONTINUATION) if is_continuation[k] else LineResult(QUARANTINE, reason=NOT_A_RECORD)
            self._not_a_record(i, line_texts[k], parsed, c)
        attach = np.flatnonzero(is_continuation & (current >= 0))
        if not attach.size:
            return
        self.counts["continuation_lines"] += int(attach.size)
        owners = current[attach]
        cuts = [*np.flatnonzero(owners[1:] != owners[:-1]) + 1, len(attach)]  # runs: lines ascend, so owners do
        start = 0
        for end in cuts:
            owner, run = int(owners[start]), attach[start:end]
            run_lines = headerless[run].tolist()
            run_texts = [line_texts[k] for k in run.tolist()]
            if owner in self.stack:  # lines the loop attached too: line order
                merged = sorted(zip([*self.stack_lines[owner], *run_lines], [*self.stack[owner], *run_texts]))
                self.stack_lines[owner] = [i for i, _ in merged]
                self.stack[owner] = [t for _, t in merged]
            else:
                self.stack[owner], self.stack_lines[owner] = run_texts, run_lines
            self.attached.setdefault(owner, []).extend(run_lines)
            start = end

    def _headerless(self, others: np.ndarray) -> np.ndarray:
        """The readable ASCII lines among ``others`` that no record header (of the dialect or of
        any era, ``parse_lines``'s join test) can start, by a column-wise superset filter."""
        starts = self.plan.record_starts
        if starts is None or len(others) < SMALL:
            return others[:0]
        text = self.block.text.gather(others)
        ascii_line = text.str.len_bytes() == text.str.len_chars()
        maybe = (text.str.contains(starts) | ~ascii_line).fill_null(True).to_numpy()
        return others[~maybe]

    def _quarantine(self, line_no: int, raw: str, reason: str) -> None:
        self.counts["quarantined"] += 1
        self.quarantine.append(self.ctx.quarantine_row(line_no, raw, reason))

    def _records(self, records: np.ndarray, header: dict) -> pa.Table | None:
        """The column-wise records; those it gives up on become reference rows."""
        if not records.size:
            return None
        typed = _Classifier(self.plan, header["body"]).run()
        give_up: list[int] = list(typed.give_up)
        kept = np.ones(len(records), bool)
        kept[give_up] = False
        rows = np.flatnonzero(kept)
        frame = None
        if rows.size:
            shapes, texts = typed.shapes_and_texts(rows)
            fields = assemble(len(rows), shapes, texts)
            columns, attrs_array = fields.columns, fields.attrs
            if not fields.keep.all():
                give_up.extend(rows[~fields.keep].tolist())
                mask = pl.Series(fields.keep)
                columns = {name: values.filter(mask) for name, values in columns.items()}
                attrs_array = attrs_array.filter(pa.array(fields.keep))
                rows = rows[fields.keep]
            if rows.size:
                frame = pl.DataFrame(
                    {
                        "_pos": pl.Series(rows, dtype=pl.UInt32),
                        "_template": pl.Series(typed.template[rows], dtype=pl.Int32),
                        **columns,
                    }
                )
        for r in give_up:
            i = int(records[r])
            line = self.block.line(i)
            parsed = self.ctx.classify(line.text)
            if parsed.kind != RECORD:
                raise _Fallback("a header-valid line is not a record")
            try:
                self.reference_rows[i] = self.ctx.event_row(parsed, line)
            except Exception as err:
                raise _Fallback("a record could not be built") from err
        if frame is None:
            return None
        return self._records_table(records, header, frame, attrs_array, typed)

    def _records_table(
        self, records: np.ndarray, header: dict, values: pl.DataFrame, attrs_array: pa.Array, typed: _Classifier
    ) -> pa.Table:
        ctx = self.ctx
        pos = values["_pos"]
        n = len(pos)
        every = n == len(header["body"])

        def common(name: str) -> pl.Series:
            return header[name] if every else header[name].gather(pos)

        ts_raw, level, logger, message = common("ts"), common("level"), common("logger"), common("body")
        line_prefix = common("prefix") if "prefix" in header else None
        positions = records[pos.to_numpy()]
        # broker: the line's own (broker, else controller_id), else its tooling prefix's path's, else the file's
        line_broker = values["broker"] if "broker" in values.columns else None
        controller = values["controller_id"] if "controller_id" in values.columns else None
        if line_broker is None:
            line_broker = controller
        elif controller is not None:
            line_broker = line_broker.zip_with(line_broker.is_not_null(), controller)
        if line_broker is None:
            line_broker = pl.repeat(None, n, dtype=pl.Int32, eager=True)
        has_line = line_broker.is_not_null()
        path = pl.repeat(ctx.path_broker, n, dtype=pl.Int64, eager=True)
        if line_prefix is not None:
            path = self._prefix_brokers(line_prefix).fill_null(path)
        broker = line_broker.cast(pl.Int64).fill_null(path)
        source = pl.repeat("line", n, dtype=pl.String, eager=True).zip_with(
            has_line, pl.repeat("path", n, dtype=pl.String, eager=True).zip_with(path.is_not_null(), _nulls(n))
        )
        # timestamps: per distinct second, as records._Clock does
        ts_text = ts_raw.to_arrow()
        seconds_text = pc.dictionary_encode(pc.utf8_slice_codeunits(ts_text, 0, 19))
        distinct = seconds_text.dictionary.to_pylist()
        for second in distinct:
            ctx.clock.micros(second + ",000")  # fills the clock's per-second cache
        seconds = pa.array([ctx.clock.cache[t][0] for t in distinct], pa.int64()).take(seconds_text.indices)
        millis = pc.utf8_slice_codeunits(ts_text, 20, 23).cast(pa.int64())
        ts = pc.add(pc.multiply(seconds, 1_000_000), pc.multiply(millis, 1000))
        problems = [ctx.clock.cache[t][1] for t in distinct]
        if any(problems):
            problem = pa.array(problems, pa.string()).take(seconds_text.indices)
            attrs_array = _append_attr(attrs_array, "ts_invalid", pl.Series(problem))
        # the names that follow from a line's logger and template: one per distinct one, then a take
        logger_text = logger.to_arrow()
        loggers = pc.dictionary_encode(logger_text)
        kinds = [ctx.kinds.setdefault(lg, log_kind(lg, ctx.source_file)) for lg in loggers.dictionary.to_pylist()]
        template_ids = values["_template"].to_numpy()
        which = pa.array(np.where(template_ids < 0, len(typed.templates), template_ids))
        template = pa.array([rule for rule, _ in typed.templates] + [None], pa.string()).take(which)
        event_types = [ctx.event_types[rule] for rule, _ in typed.templates] + [OTHER]
        event_type = pa.array(event_types, pa.string()).take(which)
        arrays: dict[str, pa.Array] = {
            "source_file": pa.repeat(pa.scalar(ctx.source_file, pa.string()), n),
            "line_no": pa.array(self.block.line_no[positions], pa.int64()),
            "broker": broker.cast(pl.Int32).to_arrow(),
            "broker_source": source.to_arrow(),
            "ts": ts,
            "ts_raw": ts_text,
            "level": level.to_arrow(),
            "logger": logger_text,
            "log_kind": pa.array(kinds, pa.string()).take(loggers.indices),
            "dialect": pa.repeat(pa.scalar(ctx.dialect, pa.string()), n),
            "template": template,
            "event_type": event_type,
            "attrs": attrs_array,
            "message": message.to_arrow(),
            "crlf": pa.array(self.block.crlf[positions], pa.bool_()),
        }
        if line_prefix is not None:
            arrays["line_prefix"] = line_prefix.to_arrow()
        for name in values.columns:
            if not name.startswith("_") and name != "broker":
                arrays[name] = values[name].to_arrow()
        return _table(arrays, n)

    def _prefix_brokers(self, prefixes: pl.Series) -> pl.Series:
        """The broker each tooling prefix names by the path pattern (``records._path_broker``), one
        lookup per distinct prefix. One outside Int32 is the reference's to report (``out_of_range``)."""
        ctx = self.ctx
        found = {p: _path_broker(ctx.pattern, p) for p in prefixes.drop_nulls().unique().to_list()}
        if any(b is not None and not _I32_MIN <= b <= _I32_MAX for b in found.values()):
            raise _Fallback("a tooling prefix names a broker outside Int32")
        return prefixes.replace_strict(found, default=None, return_dtype=pl.Int64)

    def _finish(self, columnar: pa.Table | None, last_ts: int | None) -> BlockOutput:
        if self.reference_rows:
            reference = rows_table([self.reference_rows[i] for i in sorted(self.reference_rows)])
            table = reference if columnar is None else pa.concat_tables([columnar, reference])
            order = pl.Series(table.column("line_no")).arg_sort()
            table = table.take(order.to_arrow())
        else:
            table = columnar if columnar is not None else EVENTS_SCHEMA.empty_table()
        n = table.num_rows
        index_of_line = table.column("line_no").to_numpy() - (self.block.line_no[0] if len(self.block) else 0)
        # continuation lines and joined message lines
        if self.stack or self.joined:
            stack: list[str | None] = [None] * n
            ncont = np.zeros(n, np.int32)
            for i in set(self.stack) | set(self.joined):
                row = int(np.searchsorted(index_of_line, i))
                texts = self.stack.get(i)
                if texts:
                    stack[row] = "\n".join(texts)
                ncont[row] = len(texts or ()) + self.joined.get(i, 0)
            table = table.set_column(COL["stack"], EVENT_FIELDS[COL["stack"]], pa.array(stack, pa.string()))
            table = table.set_column(
                COL["n_continuation"], EVENT_FIELDS[COL["n_continuation"]], pa.array(ncont, pa.int32())
            )
        # repairs of each record's lines
        if self.block.repaired:
            table = self._repairs(table, index_of_line)
        # timestamps out of order: earlier than the latest valid one before it in the file
        lowest = np.iinfo(np.int64).min
        ts_column = table.column("ts").cast(pa.int64())
        valid = ts_column.is_valid().to_numpy(zero_copy_only=False)
        ts = ts_column.fill_null(lowest).to_numpy()
        running = np.maximum.accumulate(np.concatenate([[lowest if last_ts is None else last_ts], ts]))
        before = running[:-1]
        out_of_order = valid & (ts < before) & (before != lowest)
        if out_of_order.any():
            table = table.set_column(
                COL["ts_out_of_order"], EVENT_FIELDS[COL["ts_out_of_order"]], pa.array(out_of_order)
            )
        new_last = int(running[-1]) if running[-1] != lowest else None
        self.counts["records"] += n
        self.counts["ts_invalid"] += int((~valid).sum())
        self.counts["out_of_order"] += int(out_of_order.sum())
        self.quarantine.sort(key=lambda q: q["line_no"])
        return BlockOutput(table, self.quarantine, self.counts, int(ts[valid][0]) if valid.any() else None, new_last)

    def _repairs(self, table: pa.Table, index_of_line: np.ndarray) -> pa.Table:
        block = self.block
        attrs = table.column("attrs").to_pylist()
        changed = False
        for row, i in enumerate(index_of_line.tolist()):
            lines = [i, *self.attached.get(i, [])]
            repairs = [False, 0, 0]
            for j in lines:
                repairs[0] = repairs[0] or bool(block.bom[j])
                repairs[1] += int(block.ansi[j])
                repairs[2] += int(block.control[j])
            if repairs[0] or repairs[1] or repairs[2]:
                holder: list = [None] * len(EVENT_COLUMNS)
                holder[COL["attrs"]] = dict(attrs[row]) if attrs[row] is not None else None
                _record_repairs(holder, repairs)
                attrs[row] = holder[COL["attrs"]]
                changed = True
        if not changed:
            return table
        return table.set_column(COL["attrs"], EVENT_FIELDS[COL["attrs"]], pa.array(attrs, _MAP))


# ---- the header, column-wise -------------------------------------------------------------------------


def _header_records(text: pl.Series, plan: ColumnarPlan) -> pl.Series:
    """Lines that are records by the column-wise header, with or without a tooling prefix (ASCII
    lines only: ``vector_regex``). A log collected through docker compose has no other records."""
    if plan.header is None:
        return pl.Series("record", np.zeros(len(text), bool))
    found = text.str.contains(plan.header.line)
    if plan.prefixed is not None:
        found = found | text.str.contains(plan.prefixed.line)
    ascii_line = text.str.len_bytes() == text.str.len_chars()
    return (found & ascii_line).fill_null(False).alias("record")


def _header_columns(text: pl.Series, plan: ColumnarPlan) -> dict:
    """The header values of the record lines (the record lines alone, in order).

    The parts before and after the message are read on every line, and say which lines are
    records without matching the whole line (whose free message in the middle makes that the
    costliest pass): the header's message is any text, so a line is a record where both parts
    match and do not overlap. Where they overlap, another reading of the part before could still
    leave room; such a line has no certain column-wise answer and the block falls back.

    The lines the plain header leaves that end as a header does are tried with a tooling prefix
    in front (``plan.prefixed``: docker compose, grep), as the fast path tries its headers in
    order; their ``prefix`` is a value too (null on the other records)."""
    header = plan.header
    if header is None or not len(text):
        record = _header_records(text, plan)
        empty = pl.Series([], dtype=pl.String)
        return {"record": record, "ts": empty, "level": empty, "body": empty, "logger": empty}
    before = text.str.extract_groups(header.before)
    after = text.str.extract_groups(header.after)
    start = before.struct.field("1").str.len_chars()
    end = after.struct.field("1").str.len_chars()
    length = text.str.len_chars()
    ascii_line = text.str.len_bytes() == length
    record = _parts_fit(start, end, length, ascii_line)
    columns = {role: before.struct.field(str(k)) for k, role in enumerate(header.before_roles, start=2)}
    columns.update({role: after.struct.field(str(k)) for k, role in enumerate(header.after_roles, start=2)})
    if plan.prefixed is not None:
        maybe = np.flatnonzero((~record & end.is_not_null() & ascii_line).fill_null(False).to_numpy())
        if maybe.size:
            prefixed = text.gather(maybe).str.extract_groups(plan.prefixed.before)
            fits = _parts_fit(
                prefixed.struct.field("1").str.len_chars(), end.gather(maybe), length.gather(maybe), None
            ).to_numpy()
            if fits.any():
                rows, mask = maybe[fits], pl.Series(fits)
                record = record.scatter(rows, True)
                start = start.scatter(rows, prefixed.struct.field("1").str.len_chars().filter(mask))
                for k, role in enumerate(plan.prefixed.before_roles, start=2):
                    found = prefixed.struct.field(str(k)).filter(mask)
                    columns[role] = columns.get(role, _nulls(len(text))).scatter(rows, found)
    record = record.alias("record")
    values: dict = {"record": record, **{role: column.filter(record) for role, column in columns.items()}}
    start, end, length = start.filter(record), end.filter(record), length.filter(record)
    values["body"] = text.filter(record).str.slice(start, length - start - end)
    return values


def _parts_fit(start: pl.Series, end: pl.Series, length: pl.Series, ascii_line: pl.Series | None) -> pl.Series:
    """Records: both parts found (on ASCII lines) and room between them for the message. Parts that
    overlap have no certain column-wise answer: the block falls back."""
    both = start.is_not_null() & end.is_not_null()
    if ascii_line is not None:
        both = both & ascii_line
    if (both & (start + end > length)).any():
        raise _Fallback("a header whose parts overlap")
    return (both & (start + end <= length)).fill_null(False)


# ---- identity prefix and template ----------------------------------------------------------------------


class _Sink:
    """The rows one template matched and their field texts (the capture groups of its fields)."""

    def __init__(self, template: int) -> None:
        self.template = template
        self.rows: list[int] = []
        self.fields: list[tuple] = []


class _Classifier:
    """Identity branch, template and field texts for every record row (index into ``body``)."""

    def __init__(self, plan: ColumnarPlan, body: pl.Series) -> None:
        self.plan, self.body = plan, body
        n = len(body)
        self.branch = np.full(n, -1, np.int32)  # ident branch; -1 none; -2 an opener no rule completes
        self.ident_texts: dict[int, tuple] = {}  # row → texts of its ident fields (Python-matched rows)
        self.ident_columns: dict[int, list[pl.Series]] = {}  # branch → its field texts (column-wise rows)
        self.rest: dict[int, str] = {}  # row → the message after its identity (Python-matched rows)
        self.rest_column = body
        self.template = np.full(n, -1, np.int32)  # index into ``templates``; -1 none
        self.templates: list[tuple[str, tuple[str, ...]]] = []  # (rule, roles)
        self._template_ids: dict[tuple, int] = {}
        self.matched: dict[int, tuple[list[int], list[tuple]]] = {}  # template → rows, field texts
        self.give_up: list[int] = []
        self.groups: dict[tuple[int, int], np.ndarray] = {}  # (branch, template) → rows

    def run(self) -> _Classifier:
        self._ident()
        self._templates()
        keep = np.ones(len(self.body), bool)
        keep[self.give_up] = False
        rows = np.flatnonzero(keep)
        key = self.branch[rows].astype(np.int64) * 1_000_000 + self.template[rows]
        order = np.argsort(key, kind="stable")
        keys, starts = np.unique(key[order], return_index=True)
        bounds = [*starts.tolist(), len(order)]
        for k, key_value in enumerate(keys.tolist()):
            branch, template = divmod(key_value, 1_000_000)
            if template >= 500_000:  # divmod of a negative template id
                branch, template = branch + 1, template - 1_000_000
            self.groups[(branch, template)] = rows[order[bounds[k] : bounds[k + 1]]]
        return self

    def _template_id(self, key: tuple, rule: str, roles: tuple[str, ...]) -> int:
        found = self._template_ids.get(key)
        if found is None:
            found = self._template_ids[key] = len(self.templates)
            self.templates.append((rule, roles))
        return found

    def _ident(self) -> None:
        plan, body = self.plan, self.body
        n = len(body)
        unresolved = np.ones(n, bool)
        prefix_length = np.zeros(n, np.int64)
        for step in plan.ident_steps:
            if not unresolved.any():
                break
            rows = np.flatnonzero(unresolved)
            subset = body.gather(rows) if rows.size < n else body
            if isinstance(step, int):  # an inexact branch: Python decides where it may match
                vector = plan.ident[step].vector
                maybe = (
                    subset.str.contains(vector.pattern).fill_null(False).to_numpy()
                    if vector
                    else np.ones(rows.size, bool)
                )
                unresolved[rows[maybe]] = False
                if vector is not None and vector.excluded is not None and maybe.sum() >= SMALL:
                    # exact where ``excluded`` does not match: those rows column-wise, the rest by Python
                    certain = maybe & ~subset.str.contains(vector.excluded).fill_null(False).to_numpy()
                    prefix_length[rows[certain]] = self._column_ident(
                        step, vector.pattern, rows[certain], subset.filter(pl.Series(certain))
                    )
                    maybe &= ~certain
                self._python_idents(rows[maybe], subset.filter(pl.Series(maybe)).to_list())
                continue
            groups = subset.str.extract_groups(step.pattern)
            whole = groups.struct.field("1")
            matched = whole.is_not_null().to_numpy()
            if not matched.any():
                continue
            hit = rows[matched]
            unresolved[hit] = False
            prefix_length[hit] = whole.filter(pl.Series(matched)).str.len_chars().to_numpy()
            for k, (marker, fields) in enumerate(zip(step.markers, step.fields)):
                branch_rows = groups.struct.field(str(marker)).is_not_null().to_numpy()
                if not branch_rows.any():
                    continue
                mask = pl.Series(branch_rows)
                self._column_branch(
                    step.first + k, rows[branch_rows], [groups.struct.field(str(g)).filter(mask) for g in fields]
                )
        self.rest_column = body.str.slice(pl.Series(prefix_length)) if prefix_length.any() else body
        # no identity: an opener no rule completes means no template (lines.FastLineParser)
        left = np.flatnonzero(unresolved)
        if left.size and plan.ident_opener is not None:
            subset = body.gather(left)
            maybe = subset.str.contains(plan.ident_opener.pattern).fill_null(False).to_numpy()
            opener = plan.fast.primary.ident_opener
            for r in left[maybe].tolist():
                if plan.ident_opener.exact or opener.match(body[r]):
                    self.branch[r] = -2

    def _column_ident(self, branch: int, pattern: str, rows: np.ndarray, texts: pl.Series) -> np.ndarray:
        """Branch ``branch`` and its field texts for the given rows (``texts`` their bodies), which
        its exact translation ``pattern`` matches. Returns the length of each one's identity."""
        groups = texts.str.extract_groups("^(" + pattern.removeprefix("^") + ")")  # group 1: the whole match
        roles = self.plan.ident[branch].roles
        self._column_branch(branch, rows, [groups.struct.field(str(c + 2)) for c in range(len(roles))])
        return groups.struct.field("1").str.len_chars().to_numpy()

    def _column_branch(self, branch: int, rows: np.ndarray, fields: list[pl.Series]) -> None:
        """Rows read column-wise as identity branch ``branch``, with its field texts (one column per field,
        in the rows' order)."""
        self.branch[rows] = branch
        columns = self.ident_columns.setdefault(branch, [_nulls(len(self.body)) for _ in fields])
        for column, values in zip(columns, fields):
            column.scatter(rows, values)

    def _python_idents(self, rows: np.ndarray, texts: list[str]) -> None:
        """Identity branch, field texts and the rest of the message of the given rows (``texts``
        their bodies), by the fast path's own ident regex (``lines.FastLineParser``)."""
        fast = self.plan.fast
        ident, opener = fast.primary.ident.match, fast.primary.ident_opener.match
        branch_of = {marker: b for b, marker in enumerate(sorted(fast.primary.ident_roles))}
        branches = []
        for r, text in zip(rows.tolist(), texts):
            m = ident(text)
            if m is None:
                branches.append(-2 if opener(text) else -1)
                continue
            marker = m.lastindex or 0  # a match of the alternation always closes a marker group
            _, numbers = fast._ident_plan[marker]
            branches.append(branch_of[marker])
            if not numbers:
                self.ident_texts[r] = ()
            elif len(numbers) == 1:
                self.ident_texts[r] = (m.group(numbers[0]),)
            else:
                self.ident_texts[r] = m.group(*numbers)
            self.rest[r] = text[m.end() :]
        self.branch[rows] = branches

    def _templates(self) -> None:
        """Per row, the fast path's template (``fastpath.match_template``): the bucket of the
        message's first word, then the generic bucket, grammar by grammar (the dialect's, then
        the all-eras retry). Column-wise passes (one per grammar and step, never one per template)
        only narrow the candidates; one C-level match per row decides and captures the fields."""
        pending = np.flatnonzero(self.branch != -2)
        if not pending.size:
            return
        rest = self.rest_column
        python_rest = self.rest
        if python_rest:
            rest = rest.clone().scatter(list(python_rest), pl.Series(list(python_rest.values()), dtype=pl.String))
        self.rest_column = rest
        texts = rest.to_list()
        sinks: dict[tuple[int, str], _Sink] = {}
        rows = pending.tolist()
        skeleton_text = _skeleton_text(rest, self.plan.skeleton_chars)
        for g, grammar in enumerate(self.plan.grammars):
            if not rows:
                break
            fast = grammar.fast
            if grammar.candidates is not None:
                rows = self._match_words(g, grammar, skeleton_text, rows, texts, sinks)
            if rows and fast.generic is not None:
                rows = self._match_generic(g, grammar, rest, rows, texts, sinks)
        for sink in sinks.values():
            for template, rows, fields in self._shapes(sink):
                self.template[rows] = template
                self.matched[template] = (rows, fields)

    def _shapes(self, sink: _Sink) -> Iterator[tuple[int, list[int], list[tuple]]]:
        """A template's rows as groups whose fields convert alike. A template whose alternatives
        repeat a field (each alternative has its own capture groups) is split by the groups a row
        filled: within one such group every field occurs once, in the order ``apply_fields``
        meets them on each of its rows."""
        rule, roles = self.templates[sink.template]
        if len(set(roles)) == len(roles):
            yield sink.template, sink.rows, sink.fields
            return
        shapes: dict[tuple[bool, ...], tuple[list[int], list[tuple]]] = {}
        for r, texts in zip(sink.rows, sink.fields):
            filled = tuple(map(is_not, texts, repeat(None)))  # per group, whether the row filled it
            rows, fields = shapes.setdefault(filled, ([], []))
            rows.append(r)
            fields.append(tuple(compress(texts, filled)))
        for filled, (rows, fields) in shapes.items():
            yield self._template_id((sink.template, filled), rule, tuple(compress(roles, filled))), rows, fields

    def _match_words(
        self, g: int, grammar, skeleton_text: pl.Series, rows: list[int], texts: list, sinks: dict
    ) -> list:
        """The word buckets. The first template (in the fast path's order) one of whose skeletons the
        message starts with comes from one column-wise alternation of the skeletons; its own regex
        is tried first, as it is usually the one; a row it rejects takes its bucket's alternation,
        whose earlier templates cannot match it (their skeletons do not). Returns the rows no
        word template matched."""
        column = np.asarray(rows)
        first = grammar.candidate_ids(skeleton_text.gather(column).str.extract(grammar.candidates, 0)).to_numpy()
        left = column[first < 0].tolist()
        candidates = np.flatnonzero(first >= 0)
        order = candidates[np.argsort(first[candidates], kind="stable")]
        ids, starts = np.unique(first[order], return_index=True)
        bounds = [*starts.tolist(), len(order)]
        retried = False
        for k, t in enumerate(ids.tolist()):
            template = grammar.word_templates[t]
            sink = self._sink(g, template.rule, template.roles, sinks)
            match = template.regex.match
            retry = []
            for r in column[order[bounds[k] : bounds[k + 1]]].tolist():
                m = match(texts[r])
                if m is None:
                    retry.append(r)
                    continue
                sink.rows.append(r)
                sink.fields.append(m.groups())
            if retry:
                retried = True
                left.extend(self._match_after(g, grammar, t, retry, texts, sinks))
        if retried:
            left.sort()
        return left

    def _match_after(self, g: int, grammar, t: int, rows: list[int], texts: list, sinks: dict) -> list[int]:
        """Rows template ``t`` was the candidate of and rejected: the later templates of its bucket
        that may still match decide (``GrammarPlan.after_bucket``); a row whose first word is not
        that bucket's takes its own bucket's alternation, as the fast path. Returns the rows no
        word template matched."""
        after, word, buckets = grammar.after_bucket(t), grammar.words[t], grammar.fast.buckets
        left = []
        for r in rows:
            text = texts[r]
            space = text.find(" ")
            first_word = text if space < 0 else text[:space]
            bucket = after if first_word == word else buckets[first_word]
            if bucket is None or not self._match_bucket(g, bucket, r, text, sinks):
                left.append(r)
        return left

    def _match_generic(self, g: int, grammar, rest: pl.Series, rows: list[int], texts: list, sinks: dict) -> list:
        """The generic bucket (templates that start with a value) on the rows no word template
        took. Its templates have no literal prefix to pick a candidate by, so (on enough rows) each
        template's column-wise translation, in order, picks it: a row's candidate is the first
        template whose translation (exact, or a superset) accepts it, so no earlier template can
        match it; its own regex confirms it, else the bucket's alternation decides. Returns the
        rows no generic template matched."""
        bucket = grammar.fast.generic
        if grammar.generic_filter is None or len(rows) < SMALL:
            return [r for r in rows if not self._match_bucket(g, bucket, r, texts[r], sinks)]
        column = np.asarray(rows)
        candidate = np.full(len(column), -1, np.int32)
        open_rows = np.flatnonzero(rest.gather(column).str.contains(grammar.generic_filter).fill_null(False).to_numpy())
        if open_rows.size:  # every template's translation in one Polars call: the first that accepts
            text = pl.col("rest")
            hits = (
                rest.gather(column[open_rows])
                .to_frame("rest")
                .select(
                    text.str.contains(t.vector.pattern).fill_null(False).alias(str(k))
                    for k, t in enumerate(grammar.generic_templates)
                )
                .to_numpy()
            )
            accepted = hits.any(axis=1)
            candidate[open_rows[accepted]] = hits.argmax(axis=1)[accepted]
        matched = np.zeros(len(column), bool)
        for k in np.unique(candidate[candidate >= 0]).tolist():
            template = grammar.generic_templates[k]
            sink = self._sink(g, template.rule, template.roles, sinks)
            match = template.regex.match
            for i in np.flatnonzero(candidate == k).tolist():
                r = rows[i]
                m = match(texts[r])
                if m is not None:
                    sink.rows.append(r)
                    sink.fields.append(m.groups())
                    matched[i] = True
                elif self._match_bucket(g, bucket, r, texts[r], sinks):
                    matched[i] = True
        return column[~matched].tolist()

    def _match_bucket(self, g: int, bucket, r: int, text: str, sinks: dict) -> bool:
        """Row ``r`` by one bucket's alternation, as ``fastpath.match_template``: True if it matched."""
        m = bucket.regex.match(text)
        if m is None:
            return False
        rule, roles, numbers = bucket.plan[m.lastindex]
        sink = self._sink(g, rule, roles, sinks)
        sink.rows.append(r)
        sink.fields.append(m.groups()[numbers[0] - 1 : numbers[-1]] if numbers else ())  # consecutive (group_numbers)
        return True

    def _sink(self, g: int, rule: str, roles: tuple[str, ...], sinks: dict) -> _Sink:
        sink = sinks.get((g, rule))
        if sink is None:
            sink = sinks[(g, rule)] = _Sink(self._template_id((g, rule), rule, roles))
        return sink

    def shapes_and_texts(self, rows: np.ndarray) -> tuple[list[Shape], dict[str, tuple[np.ndarray, pl.Series]]]:
        """For the given rows (sorted; their positions 0..n-1 are the assembly's rows): the shapes
        (rows of one identity branch and template, with their fields in line order), and per field
        the positions of the rows that have it and their texts."""
        position = np.full(len(self.body), -1, np.int64)
        position[rows] = np.arange(len(rows))
        parts: dict[str, list[tuple[np.ndarray, pl.Series | tuple]]] = {}
        branches = self.branch[rows]
        for b in np.unique(branches[branches >= 0]).tolist():
            mine = rows[branches == b]
            column_wise = self.ident_columns.get(b)
            by_python = [r for r in mine.tolist() if r in self.ident_texts] if self.ident_texts else []
            at = np.searchsorted(mine, by_python)
            for k, role in enumerate(self.plan.ident[b].roles):
                values = column_wise[k].gather(mine) if column_wise is not None else _nulls(len(mine))
                if by_python:  # the rows whose identity Python's regex read
                    values = values.scatter(at, pl.Series([self.ident_texts[r][k] for r in by_python], dtype=pl.String))
                parts.setdefault(role, []).append((position[mine], values))
        for t, (matched_rows, fields) in self.matched.items():
            _, roles = self.templates[t]
            if not roles:
                continue
            at = position[matched_rows]
            taken = at >= 0
            if not taken.all():
                fields = [f for f, ok in zip(fields, taken.tolist()) if ok]
                at = at[taken]
            for role, column in zip(roles, zip(*fields)):
                parts.setdefault(role, []).append((at, column))
        shapes = [
            Shape(position[group], self._roles(branch, template)) for (branch, template), group in self.groups.items()
        ]
        return shapes, {role: _joined(found) for role, found in parts.items()}

    def _roles(self, branch: int, template: int) -> tuple[str, ...]:
        ident = self.plan.ident[branch].roles if branch >= 0 else ()
        return ident + (self.templates[template][1] if template >= 0 else ())


def _skeleton_text(rest: pl.Series, chars: int) -> pl.Series:
    """The start of each message as the template skeletons read it (``digit_runs_as_zero``), at
    least ``chars`` characters of it where the message has them: a skeleton matches this where it
    matches the whole message so treated. Only the head of each message is rewritten (twice the
    skeleton length, then the whole message where its digit runs made that too short)."""
    head = rest.str.slice(0, 2 * chars).str.replace_all(DIGIT_RUN, "0")
    short = ((head.str.len_bytes() < chars) & (rest.str.len_bytes() > 2 * chars)).fill_null(False)
    if short.any():
        rows = np.flatnonzero(short.to_numpy())
        head = head.scatter(rows, rest.gather(rows).str.replace_all(DIGIT_RUN, "0"))
    return head


def _union(ascending: np.ndarray, more: np.ndarray) -> np.ndarray:
    """The distinct values of both, ascending: a stable sort of values nearly in order already (one side
    ascends, the other is a few values). ``np.union1d`` took 60x as long here (8.6 ms against 0.15 ms
    for 69,000 + 210 values, numpy 2.4)."""
    both = np.concatenate([ascending, more])
    both.sort(kind="stable")
    return both[np.concatenate([[True], both[1:] != both[:-1]])]


def _nulls(n: int) -> pl.Series:
    return pl.repeat(None, n, dtype=pl.String, eager=True)


def _joined(parts: list[tuple[np.ndarray, pl.Series | tuple]]) -> tuple[np.ndarray, pl.Series]:
    """One field's texts from several sources, in one column (with the positions they belong to)."""
    positions = np.concatenate([at for at, _ in parts]) if len(parts) > 1 else parts[0][0]
    if all(isinstance(values, tuple) for _, values in parts):
        texts = pl.Series([t for _, values in parts for t in values], dtype=pl.String)
    else:
        texts = pl.concat(
            [values if isinstance(values, pl.Series) else pl.Series(values, dtype=pl.String) for _, values in parts]
        )
    return positions, texts


# ---- rows → Arrow ----------------------------------------------------------------------------------


def rows_table(rows: list[list]) -> pa.Table:
    """Reference rows (lists in EVENT_COLUMNS order) as an Arrow table."""
    if not rows:
        return EVENTS_SCHEMA.empty_table()
    columns = list(zip(*rows))
    return pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(columns, EVENT_FIELDS)], schema=EVENTS_SCHEMA)


def _append_attr(attrs: pa.Array, key: str, values: pl.Series) -> pa.Array:
    """``attrs`` with ``key`` added last on the rows where ``values`` is not null."""
    if values.null_count() == len(values):
        return attrs
    rows = attrs.to_pylist()
    for i, value in enumerate(values.to_list()):
        if value is not None:
            rows[i] = [*(rows[i] or []), (key, value)]
    return pa.array(rows, _MAP)


def _table(arrays: dict[str, pa.Array], n: int) -> pa.Table:
    columns = []
    for f in EVENT_FIELDS:
        array = arrays.get(f.name)
        if array is None:
            if f.name == "ts_out_of_order":
                array = pa.array(np.zeros(n, bool))
            elif f.name == "n_continuation":
                array = pa.array(np.zeros(n, np.int32))
            else:
                array = pa.nulls(n, f.type)
        elif array.type != f.type:
            array = array.cast(f.type)
        columns.append(array)
    return pa.Table.from_arrays(columns, schema=EVENTS_SCHEMA)
