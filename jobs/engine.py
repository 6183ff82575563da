"""Which engine runs a command: Spark's jobs, or this Python process alone for a local run that fits it.

On a small input Spark's cost is its own, not the data's: on the bundled 584-line incident, `analyze`
took 43-50 s, nearly all of it the JVM's start, class loading, compilation and the planning of a few
hundred small queries; the same work in this process takes seconds (bench/RESULTS.md, "The driver
engine"). The driver engine runs every stage without a JVM and leaves the same outputs (tests hold them
equal, stage by stage and end to end):
- parse and replay: the functions Spark's Python workers run (``parse_driver``, ``replay_driver``);
- check: the same Great Expectations suites on GX's pandas engine, the custom expectations' one Spark-SQL
  definition transpiled for an in-process DuckDB (``check_job``, ``expectations/dialects.py``);
- report and analyze's summary: the same PySpark DataFrame code on DuckDB through SQLFrame (``frames``).

Every command that runs a stage chooses with one rule (``_choose``): ``parse``, ``replay``, ``analyze``,
``story`` and ``check INPUTS`` by the inputs they parse (``choose_engine``), ``check --reuse`` and
``report`` by the tables already in DIR (``choose_dir_engine``). ``--conf
spark.kafka_forensics.engine=spark`` keeps Spark for every stage; ``=driver`` asks for the driver whatever
the size (local inputs and a local DIR only). The default, ``auto``, takes the driver when this command
would launch a local Spark itself and the run fits the driver (``fits_the_driver``, ``dir_fits_the_driver``):
under spark-submit, or in a process whose session is already running (a notebook), Spark runs everything.

What fits: the driver engine never holds a run's lines (the parse writes each file or split as it goes, the
replay streams the events, ``replay_streams``; the check's frames hold only the columns its expectations read,
``expectations.frame_columns``). What still grows with the lines is small: the check's frame, each broker's line
positions (``impact.BrokerLines``) and the outputs. It takes the input while its estimated peak stays within
what a local run may hold anyway, the heap a local Spark driver gets (``spark_session.local_memory_gib``: half
the machine's memory, at most 8 GiB): about 27 M lines here. Up to there the driver is the faster engine on
this 2-core machine (bench/RESULTS.md, "The driver engine at ten million lines").
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional

from kafka_forensics.core.errors import UsageError
from kafka_forensics.core.tables import EVENTS
from kafka_forensics.parsers.reader import GZIP_MAGIC

from .discovery import GLOB, local_log_files
from .fs import scheme_of

ENGINE_CONF = "spark.kafka_forensics.engine"  # auto (default) | spark | driver
SPARK, DRIVER = "spark", "driver"
_CHOICES = ("auto", SPARK, DRIVER)


def engine_choice(conf: Optional[dict[str, str]]) -> str:
    """The engine asked for with ``--conf spark.kafka_forensics.engine=...`` (``auto`` if none)."""
    choice = (conf or {}).get(ENGINE_CONF, "auto").strip().lower()
    if choice not in _CHOICES:
        raise UsageError(f"{ENGINE_CONF} must be auto, spark or driver, not {choice!r}")
    return choice


# The driver engine's peak memory, all its processes together (the sum of their resident sizes sampled ten times a
# second: the parse's and the replay's pools, the report's process beside the check), ``analyze`` on simulated 2.4
# TRACE lines, 2026-11-26, a 2-core machine: 1.35 GB at 1,000,584 lines, 2.64 GB at 9,886,206, 3.44 GB at 15,847,183
# (bench/RESULTS.md, "The driver replay on every core"). Per stage at ten million lines (session 12, one process),
# the replay 1.73 GB (about one ``replay_streams.BUCKET_ROWS`` of partitions' lines held at once, whatever the
# processes, and 24 bytes a line of broker positions) and the check 100-145 bytes per events row
# (``DIR_BYTES_PER_ROW``). Its estimate: a base and a cost per line, with a margin over the most measured.
DRIVER_BASE_BYTES = 3 << 29
DRIVER_BYTES_PER_LINE = 256
# A command on the tables already in DIR needs less: the check loads into pandas only the few columns its built-in
# expectations read (``expectations.frame_columns``), its DuckDB is bounded (``check_job.DUCKDB_MEMORY_LIMIT``),
# and the report's queries run on DuckDB over the Parquet files. The check's peak (VmHWM, 2026-11-26, this
# machine): 0.71-0.80 GB at 998,821 events rows, 0.97-1.0 GB at 2,996,463 (100-145 bytes a row beyond about
# 0.6 GB: the events suite's pandas frame and GX's copies of it); the report's, 0.27 GB at both. Its estimate,
# with a margin: a base and a cost per row of the events table.
DIR_BASE_BYTES = 768 << 20
DIR_BYTES_PER_ROW = 256
# Lines are counted in each file's first MiB (decompressed): a file's lines are that density times its size
# (for a .gz, its size times the compression ratio of that first MiB).
_SAMPLE_BYTES = 1 << 20
_READ = 64 << 10


def estimated_file_lines(path: str) -> float:
    """The lines of one file, from its first ``_SAMPLE_BYTES`` (decompressed for gzip; whole if smaller)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(2)
        f.seek(0)
        if head != GZIP_MAGIC:
            sample = f.read(_SAMPLE_BYTES)
            return sample.count(b"\n") * size / len(sample) if sample else 0.0
        inflate, sample, consumed = zlib.decompressobj(wbits=31), b"", 0
        while len(sample) < _SAMPLE_BYTES:
            chunk = f.read(_READ)
            if not chunk:
                break
            try:
                sample += inflate.decompress(chunk)
            except zlib.error:  # a corrupt .gz: its bytes as they are (the parse quarantines what it cannot read)
                return max(1.0, size / 100)
            consumed += len(chunk) - len(inflate.unused_data)
            if inflate.eof:
                break
    if not sample:
        return 0.0
    whole = inflate.eof and not inflate.unused_data  # read to its end: the lines are counted, not estimated
    return float(sample.count(b"\n")) if whole else sample.count(b"\n") * size / max(consumed, 1)


