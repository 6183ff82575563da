"""One file's bytes → event rows, quarantine rows and a reconciliation row.

This is the only place where lines become records: continuation lines attach to the record
before them, identity and broker ownership are resolved, timestamps are converted, and every
physical line is counted exactly once (record, continuation or quarantine).

Per-line semantics, after the reader's (``reader.py``), in file order (the contract a column-wise
implementation must reproduce; ``parse_file`` is the reference):

* **Record**: a line with the layout's header (``lines.py``: whatever the message holds, even an
  identity prefix or a text no template knows; the worst case is ``event_type = other``).
* **Message over several lines**: a line that starts like a record (``record_start``) but is not
  one is joined with the following lines (at most ``MAX_MESSAGE_LINES``, up to the next record
  start or unreadable line) until the joined text is a record; the extra lines are its
  continuation lines. Each joined line loses the first line's tooling prefix, if it starts with it.
* **Continuation**: a stack-trace line, as it is or after removing the current record's tooling
  prefix (``line_prefix``: docker compose and grep put it on every physical line), attaches to the
  record before it (``stack``, ``n_continuation``); with no record before it, it is quarantined.
* **Quarantine**: everything else, and every line the reader could not read.
* **Timestamp**: ``ts_raw`` in ``--timezone`` → UTC microseconds. A text that is no calendar date
  and time (``2021-02-30``, hour 25, the leap second ``23:59:60`` that Java never prints) or lies
  outside [1970-01-01, 2262-04-11) UTC (what Spark, pandas' nanosecond timestamps and Python's
  datetime all represent) keeps its record with ``ts`` null and ``attrs.ts_invalid`` = why; such a
  record is never ``ts_out_of_order`` and does not move the file's clock.
* **Numbers**: a value too large for its Int32 column (Kafka's ids and epochs are Int32) is left
  null and listed in ``attrs.out_of_range`` (``name=value,...``).
* **Repairs recorded** on the record, summed over its physical lines: ``attrs.bom`` = ``true``,
  ``attrs.ansi_escapes`` and ``attrs.control_chars`` = counts (absent when zero); ``crlf`` and
  ``line_prefix`` are those of its first line. The file's summary counts lines with each repair.
* **Containment**: an unexpected error while classifying or building one line makes that line a
  quarantine row ("internal error ..."), never a failed file.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional
from zoneinfo import ZoneInfo

import pyarrow as pa

from kafka_forensics.core.eras import AUTO, dialect_for_version
from kafka_forensics.core.tables import EVENT_COLUMNS, EVENT_FIELDS

from .detect import detect_dialect
from .fields import apply_fields
from .gc_pause import cyclic_gc_paused
from .grammar_loader import templates_for
from .lines import CONTINUATION, QUARANTINE, RECORD, FastLineParser, LarkLineParser, LineResult
from .metadata_dump import looks_like_metadata_dump, parse_metadata_dump
from .reader import DEFAULT_MAX_LINE_BYTES, Line, read_lines, repair_counts

# Event rows are lists in EVENT_COLUMNS order: cheaper to build than dicts and transposed into
# Arrow columns in one zip (jobs/parse_job.py); ``FileResult.events`` gives dicts for callers.
COL = {name: i for i, name in enumerate(EVENT_COLUMNS)}
_TS, _OOO, _BROKER, _BSRC = COL["ts"], COL["ts_out_of_order"], COL["broker"], COL["broker_source"]
_STACK, _NCONT = COL["stack"], COL["n_continuation"]

DEFAULT_BROKER_FROM_PATH = r"(?i)(?:broker|kafka|node)[-_]?(\d+)(?=[/_\-\s|]|$)"
OTHER = "other"
# A record's message may span lines (ZooKeeper Stat.toString ends in \n; AbstractConfig.logAll prints
# "KafkaConfig values: " and one "\tkey = value" line per setting, 142 lines in 0.10.2, 337 in 4.1,
# clients/.../common/config/AbstractConfig.java@3.9.0-rc3:358-372).
MAX_MESSAGE_LINES = 1000


@dataclass(frozen=True)
class ParseOptions:
    """What a user can set on the command line (all picklable, shipped to Spark workers)."""

    layout: str | None = None
    kafka_version: str | None = None
    broker_from_path: str = DEFAULT_BROKER_FROM_PATH
    timezone: str = "UTC"
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    use_lark: bool = False  # the plain-Lark reference path (benchmarks, differential tests)


@functools.lru_cache(maxsize=32)
def line_parser(dialect: str, layout: str | None, use_lark: bool):
    """One classifier per (dialect, layout, path) per process: Spark workers build it once."""
    return (LarkLineParser if use_lark else FastLineParser)(dialect, layout)


@functools.lru_cache(maxsize=1)
def _event_types() -> dict[str, str]:
    return {t.rule: t.event_type for t in templates_for(AUTO)}


def log_kind(logger: str | None, source_file: str) -> str:
    if logger == "state.change.logger":
        return "state-change"
    if logger and logger.startswith(("kafka.controller", "org.apache.kafka.controller")):
        return "controller"
    name = source_file.rsplit("/", 1)[-1]
    if name.startswith(("state-change", "stage-change")):
        return "state-change"
    if name.startswith("controller"):
        return "controller"
    return "server"


TS_FIRST = "1970-01-01"  # the range of instants a record's ts may hold (module docstring)
TS_END = "2262-04-11"
_TS_MIN = 0
_TS_MAX = int(dt.datetime.fromisoformat(TS_END).replace(tzinfo=dt.timezone.utc).timestamp())
NOT_A_TIME = "not a calendar date and time"


class _Clock:
    """ts_raw → microseconds since the epoch (UTC), cached per second; None and why for a text
    that is not an instant in the supported range."""

    def __init__(self, timezone: str) -> None:
        self.tz = dt.timezone.utc if timezone.upper() == "UTC" else ZoneInfo(timezone)
        self.cache: dict[str, tuple[int | None, str | None]] = {}

    def micros(self, ts_raw: str) -> tuple[int | None, str | None]:
        seconds_text = ts_raw[:19]
        hit = self.cache.get(seconds_text)
        if hit is None:
            hit = self.cache[seconds_text] = self._seconds(seconds_text)
        seconds, problem = hit
        if seconds is None:
            return None, problem
        return seconds * 1_000_000 + int(ts_raw[20:23]) * 1000, None

    def _seconds(self, text: str) -> tuple[int | None, str | None]:
        # TIMESTAMP (header.lark) fixes the positions: yyyy-MM-dd HH:mm:ss ('T' allowed at 10)
        try:
            naive = dt.datetime(
                int(text[0:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[14:16]), int(text[17:19])
            )
        except ValueError:
            return None, NOT_A_TIME
        try:
            seconds = int(naive.replace(tzinfo=self.tz).timestamp())
        except (OverflowError, ValueError):  # the zone moves it past datetime's own range
            seconds = _TS_MIN - 1 if naive.year < 1970 else _TS_MAX
        if seconds < _TS_MIN:
            return None, f"before {TS_FIRST}"
        if seconds >= _TS_MAX:
            return None, f"after {TS_END}"
        return seconds, None


@dataclass
class FileResult:
    rows: list[list] = field(default_factory=list)  # event rows in EVENT_COLUMNS order
    quarantine: list[dict] = field(default_factory=list)
    summary: dict = field(default_factory=dict)

    @property
    def events(self) -> list[dict]:
        return [dict(zip(EVENT_COLUMNS, row)) for row in self.rows]


def _path_broker(pattern: re.Pattern, text: str | None) -> int | None:
    if not text:
        return None
    found = pattern.findall(text)
    return int(found[-1]) if found else None


def parse_file(data: bytes, source_file: str, options: ParseOptions = ParseOptions()) -> FileResult:
    """Parse one file's bytes completely (the unit of work of the Spark job)."""
    with cyclic_gc_paused():
        return _parse_file(data, source_file, options)


