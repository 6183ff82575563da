"""``kafka-forensics rules``: print the controller state machines a Kafka version enforces.

The replayer judges logs against exactly these tables, so an on-call engineer can see (and a
script can diff, with ``--json``) what "legal" meant for the cluster's version.
"""

from __future__ import annotations

import json

import click

from kafka_forensics.core.eras import zookeeper_version
from kafka_forensics.core.versions import read_kafka_version
from kafka_forensics.statemachines.render import rules_as_dict, rules_as_text

from .common import debug_option, run_guarded


@click.command("rules")
@click.option(
    "--kafka-version",
    "kafka_version",
    required=True,
    metavar="VERSION",
    help="Kafka release of the cluster, e.g. 0.8.2.2, 2.8, 3.9.0 or 7.5.0-ccs (ZooKeeper mode: 0.8.0 to 3.9).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    default=False,
    help='Print JSON: {"kafka_version", "partition": {target: [previous...]}, "replica": {...}}.',
)
@debug_option
def rules(kafka_version: str, as_json: bool, debug: bool) -> None:
    """Print the partition and replica state machines of Kafka VERSION.

    For each target state, the states Kafka accepts a transition from (any other transition is
    rejected by the controller and logged as an ERROR), plus the states a controller assigns
    without logging a transition (unknown entities, failover).

    \b
    Examples:
      kafka-forensics rules --kafka-version 2.8.2
      kafka-forensics rules --kafka-version 0.8.0 --json
    """

    def action() -> str:
        version = zookeeper_version(read_kafka_version(kafka_version))
        if as_json:
            return json.dumps(rules_as_dict(version), indent=2)
        return rules_as_text(version).rstrip("\n")

    click.echo(run_guarded(debug, action))
