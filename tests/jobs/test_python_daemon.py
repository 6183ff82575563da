"""The local Python workers' daemon (``jobs/python_daemon.py``): Spark's own, without the installed
pyspark's archive copies on the import path, which the worker re-reads before every task."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pyspark
import pytest

from kafka_forensics.jobs.python_daemon import redundant_archives
from kafka_forensics.jobs.spark_session import PYTHON_DAEMON, session_settings
from tests.support.paths import SAMPLES

PYSPARK_HOME = Path(pyspark.__file__).resolve().parent  # SPARK_HOME of a pip-installed pyspark
SITE_PACKAGES = str(PYSPARK_HOME.parent)


def spark_python_path() -> list[str]:
    """What ``PythonUtils.sparkPythonPath`` puts first on a worker's path for this installation:
    ``$SPARK_HOME/python/lib/pyspark.zip``, the py4j zip and the spark-core jar."""
    lib = PYSPARK_HOME / "python" / "lib"
    return [
        str(lib / "pyspark.zip"),
        *map(str, sorted(lib.glob("py4j-*-src.zip"))),
        *map(str, sorted((PYSPARK_HOME / "jars").glob("spark-core_*.jar"))),
    ]


def test_the_installed_pyspark_archives_are_dropped_and_nothing_else():
    archives = spark_python_path()
    assert len(archives) == 3 and all(zipfile.is_zipfile(a) for a in archives)
    path = ["/work/userFiles", *archives, *sys.path, SITE_PACKAGES]
    assert redundant_archives(path) == archives


def test_another_spark_installations_archives_are_kept(tmp_path):
    """A cluster's SPARK_HOME (not the pyspark this interpreter imports) keeps its own zip: the workers
    must run the Python side of the JVM they talk to."""
    foreign = tmp_path / "spark-4.1.4-bin-hadoop3" / "python" / "lib" / "pyspark.zip"
    foreign.parent.mkdir(parents=True)
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("pyspark/__init__.py", "")
    assert redundant_archives([str(foreign), SITE_PACKAGES]) == []
    assert redundant_archives([*spark_python_path(), str(foreign), SITE_PACKAGES]) == spark_python_path()


def test_without_a_directory_install_nothing_is_dropped():
    """pyspark only in the archives (no pip install beside them): they are the only copy, kept."""
    assert redundant_archives(spark_python_path()) == []


def test_a_local_launch_uses_it_a_cluster_or_a_running_jvm_does_not():
    sample = [str(SAMPLES / "kafka-2.4-controller-failover")]
    for master in ("local[2]", None):
        assert session_settings(master, {}, sample).items() >= PYTHON_DAEMON.items()
    assert "spark.python.daemon.module" not in session_settings("spark://cluster:7077", {}, sample)
    assert "spark.python.daemon.module" not in session_settings(None, {}, sample, {"spark.master": "local[2]"})
    own = {"spark.python.daemon.module": "pyspark.daemon"}
    assert session_settings("local[2]", dict(own), sample).items() >= own.items()


@pytest.mark.spark
def test_the_sessions_workers_import_pyspark_from_its_directory(spark):
    def where(_):
        import pyspark as worker_pyspark

        yield worker_pyspark.__file__, [p for p in sys.path if os.path.isfile(p) and zipfile.is_zipfile(p)]

    (file, archives), *_ = spark.sparkContext.parallelize([0], 1).mapPartitions(where).collect()
    assert Path(file).resolve() == PYSPARK_HOME / "__init__.py"
    assert not set(archives) & set(spark_python_path())