def _parse_file(data: bytes, source_file: str, options: ParseOptions) -> FileResult:
    if looks_like_metadata_dump(data):  # kafka-dump-log --cluster-metadata-decoder output: JSON, not log4j
        path_owner = _path_broker(re.compile(options.broker_from_path), source_file)
        return FileResult(*parse_metadata_dump(data, source_file, path_owner, options.max_line_bytes))
    read, info = read_lines(data, options.max_line_bytes)
    lines = list(read)
    dialect = file_dialect(options, (ln.text for ln in lines if ln.text))
    result = FileResult()
    counts, _ = parse_lines(lines, LineContext.of(source_file, dialect, options), result, None)
    _fill_file_owner(result.rows)
    result.summary = {
        "source_file": source_file,
        "lines_read": len(lines),
        **counts,
        **repair_counts(lines),
        "dialect": dialect,
        "compressed": info["compressed"],
        "read_error": info["read_error"],
    }
    return result


def file_dialect(options: ParseOptions, texts: Iterable[str]) -> str:
    """The grammar a file is read with: ``--kafka-version``'s, or detected from its first lines."""
    if options.kafka_version:
        return dialect_for_version(options.kafka_version).name
    auto = line_parser(AUTO, options.layout, False)
    return detect_dialect(texts, _contained(auto.classify))


