"""pytest plugin of the bench judge, loaded in the case's pytest: outcomes as JSON lines, a per-test limit."""

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


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    outcome = "timeout" if report.nodeid in _expired else report.outcome
    if outcome == "skipped" and hasattr(report, "wasxfail"):
        outcome = "xfailed"
    _write({"id": report.nodeid, "when": report.when, "outcome": outcome})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _write({"id": report.nodeid, "when": "collect", "outcome": "error"})
