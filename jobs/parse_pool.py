"""The driver engine's parse on every core: its splits in a pool of processes, for an input large enough to pay for it.

Why: the driver engine (``parse_driver``) parses one split after another in one process, and the parse is
pure Python and Polars work of the GIL-holding kind, so one core does it all: 10.6 s of ``analyze``'s 44 s on
998,821 simulated lines. Splits are independent (each worker writes its own events file and returns only
small rows), so a pool of ``min(cores, splits)`` processes parses them side by side.

The pool itself (its start method, how work is dealt, how an error ends it) is ``process_pool``'s.

What it costs, hence the gate (``POOL_MIN_PARSE_SECONDS``): the server's start and imports, and each worker
building the grammars of the dialects it meets (which the serial parse builds once), before any gain.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from .engine import estimated_file_lines
from .process_pool import cores, map_in_pool, may_fork

# The serial parse's cost per line, by the path a file takes (``parsers.columnar.ROW_BY_ROW_BELOW``):
# measured on this 2-core machine (2026-11-27): the 511 small files of sample_logs/ (138,449 lines,
# row by row) 9.4 s besides the grammars' first builds; 998,821 simulated 2.4 TRACE lines in 90 files
# (column-wise) 10.6 s.
ROW_BY_ROW_SECONDS_PER_LINE = 68e-6
COLUMNAR_SECONDS_PER_LINE = 11e-6

POOL_MIN_PARSE_SECONDS = 3.0
"""The least estimated serial parse time (``estimated_parse_seconds``) for which the driver parses in a pool.

The pool's fixed cost, measured on this 2-core machine (bench/RESULTS.md, "The driver parse on every core"): the
forkserver's imports (about 0.7 s of CPU) and each worker's own parser builds (0.2-0.5 s per dialect it meets,
which the serial parse builds once): the bundled sample forced into the pool took 1.8 s of CPU against 0.66 s
serially, sample_logs/ (30 dialects) 21.6 s against 17.3 s, a million lines 12.8 s against 12.0 s. On two free
cores a serial parse of S seconds took S / 2 plus 1 to 2.5 s in the pool (the bundled sample 0.67 -> 1.31 s, a
million lines 10.7 -> 7.1 s, sample_logs/ 17.8 -> 11.4 s), a gain only past about 3 s. The bundled sample
(estimated 0.04 s) stays serial; sample_logs/ (estimated 9.4 s) and a million lines (12.0 s) take the pool.
The gate looks at the input only: when other processes hold the cores, the pool was 11-20 % slower."""

# Split size in the pool: large plain files are cut so that the work balances over the workers (about
# ``_SPLITS_PER_WORKER`` pieces each, dealt largest first) and a worker's memory stays bounded (a split's
# parse peaks at about 7 times its bytes, parse_driver.WHOLE_FILES), but not so small that a split's fixed
# cost (finding its first record line, a few Polars queries) shows.
_SPLITS_PER_WORKER = 4
MIN_SPLIT_BYTES = 4 << 20
MAX_SPLIT_BYTES = 32 << 20


def estimated_parse_seconds(paths: Iterable[str], row_by_row_below: int, enough: float = float("inf")) -> float:
    """The serial parse's time for the files at ``paths``, estimated from their lines
    (``engine.estimated_file_lines``) and the path each file takes; files are sampled only until the
    estimate reaches ``enough``."""
    total = 0.0
    for path in paths:
        try:
            lines = estimated_file_lines(path)
        except OSError:
            continue  # unreadable: the parse reports it
        rate = ROW_BY_ROW_SECONDS_PER_LINE if lines < row_by_row_below else COLUMNAR_SECONDS_PER_LINE
        total += lines * rate
        if total >= enough:
            break
    return total


def pool_workers(paths: Sequence[str], row_by_row_below: int, min_seconds: float = POOL_MIN_PARSE_SECONDS) -> int:
    """How many processes parse the files at ``paths``: 1 (this one, serially) unless the input is large enough
    for a pool to pay for itself (``POOL_MIN_PARSE_SECONDS``) and there are several cores (the caller takes no
    more than it has splits: one large plain file is cut into several)."""
    if not may_fork():
        return 1
    if estimated_parse_seconds(paths, row_by_row_below, min_seconds) < min_seconds:
        return 1
    return cores()


def pool_split_bytes(total_bytes: int, workers: int) -> int:
    """The split size for ``workers`` processes sharing ``total_bytes`` of input (see ``MAX_SPLIT_BYTES``)."""
    return max(MIN_SPLIT_BYTES, min(MAX_SPLIT_BYTES, total_bytes // (workers * _SPLITS_PER_WORKER)))


__all__ = ["POOL_MIN_PARSE_SECONDS", "map_in_pool", "pool_split_bytes", "pool_workers"]
