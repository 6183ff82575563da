"""The Python workers' daemon, minus pyspark's own archives on the import path.

Spark starts every local Python worker with ``$SPARK_HOME/python/lib/pyspark.zip``, the py4j zip
and the spark-core jar first on ``PYTHONPATH`` (``PythonUtils.sparkPythonPath``). With pyspark
installed by pip, ``SPARK_HOME`` is that installed package, so these archives are copies of, or
additions to, what the environment already imports from its own directory. They are not free:
before each task the worker calls ``importlib.invalidate_caches()`` (``worker_util.setup_spark_files``),
and since Python 3.10 that re-reads the whole directory of every archive on the path, once per
package imported from it. With the 5,362-entry spark-core jar and pyspark.zip, a task that does
nothing cost 169 ms of CPU instead of 66 (bench/RESULTS.md, "0.1 s of CPU per Python task"; the call
is made conditional upstream by SPARK-54744, which pyspark 4.1.4, the newest Great Expectations
1.24.1 allows, does not have).

This module is Spark's daemon (``spark.python.daemon.module``, set by ``spark_session`` for the
sessions it launches) with one step first: before pyspark is imported, it drops from ``sys.path``
the archives that lie inside the pyspark installation the interpreter would otherwise import
from a directory. Only that installation's own archives go, so the workers run the same pyspark
as the driver; a separate Spark installation's archives (a cluster's ``SPARK_HOME``) are kept.
"""

from __future__ import annotations

import os
import runpy
import sys
import zipfile
from importlib.machinery import PathFinder


def _is_archive(entry: str) -> bool:
    return os.path.isfile(entry) and zipfile.is_zipfile(entry)


def redundant_archives(path: list[str]) -> list[str]:
    """The archive entries of ``path`` inside the directory-installed pyspark's own folder."""
    directories = [entry for entry in path if not _is_archive(entry)]
    spec = PathFinder.find_spec("pyspark", directories)
    if spec is None or not spec.submodule_search_locations:
        return []
    home = os.path.realpath(next(iter(spec.submodule_search_locations)))
    return [
        entry for entry in path if _is_archive(entry) and os.path.commonpath([home, os.path.realpath(entry)]) == home
    ]


def main() -> None:
    dropped = set(redundant_archives(sys.path))
    sys.path[:] = [entry for entry in sys.path if entry not in dropped]
    for entry in dropped:
        sys.path_importer_cache.pop(entry, None)
    runpy.run_module("pyspark.daemon", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
