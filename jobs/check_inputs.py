"""Which replay ``check`` validates: the one already in DIR when it is of the same inputs, else a new one.

Reuse rule: the replay tables already in DIR are used when DIR/check_inputs.json (written by an
earlier ``check`` after it replayed) records the same inputs - the same paths and, for local
files, the same names, sizes and modification times - and the same parse/replay options; or
when ``--reuse`` is given (then DIR's tables are trusted as they are, e.g. made by ``replay``).
Otherwise the inputs are parsed and replayed into DIR first.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import Any, Optional

from pyspark.sql import SparkSession

from .check_job import read_small_text, write_atomically
from .replay_driver import run_replay_in_driver
from .replay_job import run_replay

FINGERPRINT = "check_inputs.json"


def _local_listing(inputs: list[str]) -> list[list]:
    """(path, size, mtime_ns) of every local file under the inputs: what makes a replay stale."""
    out = []
    for given in inputs:
        if "://" in given and not given.startswith("file://"):
            continue
        root = given[len("file://") :] if given.startswith("file://") else given
        if os.path.isfile(root):
            paths = [root]
        else:
            paths = sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files)
        for path in paths:
            st = os.stat(path)
            out.append([path, st.st_size, st.st_mtime_ns])
    return out


def inputs_fingerprint(inputs: list[str], parse_options, replay_options) -> dict:
    """What makes a replay stale: the inputs, their local files and the parse/replay options."""
    return {
        "inputs": list(inputs),
        "files": _local_listing(inputs),
        "parse_options": asdict(parse_options),
        "replay_options": asdict(replay_options),
    }


def replay_is_current(spark: Optional[SparkSession], out_dir: str, fingerprint: dict) -> bool:
    """Does ``out_dir`` hold the replay of exactly these inputs and options (its fingerprint says so)?"""
    stored = read_small_text(spark, f"{out_dir}/{FINGERPRINT}")
    try:
        return stored is not None and json.loads(stored) == json.loads(json.dumps(fingerprint))
    except ValueError:
        return False


def replay_for_check(
    spark: Optional[SparkSession],
    inputs: list[str],
    out_dir: str,
    parse_options,
    replay_options,
    fingerprint: dict,
    reuse: bool = False,
) -> Optional[tuple[Any, Any]]:
    """Replay ``inputs`` into ``out_dir`` unless it already holds their replay (or ``reuse``): the
    (parse, replay) summaries of a new replay, None when the tables in ``out_dir`` are used. ``spark``
    None: the driver engine (``jobs/engine.py``), a local ``out_dir`` only."""
    if reuse or replay_is_current(spark, out_dir, fingerprint):
        return None
    if spark is None:
        replayed = run_replay_in_driver(inputs, out_dir, parse_options, replay_options)
    else:
        replayed = run_replay(spark, inputs, out_dir, parse_options, replay_options)
    write_atomically(spark, f"{out_dir}/{FINGERPRINT}", json.dumps(fingerprint, indent=2) + "\n")
    return replayed


__all__ = ["FINGERPRINT", "inputs_fingerprint", "replay_for_check", "replay_is_current"]
