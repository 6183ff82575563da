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
