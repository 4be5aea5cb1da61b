"""pytest plugin of the bench judge, loaded in the case's pytest: outcomes as JSON lines (a failure with the
line of the test it stopped at), a per-test limit."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

REPORT_ENV = "FIXLOOP_JUDGE_REPORT"
TIMEOUT_ENV = "FIXLOOP_JUDGE_TEST_TIMEOUT"
_expired: set[str] = set()
_failures: dict[str, str] = {}


class JudgeTestTimeout(Exception):
    """Raised inside a test that ran past the judge's per-test limit."""


def _write(record: dict[str, Any]) -> None:
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as report:
            report.write(json.dumps(record) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    limit = float(os.environ.get(TIMEOUT_ENV) or 0)
    if limit <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        _expired.add(item.nodeid)
        raise JudgeTestTimeout(f"the test ran past the judge's limit of {limit:g}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None and report.nodeid not in _failures:
        _failures[report.nodeid] = _failure_line(item, call.excinfo)


def _failure_line(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The test's own line the failure passed through, and the exception's first line."""
    message = (excinfo.exconly().strip().splitlines() or [excinfo.typename])[0]
    try:
        mine = [entry for entry in excinfo.traceback if str(entry.path) == str(item.path)]
        if mine:
            statement = " ".join(str(mine[-1].statement).split())
            return f"line {mine[-1].lineno + 1}: {statement} ({message})"[:300]
    except Exception:  # an odd traceback or item: the exception's line alone still says something
        pass
    return message[:300]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    outcome = "timeout" if report.nodeid in _expired else report.outcome
    if outcome == "skipped" and hasattr(report, "wasxfail"):
        outcome = "xfailed"
    record = {"id": report.nodeid, "when": report.when, "outcome": outcome}
    if report.failed and report.nodeid in _failures:
        record["failure"] = _failures[report.nodeid]
    _write(record)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _write({"id": report.nodeid, "when": "collect", "outcome": "error"})
