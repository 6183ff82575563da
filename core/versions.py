"""Kafka releases: the one ``KafkaVersion`` and the one reader of ``--kafka-version`` text.

Every command, the parser's detection of a broker's ``Kafka version: X`` line and the replay read
version text through ``read_kafka_version``, so they accept and refuse the same texts with the
same sentence:

* an Apache Kafka release: ``0.8.2.2``, ``0.10.2``, ``2.8``, ``3.9.0``, ``4.1``; a 0.x release
  needs three numbers (``0.8`` could be 0.8.0, 0.8.1 or 0.8.2, whose rules differ) and a later one
  at least two (``2.8``); a release line Kafka never shipped (``2.9``, ``3.10``) is refused;
* a Confluent Platform release: ``7.5.0``, ``7.5.0-ccs`` (Confluent Community), ``7.5.0-ce``
  (Confluent Server), mapped to the Apache release it ships (CP 7.5 = AK 3.5, ``CONFLUENT_PLATFORM``);
  ``2.0.0-cp1``-style builds (CP 5.x and older) print the Apache number itself;
* ``-kraft`` for a KRaft cluster of a 2.8 - 3.9 release (``3.9-kraft``); 4.0 and later are always
  KRaft (ZooKeeper mode was removed); ``kraft`` alone = some KRaft release; ``HEAD`` = trunk (KRaft).

So ``3.9`` is ZooKeeper mode everywhere and ``3.9-kraft`` KRaft everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Union

from .errors import UnknownKafkaVersionError

# Every release line Apache Kafka has shipped. 0.x lines have three numbers (a fourth is the
# patch, "0.8.2.2"); from 1.0 on a line has two ("2.8", patch "2.8.1").
# Source: the release tags of apache/kafka (0.8.0 … 3.9.0-rc3 in the mirror); 4.0 – 4.3 from
# https://kafka.apache.org/43/getting-started/upgrade ("Upgrading Servers to 4.3.0 from any
# version 3.3.x through 4.2.0").
KNOWN_RELEASE_LINES: tuple[str, ...] = (
    "0.8.0",
    "0.8.1",
    "0.8.2",
    "0.9.0",
    "0.10.0",
    "0.10.1",
    "0.10.2",
    "0.11.0",
    "1.0",
    "1.1",
    "2.0",
    "2.1",
    "2.2",
    "2.3",
    "2.4",
    "2.5",
    "2.6",
    "2.7",
    "2.8",
    "3.0",
    "3.1",
    "3.2",
    "3.3",
    "3.4",
    "3.5",
    "3.6",
    "3.7",
    "3.8",
    "3.9",
    "4.0",
    "4.1",
    "4.2",
    "4.3",
)
_KNOWN_LINES = frozenset(KNOWN_RELEASE_LINES)
_EXAMPLES = "such as 0.8.2.2, 2.8, 3.9.0, 3.9-kraft or 7.5.0-ccs"

# Confluent Platform release line -> the Apache Kafka release line it ships.
# CP 2.0 - 5.5: "Confluent Platform and Apache Kafka Compatibility",
#   https://docs.confluent.io/legacy/platform/5.5.15/installation/versions-interoperability.html
#   (CP 1.0.0 has no Apache line there, so it is not mapped);
# CP 6.0 - 7.9: the compatibility matrix of https://docs.confluent.io/platform/7.9/streams/upgrade-guide.html
#   ("6.0.x / 2.6.x" … "7.9.x / 3.9.x");
# CP 8.x ships Kafka 4.x: "Confluent Platform 8.3.0 (Kafka Streams 4.3.0)",
#   https://docs.confluent.io/platform/8.3/streams/upgrade-guide.html, and the Kafka changes of
#   https://docs.confluent.io/platform/8.0/release-notes/changelog.html ("... in 4.0"); 8.1 and 8.2
#   follow the same numbering.
CONFLUENT_PLATFORM: dict[str, str] = {
    "2.0": "0.9.0",
    "3.0": "0.10.0",
    "3.1": "0.10.1",
    "3.2": "0.10.2",
    "3.3": "0.11.0",
    "4.0": "1.0",
    "4.1": "1.1",
    "5.0": "2.0",
    "5.1": "2.1",
    "5.2": "2.2",
    "5.3": "2.3",
    "5.4": "2.4",
    "5.5": "2.5",
    "6.0": "2.6",
    "6.1": "2.7",
    "6.2": "2.8",
    "7.0": "3.0",
    "7.1": "3.1",
    "7.2": "3.2",
    "7.3": "3.3",
    "7.4": "3.4",
    "7.5": "3.5",
    "7.6": "3.6",
    "7.7": "3.7",
    "7.8": "3.8",
    "7.9": "3.9",
    "8.0": "4.0",
    "8.1": "4.1",
    "8.2": "4.2",
    "8.3": "4.3",
}
_KNOWN = (
    f"Apache Kafka release lines {KNOWN_RELEASE_LINES[0]} to {KNOWN_RELEASE_LINES[-1]}, "
    f"Confluent Platform {next(iter(CONFLUENT_PLATFORM))} to {next(reversed(CONFLUENT_PLATFORM))}"
)
# Suffixes of Confluent builds whose number is a Confluent Platform release (``7.5.0-ccs``).
_CONFLUENT_SUFFIXES = ("ccs", "ce")
_NUMBERS = re.compile(r"^\d+(?:\.\d+)*$")


@dataclass(frozen=True, order=True)
class KafkaVersion:
    """An Apache Kafka release, comparable across the 0.x (four-number) and 1.x+ (three-number) schemes.

    ``key`` is zero-padded to four numbers, so ``2.8`` == ``2.8.0`` and ``0.10.2.2`` < ``1.0``;
    a bare release line stands for every patch release of that line, which is safe because no
    rule in this project changes inside a line. ``HEAD`` (trunk) sorts after every release.
    """

    key: tuple[int, int, int, int]
    text: str = field(compare=False)

    @classmethod
    def parse(cls, text: str) -> "KafkaVersion":
        """An Apache release number (``"0.8.2.2"``, ``"2.8"``, ``"3.9.0"``) or ``"HEAD"``.

        Raises ``UnknownKafkaVersionError`` for anything else (use ``read_kafka_version`` for
        user text: it also reads Confluent numbers and ``-kraft``)."""
        if not isinstance(text, str):
            raise UnknownKafkaVersionError(f"{text!r} is not a Kafka version ({_EXAMPLES})")
        cleaned = text.strip()
        if cleaned.upper() == "HEAD":
            return HEAD
        if not _NUMBERS.match(cleaned) or not cleaned.isascii():
            raise UnknownKafkaVersionError(f"{text!r} is not a Kafka version (expected a release {_EXAMPLES})")
        numbers = tuple(int(p) for p in cleaned.split("."))
        line_len = 3 if numbers[0] == 0 else 2
        if len(numbers) < line_len:
            hint = (
                "0.x releases need three numbers, e.g. 0.8.2"
                if numbers[0] == 0
                else "give at least major.minor, e.g. 2.8"
            )
            raise UnknownKafkaVersionError(f"{cleaned!r} does not name one Kafka release line ({hint})")
        if len(numbers) > line_len + 1:
            raise UnknownKafkaVersionError(f"{cleaned!r} has too many numbers for a Kafka version ({_EXAMPLES})")
        line = ".".join(str(n) for n in numbers[:line_len])
        if line not in _KNOWN_LINES:
            raise UnknownKafkaVersionError(f"Kafka {cleaned} is not a known release ({_KNOWN})")
        padded = numbers + (0,) * (4 - len(numbers))
        return cls(key=padded, text=cleaned)  # type: ignore[arg-type]

    @property
    def line(self) -> str:
        """The release line, e.g. ``"0.8.2"`` or ``"2.8"`` (``"HEAD"`` for trunk)."""
        if self.key == HEAD.key:
            return "HEAD"
        n = 3 if self.key[0] == 0 else 2
        return ".".join(str(x) for x in self.key[:n])

    def __str__(self) -> str:
        return self.text


HEAD = KafkaVersion(key=(9999, 0, 0, 0), text="HEAD")
VersionLike = Union[str, KafkaVersion]


def as_version(version: VersionLike) -> KafkaVersion:
    """Accept a ``KafkaVersion`` or an Apache release number (the rules' functions take both)."""
    return version if isinstance(version, KafkaVersion) else KafkaVersion.parse(version)


ZOOKEEPER_REMOVED = KafkaVersion.parse("4.0")  # https://kafka.apache.org/40/getting-started/upgrade
KRAFT_INTRODUCED = KafkaVersion.parse("2.8")  # KIP-500 early access (config/kraft/README.md@2.8.0)


@dataclass(frozen=True)
class KafkaRelease:
    """What a ``--kafka-version`` text (or a broker's ``Kafka version:`` line) says about a cluster.

    ``version`` is the Apache release (None for a bare ``kraft``); ``kraft`` says which controller
    wrote the logs. ``text`` is what was given, for messages."""

    version: Optional[KafkaVersion]
    kraft: bool
    text: str

    @property
    def label(self) -> str:
        if self.version is None:
            return "KRaft"
        mode = "KRaft" if self.kraft else "ZooKeeper"
        return f"{self.version} ({mode})"


def read_kafka_version(text: str) -> KafkaRelease:
    """The one reader of version text (module docstring); ``UnknownKafkaVersionError`` if it names
    no Kafka release, always with the same sentence whichever command reads it."""
    if not isinstance(text, str) or not text.strip():
        raise UnknownKafkaVersionError(f"{text!r} is not a Kafka version ({_EXAMPLES})")
    given = text.strip()
    raw = given.lower()
    if raw == "kraft":
        return KafkaRelease(None, True, given)
    kraft_suffix = raw.endswith("-kraft")
    base = raw.removesuffix("-kraft")
    version = _apache_version(base, given)
    if kraft_suffix and version < KRAFT_INTRODUCED:
        raise UnknownKafkaVersionError(f"Kafka {given} has no KRaft mode (KRaft starts in {KRAFT_INTRODUCED})")
    return KafkaRelease(version, kraft_suffix or version >= ZOOKEEPER_REMOVED, given)


def _apache_version(base: str, given: str) -> KafkaVersion:
    number, _, vendor = base.partition("-")
    if number == "head" and not vendor:
        return HEAD
    if not _NUMBERS.match(number):
        raise UnknownKafkaVersionError(f"{given!r} is not a Kafka version (expected a release {_EXAMPLES})")
    major = int(number.split(".")[0])
    if vendor in _CONFLUENT_SUFFIXES or (not vendor and major >= 5):
        return _confluent(number, given)
    try:
        return KafkaVersion.parse(number)
    except UnknownKafkaVersionError:
        if vendor:  # "2.9.1-foo": the number before a vendor suffix must be an Apache release
            raise UnknownKafkaVersionError(
                f"{given!r} is not a Kafka version: {number} is not an Apache Kafka release ({_EXAMPLES})"
            ) from None
        raise


def _confluent(number: str, given: str) -> KafkaVersion:
    parts = number.split(".")
    line = ".".join(parts[:2])
    apache = CONFLUENT_PLATFORM.get(line) if len(parts) >= 2 else None
    if apache is None:
        raise UnknownKafkaVersionError(f"Kafka {given} is not a known release ({_KNOWN})")
    return KafkaVersion.parse(apache)


__all__ = [
    "CONFLUENT_PLATFORM",
    "HEAD",
    "KNOWN_RELEASE_LINES",
    "ZOOKEEPER_REMOVED",
    "KafkaRelease",
    "KafkaVersion",
    "VersionLike",
    "as_version",
    "read_kafka_version",
]
