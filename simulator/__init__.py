"""The cluster simulator: writes Kafka logs version by version, with known truth (issue 4)."""
