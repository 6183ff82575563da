"""The Kafka versions the simulator writes, and what each one's default config and build imply.

A simulated log is only useful if its text is exactly one release's, so the simulator supports a
fixed list of releases (one per log-format era, kafka-log-formats.md §3) rather than guessing
renderings for versions nobody checked. ``--kafka-version`` may name any patch of a supported line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from kafka_forensics.core.errors import UnknownKafkaVersionError, UsageError
from kafka_forensics.core.versions import KafkaVersion

TRACE, DEBUG, INFO, WARN, ERROR = 0, 1, 2, 3, 4
LEVEL_NAMES = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR")


@dataclass(frozen=True)
class Profile:
    """One supported release: its exact tag, format era and default logging.

    ``state_change_default``: ``log4j.logger.state.change.logger`` in the shipped
    config/log4j.properties - TRACE up to 2.5.x, INFO from 2.6.0 (KAFKA-8470,
    config/log4j.properties@2.6.3). ``kafka.controller`` stays TRACE in ZooKeeper mode in every
    release; KRaft controller classes log at INFO to controller.log from 3.3
    (config/log4j.properties@3.3.2). ``scala``: the binary version of the default download, which
    decides how collections print (``Set(1, 2)`` vs 2.13's ``HashSet(1, 2)``).
    """

    line: str  # "2.4"
    tag: str  # "2.4.1": the release whose source the templates were read from
    era: str  # template module: zk-0.10 | zk-1.1 | zk-2.4 | zk-2.6 | zk-3.x | kraft
    kraft: bool
    state_change_default: int
    scala: str
    commit_id: str  # AppInfoParser "Kafka commitId" of that release (server.log)

    @property
    def version(self) -> KafkaVersion:
        return _parse(self.tag)

    @property
    def label(self) -> str:
        return f"{self.tag}{' (KRaft)' if self.kraft else ' (ZooKeeper)'}"

    def at_least(self, text: str) -> bool:
        return _at_least(self.tag, text)


@lru_cache(maxsize=None)
def _parse(text: str) -> KafkaVersion:
    return KafkaVersion.parse(text)


@lru_cache(maxsize=None)
def _at_least(tag: str, text: str) -> bool:
    """Called for every rendered value: cached, the answer never changes."""
    return _parse(tag) >= _parse(text)


# The commit ids are the "Kafka commitId" each release prints (AppInfoParser); they only make the
# server.log header realistic and are never parsed for meaning.
PROFILES: dict[str, Profile] = {
    "0.10.2": Profile("0.10.2", "0.10.2.2", "zk-0.10", False, TRACE, "2.11", "5c5d80f7cfb0a5a1"),
    "1.1": Profile("1.1", "1.1.1", "zk-1.1", False, TRACE, "2.12", "8e07427ffb493498"),
    "2.4": Profile("2.4", "2.4.1", "zk-2.4", False, TRACE, "2.12", "c57222ae8cd7866b"),
    "2.8": Profile("2.8", "2.8.2", "zk-2.6", False, INFO, "2.13", "3146c6ff4a24cc24"),
    "3.6": Profile("3.6", "3.6.2", "zk-3.x", False, INFO, "2.13", "5e3c2b738d253ff5"),
    "3.9-kraft": Profile("3.9", "3.9.0", "kraft", True, INFO, "2.13", "a60e31147e6b01ee"),
}
SUPPORTED = tuple(PROFILES)


def profile_for(text: str) -> Profile:
    """The profile for ``--kafka-version`` (``2.4``, ``2.4.1``, ``0.10.2.2``, ``3.9-kraft``, ``3.9``).

    ``3.9`` means KRaft (the simulator writes 3.9 only in KRaft mode); anything outside the
    supported lines is a usage error naming them.
    """
    raw = (text or "").strip().lower()
    kraft = raw.endswith("kraft")
    base = raw.removesuffix("kraft").rstrip("-")
    try:
        version = KafkaVersion.parse(base)
    except UnknownKafkaVersionError as err:
        raise UsageError(f"{err}; the simulator writes {', '.join(SUPPORTED)}") from None
    key = version.line
    if key == "3.9":
        key = "3.9-kraft"
    elif kraft:
        raise UsageError(f"the simulator writes KRaft logs only for 3.9 (3.9-kraft), not {text}")
    if key not in PROFILES:
        raise UsageError(
            f"the simulator does not write Kafka {text}; supported: {', '.join(SUPPORTED)}"
        )
    return PROFILES[key]
