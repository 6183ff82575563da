"""The lab's one error type (a kind of the project's ``KafkaForensicsError``: one sentence, exit 3)."""

from __future__ import annotations

from kafka_forensics.parsers.errors import KafkaForensicsError


class LabError(KafkaForensicsError):
    """The lab could not set up or drive a cluster (a broker that never started, a tool that failed,
    a scenario whose precondition Kafka did not reach)."""

    exit_code = 3
