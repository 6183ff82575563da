"""The file to give ``spark-submit``: it runs the ``kafka-forensics`` command line with its arguments.

    spark-submit --master yarn --deploy-mode cluster --archives kf-venv.tar.gz#environment \\
        cli/spark_submit.py analyze hdfs:///logs/kafka/2024-03-04 --out hdfs:///forensics/out

Any subcommand works (parse, replay, merge, analyze, report, ...). The session is the one
spark-submit created: ``spark_session.build_session`` sees the running driver (PYSPARK_GATEWAY_PORT)
and keeps its master and configuration. ``--master``/``--conf`` of the subcommand are not needed.
"""

from __future__ import annotations

import sys


def run(argv: list[str] | None = None) -> None:
    from .main import main

    main.main(args=list(sys.argv[1:] if argv is None else argv), prog_name="kafka-forensics")


if __name__ == "__main__":
    run()
