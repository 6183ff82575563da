"""kafka_forensics.jobs."""
