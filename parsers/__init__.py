"""kafka_forensics.parsers."""
