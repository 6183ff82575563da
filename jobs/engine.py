"""Which engine runs a command: Spark's jobs, or this Python process alone for a short run.

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
would launch a local Spark itself for a short run: at most 32 MiB of local input
(``spark_session.short_run``), or a DIR whose tables are no larger than such an input leaves
(``spark_session.short_run_tables``). Under spark-submit, or in a process whose session is already
running (a notebook), Spark runs everything.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, Optional

from kafka_forensics.core.errors import UsageError

from .discovery import GLOB
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


def local_plain(inputs: Iterable[str], out_dir: Optional[str], written: Iterable[str] = ()) -> bool:
    """True if every input is an existing local path (no scheme, no glob) and DIR (None: a command that
    writes none) and every other file the command writes are local: what the driver reads and writes
    without Hadoop's FileSystem."""
    given = list(inputs)
    return (
        bool(given)
        and all(scheme_of(p) is None and not GLOB.search(p) and os.path.exists(p) for p in given)
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
    from .spark_session import short_run

    return _choose(
        conf,
        master,
        local_plain(inputs, out_dir, written),
        lambda: short_run(inputs),
        "local files and paths only (no globs, no URIs) into a local DIR",
    )


def choose_dir_engine(
    out_dir: str, master: Optional[str], conf: Optional[dict[str, str]], written: Iterable[str] = ()
) -> str:
    """``DRIVER`` or ``SPARK`` for a command that reads the tables already in ``out_dir`` (``check --reuse``,
    ``report``): the driver when DIR is a local path whose tables are no larger than a short run's
    (``spark_session.short_run_tables``); ``written``: any file it writes outside DIR (the report's HTML)."""
    from .spark_session import short_run_tables

    return _choose(
        conf,
        master,
        _all_local([out_dir], written),
        lambda: short_run_tables(out_dir),
        "a local DIR and writes local files only (no URIs)",
    )


def _choose(
    conf: Optional[dict[str, str]], master: Optional[str], local: bool, short: Callable[[], bool], needs: str
) -> str:
    """The one rule: ``=spark`` Spark; ``=driver`` the driver, where it can read and write (``local``);
    ``auto`` the driver for a ``short`` run (measured only then) on local paths that this command would
    launch a local Spark for."""
    from .spark_session import chosen_master, driver_jvm_running

    choice = engine_choice(conf)
    if choice == SPARK:
        return SPARK
    if choice == DRIVER:
        if not local:
            raise UsageError(f"{ENGINE_CONF}=driver reads {needs}")
        return DRIVER
    launches_local = not driver_jvm_running() and chosen_master(master, conf).startswith("local")
    return DRIVER if local and launches_local and short() else SPARK


__all__ = ["DRIVER", "ENGINE_CONF", "SPARK", "choose_dir_engine", "choose_engine", "engine_choice", "local_plain"]
