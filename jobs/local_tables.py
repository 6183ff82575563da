"""Tables and small files written on this machine by the driver engine, as Spark leaves an output directory.

The driver engine (``jobs/engine.py``) writes the same tables the Spark jobs write, so that every later
reader (``check``, ``report``, the user's own Spark or pyarrow) cannot tell which engine ran: one
directory per table holding one snappy Parquet file named as Spark names its parts, every column nullable
(as Spark stores them), timestamps as INT64 microseconds adjusted to UTC (as the Spark session writes
them: ``jobs/spark_session.py``) and Spark's ``_SUCCESS`` marker. Each is written whole, under a hidden
temporary name renamed over the old one, so a reader never sees half of it and a rerun replaces it.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Callable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from .stored_tables import stored_arrow_schema

_TMP = ".tmp"


def replace(target: Path, write: Callable[[Path], None]) -> None:
    """Write ``target`` (a file or a directory) whole: into a hidden temporary name, then renamed over it."""
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}{_TMP}")
    try:
        write(temporary)
        if target.is_dir():
            shutil.rmtree(target)
        os.replace(temporary, target)
    finally:
        if temporary.is_dir():
            shutil.rmtree(temporary)
        else:
            temporary.unlink(missing_ok=True)


def write_table(out_dir: Path, name: str, rows: Sequence[dict]) -> None:
    """``out_dir/name``: the table of ``rows`` (dicts; missing keys are nulls) in the schema Spark stores it
    with (``stored_tables.stored_arrow_schema``: every column nullable, findings without their JSON line)."""
    stored = stored_arrow_schema(name)
    table = pa.Table.from_pylist([{c: r.get(c) for c in stored.names} for r in rows], schema=stored)

    def write(directory: Path) -> None:
        directory.mkdir(parents=True)
        pq.write_table(table, directory / f"part-00000-{uuid.uuid4()}-c000.snappy.parquet", compression="snappy")
        (directory / "_SUCCESS").touch()

    replace(out_dir / name, write)


def write_text(path: Path, text: str) -> None:
    """A small text file (a summary, findings.jsonl, the story), whole."""
    replace(path, lambda p: p.write_bytes(text.encode("utf-8")))


__all__ = ["replace", "write_table", "write_text"]
