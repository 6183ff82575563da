"""kafka_forensics.expectations."""
