"""The ``kafka-forensics`` command line: one click group, one module per subcommand."""

from __future__ import annotations

import click

from .common import run_guarded  # noqa: F401  (re-exported for subcommand modules)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kafka-forensics")
def main() -> None:
    """Forensics for Apache Kafka controller logs (0.8 → 4.x, ZooKeeper and KRaft).

    \b
    Exit codes (the same for every subcommand):
      0  success (and, for checks, every expectation met)
      1  expectations failed / findings above threshold
      2  input or usage error (missing path, unknown --kafka-version, bad --layout)
      3  internal error (a bug: rerun with --debug and report it)
    """


def _register() -> None:
    from .analyze import analyze
    from .check import check
    from .lab import lab
    from .merge import merge
    from .parse import parse
    from .replay import describe, replay, timeline
    from .report import report
    from .rules import rules
    from .simulate import simulate

    main.add_command(parse)
    main.add_command(rules)
    main.add_command(simulate)
    main.add_command(replay)
    main.add_command(timeline)
    main.add_command(describe)
    main.add_command(merge)
    main.add_command(analyze)
    main.add_command(report)
    main.add_command(check)
    main.add_command(lab)


_register()
