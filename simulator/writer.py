"""Streaming log files the way log4j's DailyRollingFileAppender writes them.

Lines go straight to disk (nothing is kept in memory but a file buffer), each file rolls over on
the first line of a new hour (``state-change.log`` becomes ``state-change.log.2024-03-04-10`` and a
new ``state-change.log`` is opened, ``DatePattern='.'yyyy-MM-dd-HH`` in config/log4j.properties of
every 0.8.2 - 3.9 release), rolled files can be gzipped, several brokers can share one file, and a
run of lines can be withheld to simulate a lost segment. Every written record gets a reference
whose file name is resolved only at the end, because rotation renames the file it is in.
"""

from __future__ import annotations

import gzip as gzip_module
import os
import shutil
from pathlib import Path
from typing import Optional

from kafka_forensics.core.eras import reaches_server_log
from kafka_forensics.core.errors import InputError

from .clock import HOUR_MS, SimClock, hour_suffix
from .profile import INFO, LEVEL_NAMES, TRACE, Profile

KIND_FILES = {"state-change": "state-change.log", "controller": "controller.log", "server": "server.log"}
STATE_CHANGE_LOGGER = "state.change.logger"
_FLUSH_BYTES = 1 << 20


class Segment:
    """One physical file; ``name`` (relative to the output root) is final once it is rolled or closed."""

    __slots__ = ("lines", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.lines = 0


class Sink:
    """One log file path (``broker-1/state-change.log``) and its hourly rotation."""

    __slots__ = ("buf", "dropping", "fh", "gzip", "hour", "rel", "root", "seg", "segments", "size")

    def __init__(self, root: Path, rel: str, gzip: bool) -> None:
        self.root = root
        self.rel = rel
        self.gzip = gzip
        self.hour: Optional[int] = None
        self.seg: Optional[Segment] = None
        self.fh = None
        self.buf: list[str] = []
        self.size = 0
        self.dropping: Optional[list[str]] = None  # lines withheld (lost-segment fault)
        self.segments: list[Segment] = []

    def _open(self, hour: int) -> None:
        path = self.root / self.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(path, "w", encoding="utf-8", newline="")
        self.hour = hour
        self.seg = Segment(self.rel)
        self.segments.append(self.seg)

    def _flush(self) -> None:
        if self.buf:
            self.fh.write("".join(self.buf))
            self.buf.clear()
            self.size = 0

    def _roll(self, new_hour: int) -> None:
        """Close the current hour's file under its dated name, open a fresh one."""
        self._flush()
        self.fh.close()
        rolled = f"{self.rel}.{hour_suffix(self.hour)}"
        src, dst = self.root / self.rel, self.root / rolled
        os.replace(src, dst)
        if self.gzip:
            rolled += ".gz"
            _gzip_file(dst, self.root / rolled)
        self.seg.name = rolled
        self._open(new_hour)

    def write(self, ms: int, text: str, n_lines: int) -> Optional[tuple]:
        """Append one record (``n_lines`` physical lines); returns ``(segment, line_no)``."""
        if self.dropping is not None:
            self.dropping.append(text)
            return None
        hour = ms // HOUR_MS
        if self.fh is None:
            self._open(hour)
        elif hour > self.hour:
            self._roll(hour)
        self.buf.append(text)
        self.size += len(text)
        if self.size >= _FLUSH_BYTES:
            self._flush()
        seg = self.seg
        line_no = seg.lines + 1
        seg.lines += n_lines
        return (seg, line_no, ms)

    def last_line(self) -> Optional[tuple]:
        return (self.seg, self.seg.lines, 0) if self.seg is not None else None

    def close(self) -> None:
        if self.fh is not None:
            self._flush()
            self.fh.close()
            self.fh = None


def _gzip_file(src: Path, dst: Path) -> None:
    """Deterministic gzip (mtime 0, no file name in the header): same input, same bytes."""
    with (
        open(src, "rb") as raw_in,
        open(dst, "wb") as raw_out,
        gzip_module.GzipFile(filename="", mode="wb", fileobj=raw_out, mtime=0, compresslevel=6) as gz,
    ):
        shutil.copyfileobj(raw_in, gz, 1 << 20)
    src.unlink()


class LogOutput:
    """Every broker's log files, the level thresholds of the simulated config, and line references.

    Thresholds: state-change at the release's default (``--trace`` forces TRACE), ``kafka.controller``
    at TRACE in ZooKeeper mode (every release's config), KRaft controller classes and the root
    logger (server.log) at INFO - before 0.11 only for ``kafka.*`` loggers (``core.eras.reaches_server_log``).
    """

    def __init__(
        self,
        root: Path,
        prof: Profile,
        clock: SimClock,
        *,
        trace: bool = False,
        gzip: bool = False,
        expect: bool = False,
    ) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise InputError(f"--out {self.root} exists and is not a directory")
        self.root.mkdir(parents=True, exist_ok=True)
        self.prof = prof
        self.clock = clock
        self.gzip = gzip
        self.sc_min = TRACE if trace else prof.state_change_default
        self.ctl_min = TRACE if (trace or not prof.kraft) else INFO
        self.srv_min = INFO
        self.routes: dict[tuple[int, str], str] = {}
        self.sinks: dict[str, Sink] = {}
        self._by_key: dict[tuple[int, str], Sink] = {}
        self.skew: dict[int, int] = {}
        self.manifest: Optional[list] = [] if expect else None
        self.captures: list[list] = []  # open capture windows (faults collect evidence lines)
        self.records = 0
        self.lines = 0

    # ---- routing -------------------------------------------------------------------------------
    def route(self, broker: int, kind: str, rel: str) -> None:
        """Send ``broker``'s ``kind`` log to ``rel`` (a shared file when several brokers use it)."""
        self.routes[(broker, kind)] = rel
        self._by_key.pop((broker, kind), None)

    def rel_path(self, broker: int, kind: str) -> str:
        rel = self.routes.get((broker, kind))
        if rel is None:
            rel = self.routes[(broker, kind)] = f"broker-{broker}/{KIND_FILES[kind]}"
        return rel

    def sink(self, broker: int, kind: str) -> Sink:
        s = self._by_key.get((broker, kind))
        if s is None:
            rel = self.rel_path(broker, kind)
            s = self.sinks.get(rel)
            if s is None:
                s = self.sinks[rel] = Sink(self.root, rel, self.gzip)
            self._by_key[(broker, kind)] = s
        return s

    # ---- writing -------------------------------------------------------------------------------
    def sc_on(self, level: int) -> bool:
        return level >= self.sc_min

    def emit(
        self,
        broker: int,
        kind: str,
        level: int,
        logger: str,
        msg: str,
        ev: Optional[str] = None,
        fields: Optional[dict] = None,
        stack: Optional[list[str]] = None,
    ) -> Optional[tuple]:
        ms = self.clock.now + self.skew.get(broker, 0)
        text = f"[{self.clock.stamp(ms)}] {LEVEL_NAMES[level]} {msg} ({logger})\n"
        n = 1
        if stack:
            text += "".join(s + "\n" for s in stack)
            n += len(stack)
        ref = self.sink(broker, kind).write(ms, text, n)
        if ref is not None:
            self.records += 1
            self.lines += n
            if self.manifest is not None:
                self.manifest.append((ref, ev, fields, kind, broker))
            for cap in self.captures:
                cap.append((ref, broker, kind, msg))
        return ref

    def sc(
        self,
        broker: int,
        level: int,
        msg: str,
        ev: Optional[str] = None,
        fields: Optional[dict] = None,
        stack: Optional[list[str]] = None,
    ) -> Optional[tuple]:
        """A ``state.change.logger`` line in ``broker``'s state-change.log (if the level is on)."""
        if level < self.sc_min:
            return None
        return self.emit(broker, "state-change", level, STATE_CHANGE_LOGGER, msg, ev, fields, stack)

    def ctl(
        self,
        broker: int,
        level: int,
        logger: str,
        msg: str,
        ev: Optional[str] = None,
        fields: Optional[dict] = None,
        stack: Optional[list[str]] = None,
    ) -> Optional[tuple]:
        """A controller-logger line in ``broker``'s controller.log."""
        if level < self.ctl_min:
            return None
        return self.emit(broker, "controller", level, logger, msg, ev, fields, stack)

    def srv(
        self,
        broker: int,
        level: int,
        logger: str,
        msg: str,
        ev: Optional[str] = None,
        fields: Optional[dict] = None,
        stack: Optional[list[str]] = None,
    ) -> Optional[tuple]:
        """A root-logger line in ``broker``'s server.log (if the release's stock config sends it there)."""
        if level < self.srv_min or not reaches_server_log(logger, self.prof.version):
            return None
        return self.emit(broker, "server", level, logger, msg, ev, fields, stack)

    # ---- lost segments -------------------------------------------------------------------------
    def start_drop(self, broker: int, kind: str) -> Sink:
        s = self.sink(broker, kind)
        s.dropping = []
        return s

    def stop_drop(self, sink: Sink) -> list[str]:
        dropped, sink.dropping = sink.dropping or [], None
        return dropped

    # ---- end -----------------------------------------------------------------------------------
    def close(self) -> list[str]:
        """Close every file; returns all written file names (relative, sorted)."""
        names = []
        for s in self.sinks.values():
            s.close()
            names.extend(seg.name for seg in s.segments)
        return sorted(names)

    def capture(self) -> "_Capture":
        """``with out.capture() as lines:`` collects ``(ref, broker, kind, message)`` of every record."""
        return _Capture(self)

    @staticmethod
    def ref_text(ref: Optional[tuple]) -> Optional[str]:
        """``broker-2/state-change.log:17`` - valid after ``close()``."""
        if ref is None:
            return None
        return f"{ref[0].name}:{ref[1]}"


class _Capture:
    def __init__(self, out: LogOutput) -> None:
        self.out = out
        self.lines: list = []

    def __enter__(self) -> list:
        self.out.captures.append(self.lines)
        return self.lines

    def __exit__(self, *exc) -> None:
        self.out.captures.remove(self.lines)
