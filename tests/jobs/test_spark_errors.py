"""The one sentence a user sees when a Spark action fails."""

from __future__ import annotations

from kafka_forensics.jobs.spark_errors import short_error

# The shape of a Py4JJavaError's text from a failed write (abridged from a real run, Spark 4.1.4).
PY4J_TEXT = """An error occurred while calling o99.parquet.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 1 times, most recent failure: Lost task 0.0 in stage 0.0 (TID 0) (localhost executor driver): org.apache.spark.SparkException: [TASK_WRITE_FAILED] Task failed while writing rows to file:/tmp/out/_staging.
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.taskFailedWhileWritingRowsError(QueryExecutionErrors.scala:774)
\tat org.apache.spark.executor.Executor$TaskRunner.run(Executor.scala:876)
Caused by: org.apache.spark.SparkException: The length of file:/tmp/bigf/broker-1/state-change.log is 11963, which exceeds the max length allowed: 1000.
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.fileLengthExceedsMaxLengthError(QueryExecutionErrors.scala:1500)
\t... 1 more
"""


class FakePy4JError(Exception):
    pass


def test_innermost_cause_is_the_sentence():
    assert short_error(FakePy4JError(PY4J_TEXT)) == (
        "The length of file:/tmp/bigf/broker-1/state-change.log is 11963, which exceeds the max length allowed: 1000."
    )


def test_without_a_cause_the_first_exception_message_after_py4js_line():
    text = (
        "An error occurred while calling o12.count.\n: java.lang.OutOfMemoryError: Java heap space\n\tat x.y(Z.java:1)"
    )
    assert short_error(FakePy4JError(text)) == "Java heap space"


def test_plain_errors_keep_their_first_line_and_limit():
    assert short_error(ValueError("bad value\nmore")) == "bad value"
    assert short_error(ValueError("x" * 900), 300) == "x" * 300
    assert short_error(ValueError("")) == "ValueError"


# A Python worker's failure as Py4J reports it (abridged from a real run, Spark 4.1.4): the
# sentence is the Python exception, not "Please see the stack trace below" (which nobody sees).
PY4J_PYTHON_TEXT = """An error occurred while calling o84.parquet.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 1 times, most recent failure: Lost task 0.0 in stage 0.0 (TID 0) (192.0.2.2 executor driver): org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/work/jobs/parse_job.py", line 89, in parse_arrow_batches
    result = parse_file(data, displays.get(uri, uri), options)
  File "/usr/lib/python3.11/_strptime.py", line 349, in _strptime
    raise ValueError("time data %r does not match format %r" %
ValueError: time data '2021-02-30 25:61:61' does not match format '%Y-%m-%d %H:%M:%S'

\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:645)
Caused by: org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/work/jobs/parse_job.py", line 89, in parse_arrow_batches
ValueError: time data '2021-02-30 25:61:61' does not match format '%Y-%m-%d %H:%M:%S'
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(PythonRunner.scala:645)
"""


def test_a_python_workers_exception_is_the_sentence():
    assert short_error(FakePy4JError(PY4J_PYTHON_TEXT)) == (
        "ValueError: time data '2021-02-30 25:61:61' does not match format '%Y-%m-%d %H:%M:%S' (in a Python worker)"
    )
