"""Which engine a command runs on (jobs/engine.py): the driver for a short local run this command launches
Spark for, Spark for everything else, and what ``--conf spark.kafka_forensics.engine`` asks for."""

from __future__ import annotations

import gzip
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_forensics.core.errors import UsageError
from kafka_forensics.core.tables import EVENTS
from kafka_forensics.jobs import engine, spark_session
from kafka_forensics.jobs.discovery import discover
from kafka_forensics.jobs.engine import DRIVER, ENGINE_CONF, SPARK, choose_dir_engine, choose_engine
from tests.support.cli import without_a_jvm
from tests.support.paths import SAMPLES

SAMPLE = str(SAMPLES / "kafka-2.4-controller-failover")


@pytest.fixture
def no_jvm(monkeypatch):
    """As in a fresh command: no JVM is running in this process yet."""
    monkeypatch.setattr(spark_session, "driver_jvm_running", lambda: False)
    monkeypatch.delenv("KAFKA_FORENSICS_MASTER", raising=False)


def test_a_short_local_run_goes_to_the_driver(no_jvm, tmp_path):
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {}) == DRIVER
    assert choose_engine([SAMPLE], str(tmp_path / "out"), "local[2]", {}) == DRIVER


@pytest.mark.parametrize(
    "inputs, out, master, why",
    [
        ([SAMPLE], "hdfs://nn/out", None, "a DIR on another filesystem"),
        ([SAMPLE + "/*"], "OUT", None, "a glob: Hadoop's listing"),
        (["s3a://bucket/logs"], "OUT", None, "a remote input"),
        ([SAMPLE], "OUT", "spark://master:7077", "a cluster"),
    ],
)
def test_anything_else_goes_to_spark(no_jvm, tmp_path, inputs, out, master, why):
    out = out if "://" in out else str(tmp_path / out)
    assert choose_engine(inputs, out, master, {}) == SPARK, why


def test_an_input_beyond_what_a_local_run_may_hold_goes_to_spark(no_jvm, tmp_path, monkeypatch):
    """The driver's need grows with the lines (a little); Spark spills: past the local memory bound, Spark."""
    monkeypatch.setattr(spark_session, "local_memory_gib", lambda: 2)
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {}) == DRIVER  # 584 lines
    monkeypatch.setattr(engine, "DRIVER_BYTES_PER_LINE", ((2 << 30) - engine.DRIVER_BASE_BYTES) // 583)
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {}) == SPARK


def test_the_line_estimate_counts_the_files_the_parse_reads():
    """Files of at most a MiB (decompressed) are counted, not estimated: the recorded incidents (.gz) and the
    samples, without the README and truth.json files beside them, which the parse does not read either."""
    assert engine.estimated_lines([SAMPLE]) == 584  # the parse's lines_read of the bundled sample (README)
    files = [f.uri[len("file:") :] for f in discover(None, [str(SAMPLES)])]
    assert any(f.endswith(".gz") for f in files)
    lines = sum(_text(f).count(b"\n") for f in files)
    assert engine.estimated_lines([str(SAMPLES)]) == lines


def _text(path: str) -> bytes:
    data = open(path, "rb").read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def test_a_large_file_is_estimated_from_its_first_mib(tmp_path):
    """A real state-change.log repeated to 6 MiB, plain and gzipped: its lines from the first MiB's density (for the
    .gz, and its compression ratio), within 10 %."""
    real = (SAMPLES / "kafka-2.4-controller-failover" / "broker-1" / "state-change.log").read_bytes()
    data = real * (6 * (1 << 20) // len(real) + 1)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "state-change.log").write_bytes(data)
    (tmp_path / "gz").mkdir()
    (tmp_path / "gz" / "state-change.log.1.gz").write_bytes(gzip.compress(data))
    lines = data.count(b"\n")
    for kind in ("plain", "gz"):
        assert engine.estimated_lines([str(tmp_path / kind)]) == pytest.approx(lines, rel=0.10), kind
    (tmp_path / "link").symlink_to(tmp_path / "plain")
    assert engine.estimated_lines([str(tmp_path / "link"), str(tmp_path / "plain")]) == pytest.approx(lines, rel=0.10)


def test_a_running_jvm_keeps_spark(monkeypatch, tmp_path):
    """spark-submit, a notebook's session: the user chose Spark."""
    monkeypatch.setattr(spark_session, "driver_jvm_running", lambda: True)
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {}) == SPARK


def test_the_conf_overrides_the_choice(no_jvm, tmp_path):
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {ENGINE_CONF: "spark"}) == SPARK
    assert choose_engine([SAMPLE], str(tmp_path / "out"), "spark://m:7077", {ENGINE_CONF: "Driver "}) == DRIVER
    with pytest.raises(UsageError, match="local files and paths only"):
        choose_engine([SAMPLE + "/*"], str(tmp_path / "out"), None, {ENGINE_CONF: "driver"})
    with pytest.raises(UsageError, match="must be auto, spark or driver"):
        engine.engine_choice({ENGINE_CONF: "duckdb"})


def test_a_command_writing_a_remote_file_goes_to_spark(no_jvm, tmp_path):
    """``analyze --report s3a://...``: DuckDB writes local files only."""
    out = str(tmp_path / "out")
    assert choose_engine([SAMPLE], out, None, {}, written=["s3a://bucket/report.html"]) == SPARK
    assert choose_engine([SAMPLE], out, None, {}, written=[str(tmp_path / "report.html")]) == DRIVER


