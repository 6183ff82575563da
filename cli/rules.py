"""``kafka-forensics rules``: print the controller state machines a Kafka version enforces.

The replayer judges logs against exactly these tables, so an on-call engineer can see (and a
script can diff, with ``--format json``) what "legal" meant for the cluster's version.
"""

from __future__ import annotations

import json

import click

from kafka_forensics.core.eras import zookeeper_version
from kafka_forensics.core.versions import read_kafka_version
from kafka_forensics.statemachines.render import rules_as_dict, rules_as_text

from .common import debug_option, run_guarded
from .output import Listing, emit, format_option, resolve_format

RULE_COLUMNS = ("entity", "target", "previous")


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
    help='Same as --format json: {"kafka_version", "partition": {target: [previous...]}, "replica": {...}}.',
)
@format_option
@debug_option
def rules(kafka_version: str, as_json: bool, output_format: str, debug: bool) -> None:
    """Print the partition and replica state machines of Kafka VERSION.

    For each target state, the states Kafka accepts a transition from (any other transition is
    rejected by the controller and logged as an ERROR), plus the states a controller assigns
    without logging a transition (unknown entities, failover).

    \b
    Examples:
      kafka-forensics rules --kafka-version 2.8.2
      kafka-forensics rules --kafka-version 0.8.0 --format json
      kafka-forensics rules --kafka-version 3.9.0 --format csv

    --format text (the default when piped) prints the tables and the out-of-band assignments as text;
    json is {"kafka_version", "partition": {target: [previous...]}, "replica": {...}}; csv and table
    have one row per (entity, target) with the previous states joined by ";".
    """
    fmt = "json" if as_json else resolve_format(output_format)

    def action() -> None:
        version = zookeeper_version(read_kafka_version(kafka_version))
        if fmt == "json":
            click.echo(json.dumps(rules_as_dict(version), indent=2))
        elif fmt == "text":
            click.echo(rules_as_text(version).rstrip("\n"))
        else:
            emit("rules", [rules_listing(version)], fmt)

    run_guarded(debug, action)


def rules_listing(version) -> Listing:
    """One row per (entity, target state): the states Kafka accepts a transition from."""
    data = rules_as_dict(version)
    rows = [
        {"entity": entity, "target": target, "previous": ";".join(previous)}
        for entity in ("partition", "replica")
        for target, previous in data[entity].items()
    ]
    return Listing(
        name="transitions",
        columns=RULE_COLUMNS,
        rows=rows,
        title=f"Kafka {data['kafka_version']}: target state <- valid previous states",
    )
