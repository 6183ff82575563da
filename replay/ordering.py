"""The order in which one partition's lines are replayed: controller epoch, then time, then file position.

Why not time alone: several brokers write the lines of one partition and their clocks differ, a
shared file interleaves them, timestamps go backwards (``ts_out_of_order``) and rotated file names
lie. The controller epoch is the one clock every broker agrees on: it only grows, every
controller-authored line carries it (``[Controller id=1 epoch=7]``, ``Controller 1 epoch 7 ...``),
and broker-side lines carry the epoch of the controller whose request they handle. So lines are
ordered by epoch first; inside one epoch almost every line comes from the one active controller,
whose own clock is monotonic, so time orders them; equal times fall back to (source_file,
line_no), the order the broker wrote them. A skewed broker clock can therefore only reorder lines
inside one controller epoch, never move a line across a failover.

Lines without an epoch (server.log ISR changes, 2.6+ ``Leader t-p starts at ...``, controller.log
callbacks) get the epoch of the controller that was active at their timestamp (the cluster's
controller intervals); if none is known, the epoch of the nearest earlier line of the same
partition, else the nearest later one, else -1.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable, Optional

_MIN_TS = datetime.min.replace(tzinfo=timezone.utc)


def _time_key(event: dict) -> tuple:
    ts = event.get("ts")
    return (ts is None, ts or _MIN_TS, event["source_file"], event["line_no"])


def assign_epochs(events: list[dict], epoch_at: Callable[[Optional[datetime]], Optional[int]]) -> list[int]:
    """The effective controller epoch of each event (same order as ``events``, sorted by time)."""
    explicit = [e.get("controller_epoch") for e in events]
    from_cluster = [x if x is not None else epoch_at(e.get("ts")) for x, e in zip(explicit, events)]
    out: list[Optional[int]] = list(from_cluster)
    last: Optional[int] = None
    for i, value in enumerate(out):
        if value is None:
            out[i] = last
        else:
            last = value
    nxt: Optional[int] = None
    for i in range(len(out) - 1, -1, -1):
        if from_cluster[i] is not None:
            nxt = from_cluster[i]
        elif out[i] is None:
            out[i] = nxt
    return [-1 if v is None else v for v in out]


def replay_order(
    events: list[dict],
    epoch_at: Callable[[Optional[datetime]], Optional[int]],
    generation_at: Callable[[Optional[datetime]], int] = lambda ts: 0,
) -> list[tuple[int, int, dict]]:
    """``[(generation, effective_epoch, event)]`` in replay order: (generation, epoch, ts, file, line).

    A generation ends where the controller epoch was reset (a new election with a lower epoch,
    ``ClusterContext.generation_at``): epochs only order lines within one generation.
    """
    keys = sorted((_time_key(e), i) for i, e in enumerate(events))  # (time key, index): never compares events
    by_time = [events[i] for _, i in keys]
    ranks = list(zip([generation_at(e.get("ts")) for e in by_time], assign_epochs(by_time, epoch_at)))
    # the stable sort of by_time by (generation, epoch), which keeps time order within each (ranks mostly grow
    # already, one controller at a time: Timsort then makes one pass)
    order = sorted(range(len(by_time)), key=ranks.__getitem__)
    return [(*ranks[n], by_time[n]) for n in order]