def test_a_command_that_writes_no_dir_chooses_by_its_inputs(no_jvm, tmp_path):
    """``story``: parses and replays in memory."""
    assert choose_engine([SAMPLE], None, None, {}) == DRIVER
    assert choose_engine([SAMPLE + "/*"], None, None, {}) == SPARK


@pytest.fixture
def small_dir(tmp_path):
    """A DIR as ``replay`` leaves it: an events table of 1,000 rows (in two files), far below what fits."""
    for n in range(2):
        part = tmp_path / "out" / EVENTS / f"part-0000{n}.parquet"
        part.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"line_no": list(range(500))}), part)
    return str(tmp_path / "out")


def test_a_small_local_dir_goes_to_the_driver(no_jvm, small_dir, tmp_path):
    assert choose_dir_engine(small_dir, None, {}) == DRIVER
    assert choose_dir_engine(small_dir, "local[2]", {}, written=[str(tmp_path / "report.html")]) == DRIVER


def test_a_dir_whose_run_does_not_fit_goes_to_spark(no_jvm, small_dir, monkeypatch):
    """The events table's rows (from the Parquet footers) count as the run's lines."""
    monkeypatch.setattr(spark_session, "local_memory_gib", lambda: 1)
    monkeypatch.setattr(engine, "DIR_BASE_BYTES", 0)
    monkeypatch.setattr(engine, "DIR_BYTES_PER_ROW", (1 << 30) // 1000)
    assert choose_dir_engine(small_dir, None, {}) == DRIVER  # 1,000 rows: just within
    monkeypatch.setattr(engine, "DIR_BYTES_PER_ROW", (1 << 30) // 999)
    assert choose_dir_engine(small_dir, None, {}) == SPARK
    assert engine.dir_fits_the_driver(str(Path(small_dir).parent / "missing"))  # the command says what is missing


@pytest.mark.parametrize(
    "out, master, written, why",
    [
        ("hdfs://nn/out", None, [], "a DIR on another filesystem"),
        (None, "spark://master:7077", [], "a cluster"),
        (None, None, ["s3a://bucket/report.html"], "a report written elsewhere"),
    ],
)
def test_any_other_dir_goes_to_spark(no_jvm, small_dir, out, master, written, why):
    assert choose_dir_engine(out or small_dir, master, {}, written=written) == SPARK, why


def test_a_running_jvm_keeps_spark_for_a_dir(monkeypatch, small_dir):
    monkeypatch.setattr(spark_session, "driver_jvm_running", lambda: True)
    assert choose_dir_engine(small_dir, None, {}) == SPARK


def test_the_conf_overrides_the_choice_for_a_dir(no_jvm, small_dir):
    assert choose_dir_engine(small_dir, None, {ENGINE_CONF: "spark"}) == SPARK
    assert choose_dir_engine(small_dir, "spark://m:7077", {ENGINE_CONF: "driver"}) == DRIVER
    with pytest.raises(UsageError, match="=driver reads a local DIR"):
        choose_dir_engine("hdfs://nn/out", None, {ENGINE_CONF: "driver"})
    with pytest.raises(UsageError, match="=driver reads a local DIR"):
        choose_dir_engine(small_dir, None, {ENGINE_CONF: "driver"}, written=["s3a://bucket/report.html"])


def test_report_forced_on_the_driver_for_a_remote_dir_exits_2_in_one_sentence(tmp_path):
    from click.testing import CliRunner

    from kafka_forensics.cli.main import main

    html = str(tmp_path / "report.html")
    result = CliRunner().invoke(main, ["report", "hdfs://nn/out", "--out", html, "--conf", f"{ENGINE_CONF}=driver"])
    assert result.exit_code == 2 and "=driver reads a local DIR" in result.output and "Traceback" not in result.output


def test_a_missing_input_is_reported_without_a_jvm(no_jvm, tmp_path):
    """A typo in a local path: the driver's discovery says "input not found" (exit 2), as Spark's would, without
    starting a JVM first; forced onto the driver it is the same error, not "local paths only"."""
    missing, out = str(tmp_path / "brokre-1"), str(tmp_path / "out")
    assert choose_engine([missing], out, None, {}) == DRIVER
    assert choose_engine([missing], out, None, {ENGINE_CONF: "driver"}) == DRIVER
    done = without_a_jvm(["parse", missing, "--out", out])
    assert done.returncode == 2 and f"input not found: {missing}" in done.stderr, done.stderr


def test_sampling_stops_once_the_run_does_not_fit(monkeypatch):
    """A large input is not read file by file to its end just to learn that it does not fit."""
    read: list[str] = []
    real = engine.estimated_file_lines
    monkeypatch.setattr(engine, "estimated_file_lines", lambda path: read.append(path) or real(path))
    assert engine.fits_the_driver([SAMPLE]) and len(read) == 9  # the sample's 9 log files
    read.clear()
    monkeypatch.setattr(spark_session, "local_memory_gib", lambda: 1)
    monkeypatch.setattr(engine, "DRIVER_BYTES_PER_LINE", 1 << 30)
    assert not engine.fits_the_driver([SAMPLE]) and len(read) == 1
