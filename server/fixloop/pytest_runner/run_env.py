"""The environment variables that belong to one test run: its mark, its report file and its coverage files
(the plugins in the project's interpreter spell the same names; a warm zygote drops them all)."""

from __future__ import annotations

from fixloop.processes import RUN_MARK_ENV

REPORT_ENV = "FIXLOOP_REPORT_FILE"
COVERAGE_FILE_ENV = "FIXLOOP_COVERAGE_FILE"
COVERAGE_PATH_ENV = "FIXLOOP_COVERAGE_PATH"
PER_RUN = (RUN_MARK_ENV, REPORT_ENV, COVERAGE_FILE_ENV, COVERAGE_PATH_ENV)
