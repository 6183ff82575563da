"""Where the tests find the repository, its samples and the shared real-log corpus."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
DATA = TESTS / "data"
SAMPLES = REPO / "sample_logs"
SHARED = REPO.parent / "shared"
REAL_LOGS = SHARED / "real-logs"
