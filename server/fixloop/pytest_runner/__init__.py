"""Run pytest as a subprocess, parse its structured results, and map test ids to source positions."""

from fixloop.pytest_runner.locate import TestFunction, position_of, test_functions, test_id_at
from fixloop.pytest_runner.results import Frame, TestOutcome, TestRun, TestRunner
from fixloop.pytest_runner.runner import PytestRunner

__all__ = [
    "Frame",
    "PytestRunner",
    "TestFunction",
    "TestOutcome",
    "TestRun",
    "TestRunner",
    "position_of",
    "test_functions",
    "test_id_at",
]
