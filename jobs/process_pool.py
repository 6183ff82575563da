"""A pool of worker processes for the driver engine's stages that hold the GIL (the parse's splits, the replay's buckets).

Why one module: both stages are pure Python and Polars/Arrow work that one core does alone, and both hand a pool
independent items with small results (and the report is built in a process of its own beside the check,
``report_beside``). What they share is how the workers start, how work is dealt and how an error or Ctrl-C ends
them; each stage keeps its own gate (``parse_pool``, ``replay_partitions``).

How the workers start: ``forkserver``. Plain ``fork`` copies a parent whose Polars/pyarrow thread pools may
hold locks (a notebook's second parse) and can deadlock; ``forkserver`` forks each worker from a fresh
single-threaded server process that imports the stages once (``_PRELOAD``), so a worker costs a fork, not an
interpreter start and the imports; ``spawn`` pays the imports again in each worker (the measurements:
bench/RESULTS.md, "The driver parse on every core"). One server serves a process's every pool (``analyze``'s
parse, then its replay), so it preloads both stages.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

START_METHOD = "forkserver"
# What the server imports once, so that every worker forked from it has it loaded: the caller's main module
# (which each worker would import otherwise, as multiprocessing does), the parse, the replay, and pandas, which
# pyarrow imports when it first converts Python datetimes (0.3 s, in the middle of a worker's first file).
_PRELOAD = ["__main__", "kafka_forensics.jobs.parse_driver", "kafka_forensics.jobs.replay_driver", "pandas"]


def cores() -> int:
    """The cores this process may run on (its affinity, as a container or ``taskset`` limits it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def may_fork() -> bool:
    """Whether this process may start a pool at all: several cores, and not a daemonic process (which may not
    have children)."""
    return cores() >= 2 and not multiprocessing.current_process().daemon


def server_context() -> Any:
    """The multiprocessing context the driver engine's processes start from (``START_METHOD``, with ``_PRELOAD``)."""
    context = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        context.set_forkserver_preload(_PRELOAD)
    return context


def map_in_pool(function: Callable[[T], R], items: Sequence[T], workers: int, cost: Callable[[T], int]) -> list[R]:
    """``[function(item) for item in items]`` in a pool of ``workers`` processes: the costliest items are
    dealt first (the last to start are then the short ones), the results come back in ``items``' order.

    An item's error is raised here as the serial loop would raise it: the first failing item in
    ``items``' order, its own exception (type and message). On any error, and on Ctrl-C, the workers
    still running are ended before this returns, so none outlives the stage."""
    context = server_context()
    order = sorted(range(len(items)), key=lambda k: -cost(items[k]))
    pool = ProcessPoolExecutor(workers, mp_context=context)
    try:
        futures: dict[int, Future] = {k: pool.submit(function, items[k]) for k in order}
        results = [futures[k].result() for k in range(len(items))]
    except BaseException:
        _end(pool)
        raise
    pool.shutdown(wait=True)
    return results


def _end(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers that run (``terminate_workers`` from Python 3.14)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join()


__all__ = ["cores", "map_in_pool", "may_fork", "server_context"]