def _running_lines(inputs: Iterable[str]) -> Iterator[float]:
    """The estimated lines of the log files under the plain local ``inputs`` (the files ``discovery`` reads),
    summed file by file (``estimated_file_lines``)."""
    total = 0.0
    for path in local_log_files(list(inputs)):
        try:
            total += estimated_file_lines(path)
        except OSError:
            continue  # unreadable: discovery reports it
        yield total


def estimated_lines(inputs: Iterable[str]) -> float:
    """How many lines the log files under the plain local ``inputs`` hold, estimated."""
    return max(_running_lines(inputs), default=0.0)  # the last running total: they only grow


def _lines_that_fit(base_bytes: int, bytes_per_line: int) -> float:
    """The most lines (or rows) whose estimated peak memory on the driver engine, ``base_bytes`` and
    ``bytes_per_line``, stays within what a local run may hold (``spark_session.local_memory_gib``)."""
    from .spark_session import local_memory_gib

    return ((local_memory_gib() << 30) - base_bytes) / bytes_per_line


def fits_the_driver(inputs: Iterable[str]) -> bool:
    """True if the run of the plain local ``inputs`` fits the driver (``estimated_lines``). Files are sampled
    only until the estimate no longer fits: a large input costs a few hundred MiB of reading, not all of it."""
    limit = _lines_that_fit(DRIVER_BASE_BYTES, DRIVER_BYTES_PER_LINE)
    return all(lines <= limit for lines in _running_lines(inputs))


def dir_fits_the_driver(out_dir: str) -> bool:
    """True if a command on the tables in the local ``out_dir`` (``check --reuse``, ``report``) fits the driver: by
    its events table's rows (from the Parquet footers) at ``DIR_BYTES_PER_ROW``, what the check needs. No events
    table counts nothing (the command that reads it says what is missing)."""
    import pyarrow.parquet as pq

    rows = 0
    for part in sorted(Path(out_dir, EVENTS).glob("*.parquet")):
        try:
            rows += pq.ParquetFile(part).metadata.num_rows
        except (OSError, ValueError):  # unreadable: the command that reads it reports it
            continue
    return rows <= _lines_that_fit(DIR_BASE_BYTES, DIR_BYTES_PER_ROW)


def local_plain(inputs: Iterable[str], out_dir: Optional[str], written: Iterable[str] = ()) -> bool:
    """True if every input is a plain local path (no scheme, no glob) and DIR (None: a command that
    writes none) and every other file the command writes are local: what the driver reads and writes
    without Hadoop's FileSystem. Whether an input exists is not asked here: a missing one is reported by
    ``discovery`` as "input not found" on either engine, and on the driver without a JVM's start first."""
    given = list(inputs)
    return (
        bool(given)
        and all(scheme_of(p) is None and not GLOB.search(p) for p in given)
        and _all_local([] if out_dir is None else [out_dir], written)
    )


def _all_local(*places: Iterable[str]) -> bool:
    return all(scheme_of(p) is None for group in places for p in group)


def choose_engine(
    inputs: list[str],
    out_dir: Optional[str],
    master: Optional[str],
    conf: Optional[dict[str, str]],
    written: Iterable[str] = (),
) -> str:
    """``DRIVER`` or ``SPARK`` for a command that parses (and replays) ``inputs`` into ``out_dir`` (None: in
    memory, as ``story``); ``written``: any other file it writes (``analyze --report``)."""
    return _choose(
        conf,
        master,
        local_plain(inputs, out_dir, written),
        lambda: fits_the_driver(inputs),
        "local files and paths only (no globs, no URIs) into a local DIR",
    )


def choose_dir_engine(
    out_dir: str, master: Optional[str], conf: Optional[dict[str, str]], written: Iterable[str] = ()
) -> str:
    """``DRIVER`` or ``SPARK`` for a command that reads the tables already in ``out_dir`` (``check --reuse``,
    ``report``): the driver when DIR is a local path whose run fits it (``dir_fits_the_driver``); ``written``:
    any file it writes outside DIR (the report's HTML)."""
    return _choose(
        conf,
        master,
        _all_local([out_dir], written),
        lambda: dir_fits_the_driver(out_dir),
        "a local DIR and writes local files only (no URIs)",
    )


def _choose(
    conf: Optional[dict[str, str]], master: Optional[str], local: bool, fits: Callable[[], bool], needs: str
) -> str:
    """The one rule: ``=spark`` Spark; ``=driver`` the driver, where it can read and write (``local``);
    ``auto`` the driver for a run that fits it (``fits``, measured only then) on local paths that this command
    would launch a local Spark for."""
    from .spark_session import chosen_master, driver_jvm_running

    choice = engine_choice(conf)
    if choice == SPARK:
        return SPARK
    if choice == DRIVER:
        if not local:
            raise UsageError(f"{ENGINE_CONF}=driver reads {needs}")
        return DRIVER
    launches_local = not driver_jvm_running() and chosen_master(master, conf).startswith("local")
    return DRIVER if local and launches_local and fits() else SPARK


__all__ = [
    "DRIVER",
    "ENGINE_CONF",
    "SPARK",
    "choose_dir_engine",
    "choose_engine",
    "dir_fits_the_driver",
    "engine_choice",
    "estimated_lines",
    "fits_the_driver",
    "local_plain",
]
