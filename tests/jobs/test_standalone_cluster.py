"""``analyze --master spark://...`` on a real Spark standalone cluster (a master and two workers on
loopback, started from pyspark's own spark-class) gives the tables, findings and verdict of the
local run, byte for byte where bytes are the contract.

What a cluster changes, and a local run never exercises:
- tasks run in executor JVMs (one per worker) with their own Python workers, in the workers' own
  directories: nothing may rely on the driver's working directory, memory or files;
- the events are written by Spark's writer (the workers' pyarrow writer is only for a local master);
- the replay's cluster contexts reach the executors as a broadcast;
- the executors run in another time zone (America/New_York) and with a cold grammar cache of their
  own, as machines of a real cluster may.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.core.user_cache import ENV as CACHE_ENV
from tests.support.outputs import canonical
from tests.support.paths import SAMPLES
from tests.support.standalone_cluster import standalone_cluster

# bin/spark-class starts the daemons with $JAVA_HOME/bin/java, else the java on the PATH
JAVA = (Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else None
if not (JAVA is not None and JAVA.exists()) and shutil.which("java") is None:
    pytest.skip(
        "no Java: the standalone master and workers need $JAVA_HOME or java on the PATH", allow_module_level=True
    )

SAMPLE = "kafka-2.4-controller-failover"
RELATIVE_INPUT = f"sample_logs/{SAMPLE}"
WORKER_PYARROW_NAME = re.compile(r"^part-[0-9a-f]{20}\.parquet$")  # jobs/events_writer.part_name
CLUSTER_CONF = {
    "spark.executor.memory": "512m",
    "spark.executor.cores": "1",
    "spark.cores.max": "2",
    # start only when both executors are up, so the tasks are spread over both workers
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A directory holding the sample under a relative path, from which both runs start."""
    root = tmp_path_factory.mktemp("standalone")
    shutil.copytree(SAMPLES / SAMPLE, root / RELATIVE_INPUT)
    return root


@pytest.fixture(scope="module")
def cluster_run(workdir):
    """analyze on a fresh standalone cluster, as a separate driver process (its own JVM)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    kafka_forensics = Path(sys.executable).parent / "kafka-forensics"
    executor_env = {"TZ": "America/New_York", CACHE_ENV: str(workdir / "executor-cache")}
    with standalone_cluster(workdir / "cluster", workers=2, cores=1, memory="1g", worker_env=executor_env) as cluster:
        command = [str(kafka_forensics), "analyze", RELATIVE_INPUT, "--out", "cluster-out", "--master"]
        command.append(cluster.master_url)
        for key, value in CLUSTER_CONF.items():
            command += ["--conf", f"{key}={value}"]
        done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=900)
        executor_logs = sorted(p for w in cluster.work_dirs for p in w.glob("app-*/*/stderr"))
        logs = {p: p.read_text(encoding="utf-8", errors="replace") for p in executor_logs}
    return done, workdir / "cluster-out", cluster.work_dirs, logs


@pytest.fixture(scope="module")
def local_run(spark, workdir):
    """The same command on the shared local session (local[2]) from the same directory."""
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        result = CliRunner().invoke(main, ["analyze", RELATIVE_INPUT, "--out", "local-out"])
    finally:
        os.chdir(cwd)
    return result, workdir / "local-out"


@pytest.mark.spark
def test_the_cluster_ran_the_tasks_in_executors_on_both_workers(cluster_run):
    done, out, work_dirs, logs = cluster_run
    assert done.returncode == 1, done.stderr[-3000:]  # the sample's zombie controller fails its expectations
    assert "verdict     FAILED" in done.stdout and "Traceback" not in done.stderr
    for work_dir in work_dirs:
        assert list(work_dir.glob("app-*/*/stderr")), f"no executor ran on {work_dir.name}"
    finished = sum(text.count("Finished task") for text in logs.values())
    assert finished > 0, "no task finished in an executor"
    # Spark's writer wrote the events (a local master would have the Python workers write them)
    names = [p.name for p in (out / "events").glob("*.parquet")]
    assert names and not [n for n in names if WORKER_PYARROW_NAME.match(n)]


@pytest.mark.spark
def test_tables_findings_and_verdict_equal_the_local_run(cluster_run, local_run):
    done, cluster_out, _, _ = cluster_run
    result, local_out = local_run
    assert result.exit_code == 1, result.output
    assert done.returncode == 1, done.stderr[-3000:]
    # the local run took the local-only path: its workers wrote the events themselves
    assert all(WORKER_PYARROW_NAME.match(p.name) for p in (local_out / "events").glob("*.parquet"))
    local, remote = canonical(local_out), canonical(cluster_out)
    for name, (schema, rows) in local["tables"].items():
        remote_schema, remote_rows = remote["tables"][name]
        assert remote_schema == schema, name
        assert len(remote_rows) == len(rows) and remote_rows == rows, name
    assert remote["findings.jsonl"] == local["findings.jsonl"]
    assert remote["verdict"] == local["verdict"]
    assert local["tables"]["events"][1] and local["findings.jsonl"]  # not two empty runs
