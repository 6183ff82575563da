"""Small files next to the tables (summaries, JSONL) on any Hadoop filesystem."""

from __future__ import annotations

from pyspark.sql import SparkSession


def write_text(spark: SparkSession, path: str, text: str) -> None:
    """Write a whole text file through Hadoop's FileSystem (local, hdfs://, s3a://)."""
    jvm = spark.sparkContext._jvm
    target = jvm.org.apache.hadoop.fs.Path(path)
    fs = target.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    stream = fs.create(target, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def _fs(spark: SparkSession, path: str):
    jvm = spark.sparkContext._jvm
    target = jvm.org.apache.hadoop.fs.Path(path)
    return target, target.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def path_exists(spark: SparkSession, path: str) -> bool:
    target, fs = _fs(spark, path)
    return bool(fs.exists(target))


def delete_path(spark: SparkSession, path: str) -> None:
    target, fs = _fs(spark, path)
    if fs.exists(target):
        fs.delete(target, True)


def rename_path(spark: SparkSession, source: str, destination: str) -> None:
    """Move a directory (atomic on HDFS and local disks; a copy on object stores)."""
    src, fs = _fs(spark, source)
    dst, _ = _fs(spark, destination)
    if not fs.rename(src, dst):
        raise OSError(f"could not move {source} to {destination}")
