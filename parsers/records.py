"""One file's bytes → event rows, quarantine rows and a reconciliation row.

This is the only place where lines become records: continuation lines attach to the record
before them, identity and broker ownership are resolved, timestamps are converted, and every
physical line is counted exactly once (record, continuation or quarantine).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional
from zoneinfo import ZoneInfo

from kafka_forensics.core.eras import AUTO, dialect_for_version
from kafka_forensics.core.tables import EVENT_COLUMNS

from .detect import detect_dialect
from .fields import apply_fields
from .gc_pause import cyclic_gc_paused
from .grammar_loader import templates_for
from .lines import CONTINUATION, QUARANTINE, RECORD, FastLineParser, LarkLineParser, LineResult
from .metadata_dump import looks_like_metadata_dump, parse_metadata_dump
from .reader import DEFAULT_MAX_LINE_BYTES, read_lines

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


class _Clock:
    """ts_raw → microseconds since the epoch (UTC), cached per second."""

    def __init__(self, timezone: str) -> None:
        self.tz = dt.timezone.utc if timezone.upper() == "UTC" else ZoneInfo(timezone)
        self.cache: dict[str, int] = {}

    def micros(self, ts_raw: str) -> int:
        seconds_text = ts_raw[:19]
        seconds = self.cache.get(seconds_text)
        if seconds is None:
            naive = dt.datetime.strptime(seconds_text.replace("T", " "), "%Y-%m-%d %H:%M:%S")
            seconds = int(naive.replace(tzinfo=self.tz).timestamp())
            self.cache[seconds_text] = seconds
        return seconds * 1_000_000 + int(ts_raw[20:23]) * 1000


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
    if options.kafka_version:
        dialect = dialect_for_version(options.kafka_version).name
    else:
        auto = line_parser(AUTO, options.layout, False)
        dialect = detect_dialect((ln.text for ln in lines if ln.text), auto.classify)
    classify = line_parser(dialect, options.layout, options.use_lark).classify
    pattern = re.compile(options.broker_from_path)
    path_broker = _path_broker(pattern, source_file)
    clock = _Clock(options.timezone)
    event_types = _event_types()
    kinds: dict = {}  # logger → log kind, per file
    result = FileResult()
    current: list | None = None
    stack: list[str] = []
    counts = {"records": 0, "continuation_lines": 0, "quarantined": 0, "out_of_order": 0}
    last_ts = None

    def close() -> None:
        if current is not None:
            if stack:
                current[_STACK] = "\n".join(stack)
                current[_NCONT] += len(stack)
                stack.clear()
            result.rows.append(current)

    def quarantine(line_no: int, raw: str, reason: str) -> None:
        counts["quarantined"] += 1
        result.quarantine.append(
            {"source_file": source_file, "line_no": line_no, "broker": path_broker, "raw": raw, "reason": reason}
        )

    record_start = line_parser(AUTO, options.layout, False).primary.record_start
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
            parsed, message_lines = _join_message_lines(classify, record_start, lines, index - 1, parsed)
            index += message_lines
        if parsed.kind == CONTINUATION:
            if current is None:
                quarantine(
                    line.line_no, line.text, "continuation line (stack trace) with no log record before it in this file"
                )
            else:
                counts["continuation_lines"] += 1
                stack.append(line.text)
            continue
        if parsed.kind == QUARANTINE:
            quarantine(line.line_no, line.text, parsed.reason or "not a log record")
            continue
        close()
        counts["records"] += 1
        current = _event_row(parsed, line, source_file, dialect, event_types, clock, pattern, path_broker, kinds)
        if message_lines:
            counts["continuation_lines"] += message_lines
            current[_NCONT] = message_lines
        ts = current[_TS]
        if last_ts is not None and ts < last_ts:
            current[_OOO] = True
            counts["out_of_order"] += 1
        last_ts = ts if last_ts is None or ts > last_ts else last_ts
    close()
    _fill_file_owner(result.rows)
    result.summary = {
        "source_file": source_file,
        "lines_read": len(lines),
        **counts,
        "dialect": dialect,
        "compressed": info["compressed"],
        "read_error": info["read_error"],
    }
    return result


_BASE: list[Any] = [None] * len(EVENT_COLUMNS)
_BASE[COL["ts_out_of_order"]] = False
_BASE[COL["n_continuation"]] = 0
# The schema keeps the header columns in two runs, so a row is filled with two slice assignments.
assert EVENT_COLUMNS[:6] == ("source_file", "line_no", "broker", "broker_source", "ts", "ts_raw")
assert EVENT_COLUMNS[7:13] == ("level", "logger", "log_kind", "dialect", "template", "event_type")
_MESSAGE, _PREFIX, _CRLF = COL["message"], COL["line_prefix"], COL["crlf"]


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
    row = _BASE[:]
    row[0:6] = (source_file, line.line_no, broker, source, clock.micros(ts_raw), ts_raw)
    row[7:13] = (parsed.level, logger, kind, dialect, template, event_types[template] if template else OTHER)
    row[_MESSAGE] = parsed.message
    row[_PREFIX] = parsed.prefix
    row[_CRLF] = line.crlf
    for name, value in columns.items():
        row[COL[name]] = value
    return row


_NO_COLUMNS: dict = {}  # read only


def _join_message_lines(classify, record_start, lines, first: int, parsed: LineResult):
    """A line that starts like a record but does not end like one: its message may go on over
    the next lines (log4j prints a message's newlines as they are). Join until it parses."""
    text = lines[first].text
    for extra in range(1, MAX_MESSAGE_LINES + 1):
        at = first + extra
        if at >= len(lines) or lines[at].text is None or record_start.match(lines[at].text):
            break
        text += "\n" + lines[at].text
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
