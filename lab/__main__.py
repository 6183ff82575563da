"""``python -m kafka_forensics.lab``: the lab's command line (also ``kafka-forensics lab``)."""

from .cli import lab

lab(prog_name="kafka-forensics lab")
