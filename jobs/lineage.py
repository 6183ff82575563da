"""Cutting a DataFrame's lineage where a plan is used more than once.

A DataFrame joined back onto something derived from itself (episodes joined with the episodes an
unclean election ended, then with the leader each one last saw, then with the topic deletions that
cut them) carries its whole plan into each side of the join: three such joins in a row made the
``impact`` plan 10,497 lines (5.6 MB of text) from a 960-line input plan, and Spark spent ~30 s
analysing, optimising and recomputing it on the 584-line bundled sample (bench/RESULTS.md, "Plan
size"). ``materialized`` computes the DataFrame once into the executors' block stores (memory, then
disk: never the driver) and returns a DataFrame whose plan is one scan of those blocks. Only for
intermediate results bounded by what they describe (episodes, not log lines): materializing is a
full pass over the data.
"""

from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import DataFrame


def materialized(df: DataFrame) -> DataFrame:
    """``df`` computed now, as a DataFrame whose plan is a scan of the computed blocks.

    Local checkpoint blocks are freed by Spark's context cleaner once nothing refers to the returned
    DataFrame (``unpersist`` does not reach them)."""
    return df.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)


__all__ = ["materialized"]
