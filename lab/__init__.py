"""The fault-injection lab: real Kafka brokers, broken on purpose, recorded with their truth.

Every rule of the replay was first checked against the project's own simulator, which encodes our
own reading of Kafka. The lab makes Kafka itself the oracle: it resolves the broker jars of a
release from Maven Central (``lab/maven/pom.xml``), starts a small real cluster on loopback
(ZooKeeper or KRaft) with the release's stock log4j configuration, runs a scenario (a script of
actions with a clock: kill -9, SIGSTOP, controlled shutdown, elections, reassignment...), and keeps
the logs Kafka wrote together with ``truth.json``: what was done, when, and what Kafka itself
reported (``kafka-topics --describe`` snapshots). Truth never comes from the tool under test.

It lives apart from the parse/replay packages on purpose: it only needs the standard library,
click, a JDK and Maven, and nothing of the pipeline imports it.
"""
