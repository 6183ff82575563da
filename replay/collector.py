"""How often CPython's cycle collector scans the whole heap while a replay runs.

The replay allocates a few dozen short-lived tuples and dicts per line (observations, states, rows,
findings) while the heap it keeps grows with the input (the events, the timelines). CPython runs a
full collection whenever the objects promoted since the last one exceed a quarter of the old ones,
so a growing replay scans its whole heap again and again: on the generated 2.4 TRACE log that was
a third of the replay's CPU (bench/RESULTS.md, "Replay µs/event"), and it finds nothing, because the
replay makes no reference cycles. Young collections still run as usual (they are cheap and free
any young cycle); only the full scans are spaced out, and the thresholds are restored on exit.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

# A full collection after this many collections of the middle generation (CPython's default: 10),
# i.e. after roughly 700 x 10 x 1000 = 7 million container allocations instead of 70 thousand.
FULL_COLLECTION_EVERY = 1000


@contextmanager
def rare_full_collections() -> Iterator[None]:
    """Within the block, full collections of the heap are ``FULL_COLLECTION_EVERY`` times rarer."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, max(old, FULL_COLLECTION_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)
