"""Suite names and expectation severities: no GX import, so the CLI checks ``--config`` before Spark starts."""

from __future__ import annotations

SUITES = ("events", "timelines", "failover", "impact")
SEVERITIES = ("critical", "warning", "info")  # GX 1.x expectation severities
