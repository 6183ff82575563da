"""The columns whose values the check without Spark loads for a suite (expectations/frame_columns.py).

The differential tests show the suites' results do not change when the frames hold fewer columns; these show
which columns that is: exactly those the suites' built-in expectations name (and the evidence columns), and
every column when an expectation may read any.
"""

from __future__ import annotations

import great_expectations.expectations as gxe
from great_expectations.expectations.row_conditions import Column

from kafka_forensics.core.tables import EVENT_COLUMNS
from kafka_forensics.expectations import custom
from kafka_forensics.expectations.frame_columns import columns_read
from kafka_forensics.expectations.names import SUITES
from kafka_forensics.expectations.suites import EVIDENCE_COLUMNS, NOT_NULL, SuiteSettings, expectations_for


def test_the_events_suite_reads_the_columns_its_built_in_expectations_name_and_the_evidence():
    read = columns_read(expectations_for("events", SuiteSettings()), EVIDENCE_COLUMNS["events"])
    assert read == {*NOT_NULL, "level", "source_file", "line_no"}
    assert read < set(EVENT_COLUMNS)  # the column-set expectation reads the names, not the values


def test_a_suite_of_custom_expectations_reads_no_column_of_its_frame():
    for suite in SUITES:
        if suite != "events":
            assert columns_read(expectations_for(suite, SuiteSettings()), EVIDENCE_COLUMNS.get(suite, ())) == set()


def test_pair_and_multicolumn_expectations_read_the_columns_they_name():
    pair = gxe.ExpectColumnPairValuesToBeEqual(column_A="leader", column_B="target_broker")
    compound = gxe.ExpectCompoundColumnsToBeUnique(column_list=["source_file", "line_no"])
    assert columns_read([pair, compound, custom.ExpectTimestampsToBeParsed()]) == {
        "leader",
        "target_broker",
        "source_file",
        "line_no",
    }


def test_shape_expectations_read_no_values():
    shape = [gxe.ExpectTableRowCountToBeBetween(min_value=1), gxe.ExpectTableColumnCountToEqual(value=39)]
    assert columns_read(shape, ["source_file"]) == {"source_file"}


def test_an_expectation_on_the_column_names_reads_no_values():
    names = [gxe.ExpectTableColumnsToMatchSet(column_set=list(EVENT_COLUMNS)), gxe.ExpectColumnToExist(column="stack")]
    assert columns_read(names) == set()


def test_a_row_condition_or_a_table_expectation_beyond_the_shape_reads_every_column():
    condition = Column("event_type") == "partition_state_change"
    assert columns_read([gxe.ExpectColumnValuesToNotBeNull(column="topic", row_condition=condition)]) is None
    # the column's dtype: in the frame only for the columns loaded
    assert columns_read([gxe.ExpectColumnTypeToBe(column="line_no", type_="int64")]) is None
    assert columns_read([gxe.ExpectColumnValuesToNotBeNull(column="topic")]) == {"topic"}
