"""Import the modules a later stage needs while the JVM starts.

Great Expectations takes about 3 s of CPU to import (``bench/RESULTS.md``, "First run"), and the
check stage used to pay it in the middle of the run. While ``build_session`` waits for the JVM to
come up (seconds, in another process) this Python process is idle, so a command that will need
GX starts importing it in a background thread first: on two cores the import runs beside the
JVM's start instead of after it. The caller joins the thread as soon as the session is up, so
the background import never overlaps the main thread's own imports (the parse job's): only the
wait for the JVM is shared. An import that fails in the background is simply imported again
(and fails, with its real traceback) where it is used.
"""

from __future__ import annotations

import importlib
import threading
from typing import Iterable

# What the check stage imports (GX and the suites built on it).
CHECK_MODULES = ("kafka_forensics.expectations.suites", "kafka_forensics.expectations.gx_run")


def import_in_background(modules: Iterable[str]) -> threading.Thread:
    """Start importing ``modules`` in a daemon thread; returns the thread (joining it is optional)."""
    names = tuple(modules)

    def run() -> None:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # reported where the module is really used
                return

    thread = threading.Thread(target=run, name="kafka-forensics-warm-imports", daemon=True)
    thread.start()
    return thread
