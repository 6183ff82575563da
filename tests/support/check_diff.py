"""The check without Spark (``run_check(None, ...)``) against the check on Spark, on the same tables.

The oracle is Spark: a test copies the replay output an existing fixture's Spark check already
validated (tables and ``replay_summary.json`` only), runs the DuckDB check on the copy and compares
what both wrote: ``verdict.json`` without its run-specific keys (``outputs.RUN_SPECIFIC_VERDICT_KEYS``)
and every GX result, expectation by expectation: success, the whole ``result`` (counts, observed
values, the offending rows kept, the built-in expectations' partial lists) and whether it raised.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kafka_forensics.core.tables import CONTROLLERS, EVENTS, PARTITION_TIMELINE, TABLES
from kafka_forensics.jobs.check_job import CheckConfig, run_check

from .outputs import RUN_SPECIFIC_VERDICT_KEYS

REPLAY_OUTPUT = (*TABLES, "replay_summary.json")  # what a check reads


def copy_replay_output(src: Path, dst: Path) -> Path:
    """The tables and replay summary of ``src`` in a fresh ``dst`` (nothing a check writes)."""
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for name in REPLAY_OUTPUT:
        (shutil.copytree if (src / name).is_dir() else shutil.copy2)(src / name, dst / name)
    return dst


def verdict(out: Path) -> dict:
    data = json.loads((out / "verdict.json").read_text("utf-8"))
    return {k: v for k, v in data.items() if k not in RUN_SPECIFIC_VERDICT_KEYS}


def validation(out: Path) -> dict[str, dict]:
    """suite -> kf_key -> what must not depend on the engine; plus each suite's statistics."""
    out_ = {}
    for path in sorted((out / "validation").glob("*.json")):
        result = json.loads(path.read_text("utf-8"))
        out_[path.stem] = {
            r["expectation_config"]["meta"]["kf_key"]: {
                "success": r["success"],
                "result": r["result"],
                "raised": any(
                    v.get("raised_exception") for v in (r.get("exception_info") or {}).values() if isinstance(v, dict)
                )
                or bool((r.get("exception_info") or {}).get("raised_exception")),
            }
            for r in result["results"]
        }
        out_[path.stem]["statistics"] = result["statistics"]
    return out_


def duckdb_check_of(spark_out: Path, dst: Path, config: CheckConfig | None = None) -> Path:
    """``run_check(None, ...)`` on a copy of ``spark_out``'s replay output, with the same inputs record."""
    copy_replay_output(spark_out, dst)
    run_check(None, str(dst), config, inputs_info=json.loads((spark_out / "verdict.json").read_text())["inputs"])
    return dst


def assert_same_check(spark_out: Path, duck_out: Path) -> dict:
    """Both checks wrote the same verdict and GX results; the verdict, for the caller's own assertions."""
    expected, actual = verdict(spark_out), verdict(duck_out)
    assert actual == expected
    spark_results, duck_results = validation(spark_out), validation(duck_out)
    assert sorted(duck_results) == sorted(spark_results) == sorted(expected["suites"])
    for suite, results in spark_results.items():
        assert not any(r["raised"] for k, r in results.items() if k != "statistics"), suite
        for key, result in results.items():
            assert duck_results[suite][key] == result, f"{suite}.{key}"
    assert (duck_out / "data_docs" / "index.html").is_file()
    return expected


# ---- a copy of the sample's tables that fails many expectations ------------------------------------
def _rewrite(dst: Path, name: str, mutate) -> None:
    table = pq.read_table(dst / name)
    rows = table.to_pylist()
    mutate(rows)
    shutil.rmtree(dst / name)
    os.makedirs(dst / name)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), dst / name / "part-00000.parquet")


def _break_events(rows: list[dict]) -> None:
    changes = [r for r in rows if r["event_type"] == "partition_state_change" and r["from_state"]]
    changes[0]["from_state"] = "BogusState"  # a state no era has
    changes[1]["broker"] = -7  # a negative broker id
    changes[2]["ts"] = None  # ts_raw kept: an unparsed timestamp
    changes[3]["from_state"], changes[3]["to_state"] = "NonExistentPartition", "OfflinePartition"  # illegal
    changes[4]["level"] = "NOTICE"  # not a log4j level
    changes[5]["event_type"] = None  # a line without its type


def _break_timeline(rows: list[dict]) -> None:
    with_epoch = [r for r in rows if r["leader_epoch"]]
    with_epoch[-1]["leader_epoch"] = 0  # below an earlier epoch of the same partition
    leading = next(r for r in rows if r["isr"] and r["leader"] is not None and r["leader"] >= 0)
    leading["isr"] = [b for b in leading["isr"] if b != leading["leader"]] + [99]  # leader out of ISR, 99 no replica
    rows[1]["state"] = "NewPartition" if rows[1]["state"] == "OfflinePartition" else "OfflinePartition"


def _break_controllers(rows: list[dict]) -> None:
    rows.sort(key=lambda r: (r["ts_start"] is None, r["ts_start"]))
    rows[-1]["controller_epoch"] = rows[0]["controller_epoch"] - 1  # the last controller's epoch goes back


def broken_copy(src: Path, dst: Path) -> Path:
    """The replay output of ``src`` with rows changed so that most events and timelines expectations fail.

    Not a realistic input: it exists so that the differential test compares failing results (counts,
    offending rows, partial lists) of as many expectations as possible, not only empty ones."""
    copy_replay_output(src, dst)
    _rewrite(dst, EVENTS, _break_events)
    _rewrite(dst, PARTITION_TIMELINE, _break_timeline)
    _rewrite(dst, CONTROLLERS, _break_controllers)
    return dst
