"""kafka_forensics.reports."""
