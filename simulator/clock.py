"""Simulated time: one cluster clock in milliseconds, rendered as log4j's ISO8601 ``%d``.

Every pause between two log lines comes from the seeded RNG, so the same seed gives the same
timestamps; brokers may run skewed (``skew_ms``), which only changes what they print.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timezone

DEFAULT_START = datetime(2024, 3, 4, 10, 0, 0, tzinfo=timezone.utc)
HOUR_MS = 3_600_000


class SimClock:
    """Cluster time (UTC ms since the epoch) advanced by seeded random steps."""

    __slots__ = ("_sec", "_sec_text", "now", "rng")

    def __init__(self, rng: random.Random, start: datetime = DEFAULT_START) -> None:
        self.now = int(start.timestamp() * 1000)
        self.rng = rng
        self._sec = -1
        self._sec_text = ""

    def tick(self, lo: int = 0, hi: int = 2) -> int:
        """Advance by a random ``lo..hi`` ms (a line or two of work on one thread)."""
        self.now += lo if lo == hi else self.rng.randint(lo, hi)
        return self.now

    def sleep(self, ms: int) -> int:
        """Advance by exactly ``ms`` (timeouts: session expiry, replica lag, scheduler periods)."""
        self.now += ms
        return self.now

    def stamp(self, ms: int) -> str:
        """``2024-03-04 10:15:23,456`` (log4j 1.x ISO8601 ``%d``, kafka-log-formats.md §1)."""
        sec, milli = divmod(ms, 1000)
        if sec != self._sec:
            self._sec = sec
            self._sec_text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(sec))
        return f"{self._sec_text},{milli:03d}"


def hour_suffix(hour_key: int) -> str:
    """DailyRollingFileAppender ``DatePattern='.'yyyy-MM-dd-HH`` of an hour (ms // HOUR_MS)."""
    return time.strftime("%Y-%m-%d-%H", time.gmtime(hour_key * 3600))


def iso_utc(ms: int) -> str:
    """``2024-03-04T10:15:23.456Z`` (how truth.json and findings print instants)."""
    sec, milli = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + f".{milli:03d}Z"