@dataclass
class LineContext:
    """What turning one file's lines into rows needs besides the lines (per file, or per split)."""

    source_file: str
    dialect: str
    options: ParseOptions
    classify: Any
    pattern: re.Pattern
    path_broker: int | None
    clock: _Clock
    event_types: dict[str, str]
    kinds: dict  # logger → log kind

    @classmethod
    def of(cls, source_file: str, dialect: str, options: ParseOptions) -> LineContext:
        pattern = re.compile(options.broker_from_path)
        return cls(
            source_file,
            dialect,
            options,
            _contained(line_parser(dialect, options.layout, options.use_lark).classify),
            pattern,
            _path_broker(pattern, source_file),
            _Clock(options.timezone),
            _event_types(),
            {},
        )

    def event_row(self, parsed: LineResult, line: Line) -> list:
        return _event_row(
            parsed,
            line,
            self.source_file,
            self.dialect,
            self.event_types,
            self.clock,
            self.pattern,
            self.path_broker,
            self.kinds,
        )

    def quarantine_row(self, line_no: int, raw: str, reason: str) -> dict:
        return {
            "source_file": self.source_file,
            "line_no": line_no,
            "broker": self.path_broker,
            "raw": raw,
            "reason": reason,
        }


ORPHAN = "continuation line (stack trace) with no log record before it in this file"


