"""The project's own exception hierarchy.

Every error a user can cause is one of these, so the CLI can print one clear sentence and
pick the documented exit code; Lark and Spark errors are wrapped at the boundary where they
happen (``from`` keeps the original for ``--debug``).
"""

from __future__ import annotations


class KafkaForensicsError(Exception):
    """Base of every error kafka-forensics raises on purpose."""

    exit_code = 3


class UsageError(KafkaForensicsError):
    """The command line or a configuration value is wrong (exit 2)."""

    exit_code = 2


class InputError(KafkaForensicsError):
    """An input path is missing, unreadable, or holds no Kafka log lines (exit 2)."""

    exit_code = 2


class UnknownKafkaVersionError(UsageError):
    """``--kafka-version`` names no Kafka release this tool knows."""


class NoZooKeeperControllerError(UsageError):
    """The release has no ZooKeeper controller (KRaft, 4.0+), hence no partition/replica state machines."""


class LayoutError(UsageError):
    """A ``--layout`` ConversionPattern that the header grammar cannot follow."""


class GrammarError(KafkaForensicsError):
    """The bundled grammar failed to load: a bug in kafka-forensics, never the user's input."""


class JobError(KafkaForensicsError):
    """A Spark job failed (wraps the Py4J / Spark exception)."""


class LabError(KafkaForensicsError):
    """The lab could not set up or drive a real cluster (a broker that never started, a tool that
    failed, a scenario whose precondition Kafka did not reach): exit 3, one sentence."""
