"""Kafka version strings as comparable tuples (the bottom layer: statemachines reuses this)."""

from __future__ import annotations

import re

from kafka_forensics.core.errors import UnknownKafkaVersionError

HEAD = (99,)
_VERSION_RE = re.compile(r"^\d+(?:\.\d+){0,3}$")


def parse_version(text: str) -> tuple[int, ...]:
    """``"0.8.2.2"`` → ``(0, 8, 2, 2)``; ``"HEAD"`` (trunk) sorts after every release."""
    value = text.strip()
    if value.upper() == "HEAD":
        return HEAD
    if value.lower().startswith("v"):
        value = value[1:]
    if not _VERSION_RE.match(value):
        raise UnknownKafkaVersionError(
            f"{text!r} is not a Kafka version (expected e.g. 0.10.2, 2.8.1, 3.9.0, 4.0)"
        )
    parts = tuple(int(p) for p in value.split("."))
    if parts[0] == 0 and len(parts) >= 2 and parts[1] < 7:
        raise UnknownKafkaVersionError(f"Kafka {text} predates the controller (0.8)")
    if parts[0] > 4 and parts != HEAD:
        raise UnknownKafkaVersionError(f"Kafka {text} is not a released version this tool knows")
    return parts


def major_minor(version: tuple[int, ...]) -> tuple[int, int]:
    return (version[0], version[1] if len(version) > 1 else 0)