def parse_lines(lines, ctx: LineContext, result: FileResult, last_ts: int | None) -> tuple[dict, int | None]:
    """The per-line loop (module docstring) over consecutive lines of one file, appending rows and
    quarantine rows to ``result``; ``last_ts`` is the latest timestamp before these lines. Returns
    the counts and the latest timestamp after them. The file owner is not filled in here."""
    classify = ctx.classify
    current: list | None = None
    prefix = None  # the current record's tooling prefix
    stack: list[str] = []
    repairs = [False, 0, 0]  # the current record's bom, ANSI escapes, control characters
    counts = {"records": 0, "continuation_lines": 0, "quarantined": 0, "out_of_order": 0, "ts_invalid": 0}

    def close() -> None:
        if current is not None:
            if stack:
                current[_STACK] = "\n".join(stack)
                current[_NCONT] += len(stack)
                stack.clear()
            if repairs[0] or repairs[1] or repairs[2]:
                _record_repairs(current, repairs)
            result.rows.append(current)

    def quarantine(line_no: int, raw: str, reason: str) -> None:
        counts["quarantined"] += 1
        result.quarantine.append(ctx.quarantine_row(line_no, raw, reason))

    fast = line_parser(AUTO, ctx.options.layout, False).primary
    record_start, tooling_prefix = fast.record_start, fast.line_prefix
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.text is None:
            quarantine(line.line_no, line.raw or "", line.problem or "unreadable line")
            continue
        parsed: LineResult = classify(line.text)
        message_lines = 0
        if parsed.kind == QUARANTINE and record_start.match(line.text):
            parsed, message_lines = _join_message_lines(
                classify, record_start, tooling_prefix, lines, index - 1, parsed
            )
        if parsed.kind != RECORD and prefix and line.text.startswith(prefix):
            inner = line.text[len(prefix) :]
            if classify(inner).kind == CONTINUATION:  # a stack line the tooling prefixed too
                parsed = LineResult(CONTINUATION, message=inner)
        if parsed.kind == CONTINUATION:
            if current is None:
                quarantine(line.line_no, line.text, ORPHAN)
            else:
                counts["continuation_lines"] += 1
                stack.append(parsed.message if parsed.message is not None else line.text)
                _add_repairs(repairs, line)
            continue
        if parsed.kind == QUARANTINE:
            quarantine(line.line_no, line.text, parsed.reason or "not a log record")
            continue
        try:
            row = ctx.event_row(parsed, line)
        except Exception as err:  # a bug on one line must not cost the file (module docstring)
            quarantine(line.line_no, line.text, _internal_error("building the record of this line", err))
            continue
        close()
        current, prefix = row, parsed.prefix
        repairs[:] = [line.bom, line.ansi, line.control]
        counts["records"] += 1
        if message_lines:
            index += message_lines
            counts["continuation_lines"] += message_lines
            current[_NCONT] = message_lines
            for extra in lines[index - message_lines : index]:
                _add_repairs(repairs, extra)
        ts = current[_TS]
        if ts is None:
            counts["ts_invalid"] += 1
            continue
        if last_ts is not None and ts < last_ts:
            current[_OOO] = True
            counts["out_of_order"] += 1
        last_ts = ts if last_ts is None or ts > last_ts else last_ts
    close()
    return counts, last_ts


def _internal_error(doing: str, err: Exception) -> str:
    return f"internal error {doing} ({type(err).__name__}: {err}); the line is kept here, please report it"


def _contained(classify):
    """``classify`` that turns an unexpected error on a line into that line's quarantine result."""

    def run(text: str) -> LineResult:
        try:
            return classify(text)
        except Exception as err:
            return LineResult(QUARANTINE, reason=_internal_error("classifying this line", err))

    return run


def _add_repairs(repairs: list, line: Line) -> None:
    repairs[0] = repairs[0] or line.bom
    repairs[1] += line.ansi
    repairs[2] += line.control


def _record_repairs(row: list, repairs: list) -> None:
    attrs = row[_ATTRS] = dict(row[_ATTRS] or {})
    if repairs[0]:
        attrs["bom"] = "true"
    if repairs[1]:
        attrs["ansi_escapes"] = str(repairs[1])
    if repairs[2]:
        attrs["control_chars"] = str(repairs[2])


_BASE: list[Any] = [None] * len(EVENT_COLUMNS)
_BASE[COL["ts_out_of_order"]] = False
_BASE[COL["n_continuation"]] = 0
# The schema keeps the header columns in two runs, so a row is filled with two slice assignments.
assert EVENT_COLUMNS[:6] == ("source_file", "line_no", "broker", "broker_source", "ts", "ts_raw")
assert EVENT_COLUMNS[7:13] == ("level", "logger", "log_kind", "dialect", "template", "event_type")
_MESSAGE, _PREFIX, _CRLF, _ATTRS = COL["message"], COL["line_prefix"], COL["crlf"], COL["attrs"]
# Columns whose Arrow type holds 32-bit integers (a larger value cannot be written: module docstring)
_INT32 = frozenset(f.name for f in EVENT_FIELDS if f.type == pa.int32())
_INT32_LISTS = frozenset(f.name for f in EVENT_FIELDS if f.type == pa.list_(pa.int32()))
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


