"""Every command that takes ``--kafka-version`` accepts and refuses the same texts, with the same sentence.

Refused texts go through the real command line (they exit 2 before Spark starts); accepted texts
are checked with the function each command reads the option with, since running the commands
would start Spark.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.cli.options import parse_options_from
from kafka_forensics.core.eras import zookeeper_version
from kafka_forensics.core.errors import NoZooKeeperControllerError, UsageError
from kafka_forensics.core.versions import read_kafka_version
from kafka_forensics.jobs.replay_job import ReplayOptions, validate_options
from kafka_forensics.simulator.profile import profile_for
from tests.support.kafka_lines import STATE_CHANGE_21, text

# Minimal arguments of every command with --kafka-version ({input} and {out} are filled in).
COMMANDS = {
    "parse": ["{input}", "--out", "{out}"],
    "replay": ["{input}", "--out", "{out}"],
    "timeline": ["{input}", "--topic", "orders", "--partition", "7"],
    "describe": ["{input}", "--at", "2021-03-04 10:15:23,456"],
    "story": ["{input}"],
    "check": ["{input}", "--out", "{out}"],
    "analyze": ["{input}", "--out", "{out}"],
    "merge": ["{input}"],
    "rules": [],
    "simulate": ["--scenario", "lifecycle", "--out", "{out}"],
}
REFUSED = ["2.9", "2", "0.8", "3.10", "9.9", "v2.4", "2.0-kraft", "nonsense"]
ACCEPTED = ["0.8.2.2", "1.1", "2.4.1", "2.8", "3.9", "3.9-kraft", "4.0", "7.5.0-ccs", "kraft"]


def test_the_table_names_every_command_with_the_option():
    with_option = {name for name, cmd in main.commands.items() if any(p.name == "kafka_version" for p in cmd.params)}
    assert with_option == set(COMMANDS)


@pytest.mark.parametrize("version", REFUSED)
def test_every_command_refuses_with_the_readers_sentence(tmp_path, version):
    log = tmp_path / "broker-1" / "state-change.log"
    log.parent.mkdir()
    log.write_bytes(text(STATE_CHANGE_21))
    with pytest.raises(UsageError) as expected:
        read_kafka_version(version)
    sentence = f"kafka-forensics: error: {expected.value}"
    for name, args in COMMANDS.items():
        argv = [
            name,
            *(a.format(input=log.parent, out=tmp_path / f"out-{name}") for a in args),
            "--kafka-version",
            version,
        ]
        result = CliRunner().invoke(main, argv)
        assert (result.exit_code, result.output.strip()) == (2, sentence), name


@pytest.mark.parametrize("version", ACCEPTED)
def test_every_command_accepts_what_the_reader_accepts(version):
    release = read_kafka_version(version)
    parse_options_from(
        version, None, r"broker-(\d+)", "UTC"
    )  # parse, replay, timeline, describe, check, analyze, merge
    validate_options(ReplayOptions(kafka_version=version))  # replay, timeline, describe, check, analyze
    try:
        profile_for(version)  # simulate: a release it does not write is its own error, not a misread
    except UsageError as err:
        assert "does not write Kafka" in str(err)
    result = CliRunner().invoke(main, ["rules", "--kafka-version", version, "--json"])
    if release.kraft:
        assert result.exit_code == 2 and "KRaft" in result.output
        with pytest.raises(NoZooKeeperControllerError):
            zookeeper_version(release)
    else:
        assert result.exit_code == 0 and f'"kafka_version": "{release.version}"' in result.output
