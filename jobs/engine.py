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

``--conf spark.kafka_forensics.engine=spark`` keeps Spark for every stage; ``=driver`` asks for the
driver whatever the size (local inputs and a local DIR only). The default, ``auto``, takes the driver
when this command would launch a local Spark itself for a short run (``spark_session.short_run``: at
most 32 MiB of local input): under spark-submit, or in a process whose session is already running (a
notebook), Spark runs everything.
"""

from __future__ import annotations

import os
from typing import Iterable, Optional

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


def local_plain(inputs: Iterable[str], out_dir: str) -> bool:
    """True if every input is an existing local path (no scheme, no glob) and DIR is local: what the
    driver reads and writes without Hadoop's FileSystem."""
    given = list(inputs)
    return (
        bool(given)
        and all(scheme_of(p) is None and not GLOB.search(p) and os.path.exists(p) for p in given)
        and scheme_of(out_dir) is None
    )


def choose_engine(inputs: list[str], out_dir: str, master: Optional[str], conf: Optional[dict[str, str]]) -> str:
    """``DRIVER`` or ``SPARK`` for a command that parses (and replays) ``inputs`` into ``out_dir``."""
    from .spark_session import chosen_master, driver_jvm_running, short_run

    choice = engine_choice(conf)
    if choice == SPARK:
        return SPARK
    local = local_plain(inputs, out_dir)
    if choice == DRIVER:
        if not local:
            raise UsageError(
                f"{ENGINE_CONF}=driver reads local files and paths only (no globs, no URIs) into a local DIR"
            )
        return DRIVER
    launches_local = not driver_jvm_running() and chosen_master(master, conf).startswith("local")
    short = local and launches_local and short_run(inputs)
    return DRIVER if short else SPARK


__all__ = ["DRIVER", "ENGINE_CONF", "SPARK", "choose_engine", "engine_choice", "local_plain"]