def _event_row(parsed: LineResult, line, source_file, dialect, event_types, clock, pattern, path_broker, kinds) -> list:
    columns = apply_fields(parsed.fields) if parsed.fields else _NO_COLUMNS
    broker = columns.pop("broker", None)  # (never pops from the shared empty dict)
    source: Optional[str] = "line"
    if broker is None:
        broker = columns.get("controller_id")
    if broker is None:
        prefix_broker = _path_broker(pattern, parsed.prefix)
        broker, source = (prefix_broker, "path") if prefix_broker is not None else (path_broker, "path")
    if broker is None:
        source = None
    logger = parsed.logger
    kind = kinds.get(logger)
    if kind is None:
        kind = kinds[logger] = log_kind(logger, source_file)
    template = parsed.template
    ts_raw = parsed.ts_raw
    ts, ts_problem = clock.micros(ts_raw)
    row = _BASE[:]
    row[0:6] = (source_file, line.line_no, broker, source, ts, ts_raw)
    row[7:13] = (parsed.level, logger, kind, dialect, template, event_types[template] if template else OTHER)
    row[_MESSAGE] = parsed.message
    row[_PREFIX] = parsed.prefix
    row[_CRLF] = line.crlf
    out_of_range = None
    if broker is not None and not _I32_MIN <= broker <= _I32_MAX:
        row[_BROKER], row[_BSRC] = None, None
        out_of_range = [f"broker={broker}"]
    for name, value in columns.items():
        if (name in _INT32 and not _I32_MIN <= value <= _I32_MAX) or (
            name in _INT32_LISTS and any(not _I32_MIN <= v <= _I32_MAX for v in value)
        ):
            (out_of_range or (out_of_range := [])).append(f"{name}={value}")
            continue
        row[COL[name]] = value
    if ts_problem or out_of_range:
        attrs = row[_ATTRS] = dict(row[_ATTRS] or {})
        if ts_problem:
            attrs["ts_invalid"] = ts_problem
        if out_of_range:
            attrs["out_of_range"] = ",".join(out_of_range)
    return row


_NO_COLUMNS: dict = {}  # read only


def _join_message_lines(classify, record_start, tooling_prefix, lines, first: int, parsed: LineResult):
    """A line that starts like a record but does not end like one: its message may go on over
    the next lines (log4j prints a message's newlines as they are). Join until it parses; a
    tooling prefix that the first line starts with is removed from the lines joined to it."""
    text = lines[first].text
    found = tooling_prefix.match(text)
    prefix = found.group(0) if found else None
    for extra in range(1, MAX_MESSAGE_LINES + 1):
        at = first + extra
        if at >= len(lines) or lines[at].text is None or record_start.match(lines[at].text):
            break
        more = lines[at].text
        text += "\n" + (more[len(prefix) :] if prefix and more.startswith(prefix) else more)
        joined = classify(text)
        if joined.kind == RECORD:
            return joined, extra
    return parsed, 0


def _fill_file_owner(rows: list[list]) -> None:
    """Lines with no identity of their own belong to the file's one writer, if it has one."""
    owners = {r[_BROKER] for r in rows if r[_BSRC] == "line"}
    if len(owners) != 1:
        return
    owner = owners.pop()
    for row in rows:
        if row[_BROKER] is None:
            row[_BROKER] = owner
            row[_BSRC] = "file"


def iter_lines_for_merge(data: bytes) -> Iterator[str]:  # used by later subcommands (merge)
    lines, _ = read_lines(data)
    for line in lines:
        if line.text is not None:
            yield line.text
