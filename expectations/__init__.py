"""kafka_forensics.expectations: Great Expectations suites over the parse and replay tables.

``custom``   the custom expectations (GX ``UnexpectedRowsExpectation`` subclasses, Spark SQL);
``legality`` the legal states/transitions per log dialect, derived from ``statemachines``;
``views``    the views the expectations read besides their batch (Spark temp views, DuckDB views);
``dialects`` the Spark SQL of ``custom`` transpiled for DuckDB (sqlglot), for the check without Spark;
``duckdb_metrics`` GX's pandas engine runs the custom queries on DuckDB (the check without Spark);
``frame_columns`` which columns' values a suite's pandas frame must hold (the check without Spark);
``names``    suite names and severities (no GX import);
``suites``   which expectations make the events / timelines / failover suites;
``gx_run``   GX contexts, validation (Spark or pandas data source) and Data Docs (quietly).
``default_check.toml`` holds the documented defaults of ``kafka-forensics check``.
"""

import os as _os

# GX 1.x sends anonymous usage events unless told not to; decide before anything imports GX.
_os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
