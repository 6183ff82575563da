"""The Kafka versions the simulator writes, and what each one's default config and build imply.

A simulated log is only useful if its text is exactly one release's, so the simulator supports a
fixed list of releases (one per log-format era, kafka-log-formats.md §3) rather than guessing
renderings for versions nobody checked. ``--kafka-version`` may name any patch of a supported line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from kafka_forensics.core.eras import dialect_for_release, state_change_logger_at_info
from kafka_forensics.core.errors import UsageError
from kafka_forensics.core.versions import KafkaRelease, KafkaVersion, read_kafka_version

TRACE, DEBUG, INFO, WARN, ERROR = 0, 1, 2, 3, 4
LEVEL_NAMES = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR")


@dataclass(frozen=True)
class Profile:
    """One supported release: its exact tag and build; its format era and default logging come from
    the one era table (``core.eras``).

    ``state_change_default``: ``log4j.logger.state.change.logger`` in the shipped
    config/log4j.properties - TRACE up to 2.5.x, INFO from 2.6.0 (KAFKA-8470,
    config/log4j.properties@2.6.3). ``kafka.controller`` stays TRACE in ZooKeeper mode in every
    release; KRaft controller classes log at INFO to controller.log from 3.3
    (config/log4j.properties@3.3.2). ``scala``: the binary version of the default download, which
    decides how collections print (``Set(1, 2)`` vs 2.13's ``HashSet(1, 2)``).
    """

    line: str  # "2.4"
    tag: str  # "2.4.1": the release whose source the templates were read from
    kraft: bool
    scala: str
    commit_id: str  # AppInfoParser "Kafka commitId" of that release (server.log)

    @property
    def version(self) -> KafkaVersion:
        return _parse(self.tag)

    @property
    def dialect(self) -> str:
        """The log-format era the release writes (``zk-0.8`` … ``zk-3.x``, ``kraft``): picks the templates."""
        return dialect_for_release(KafkaRelease(self.version, self.kraft, self.tag)).name

    @property
    def state_change_default(self) -> int:
        return INFO if state_change_logger_at_info(self.version) else TRACE

    @property
    def isr_through_controller(self) -> bool:
        """From 2.7 a leader sends its ISR changes to the controller (AlterIsr, KIP-497; queued on the
        controller's event thread, KafkaController.processAlterIsr@2.8.2:2287) instead of writing
        them to ZooKeeper itself (Partition.scala@2.6.3 ``updateIsr``). Not a state-machine rule, so
        not in ``core.rule_changes`` (whose entries split the eras)."""
        return self.at_least("2.7")

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
    "0.10.2": Profile("0.10.2", "0.10.2.2", False, "2.11", "5c5d80f7cfb0a5a1"),
    "1.1": Profile("1.1", "1.1.1", False, "2.12", "8e07427ffb493498"),
    "2.4": Profile("2.4", "2.4.1", False, "2.12", "c57222ae8cd7866b"),
    "2.8": Profile("2.8", "2.8.2", False, "2.13", "3146c6ff4a24cc24"),
    "3.6": Profile("3.6", "3.6.2", False, "2.13", "5e3c2b738d253ff5"),
    "3.9-kraft": Profile("3.9", "3.9.0", True, "2.13", "a60e31147e6b01ee"),
    # 4.x is KRaft only; its controller lines are 3.9's except where a template says otherwise.
    "4.1-kraft": Profile("4.1", "4.1.1", True, "2.13", "be816b82d25370ce"),
}
SUPPORTED = tuple(PROFILES)
_BY_RELEASE: dict[tuple[str, bool], Profile] = {(p.line, p.kraft): p for p in PROFILES.values()}


def profile_for(text: str) -> Profile:
    """The profile for ``--kafka-version`` (``2.4``, ``2.4.1``, ``0.10.2.2``, ``3.9-kraft``).

    The text is read by the one version reader (``core.versions``), so ``3.9`` is ZooKeeper mode
    here too (which the simulator does not write: ``3.9-kraft`` is KRaft). A release it does not
    write is a usage error naming the ones it does.
    """
    release = read_kafka_version(text)
    line: Optional[str] = release.version.line if release.version is not None else None
    profile = _BY_RELEASE.get((line, release.kraft)) if line is not None else None
    if profile is None:
        raise UsageError(f"the simulator does not write Kafka {release.label}; supported: {', '.join(SUPPORTED)}")
    return profile
