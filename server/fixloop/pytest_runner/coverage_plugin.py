"""pytest plugin, copied beside the report plugin for one run: which lines each test ran (fault localization).

Loaded with `-p fixloop_pytest_coverage` when the runner asks for coverage. It starts coverage.py (the
project's own, else fixloop's, found through FIXLOOP_COVERAGE_PATH) before collection and names each test's
lines after its node id (coverage.py's dynamic contexts); the data file is FIXLOOP_COVERAGE_FILE. Without
coverage.py it does nothing, and the run is an ordinary run.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

_coverage: Any = None


def pytest_configure(config: pytest.Config) -> None:
    global _coverage
    data_file = os.environ.get("FIXLOOP_COVERAGE_FILE")
    module = _coverage_module()
    if not data_file or module is None:
        return
    try:
        _coverage = module.Coverage(
            data_file=data_file, source=[str(config.rootpath)], branch=False, config_file=False
        )
        _coverage.start()
    except Exception:  # coverage is evidence for the model, never a reason for a run to fail
        _coverage = None


def _coverage_module() -> Any:
    try:
        import coverage
    except ImportError:
        extra = os.environ.get("FIXLOOP_COVERAGE_PATH")
        if not extra:
            return None
        sys.path.append(extra)
        try:
            import coverage
        except ImportError:
            return None
    return coverage


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    if _coverage is not None:
        _coverage.switch_context(item.nodeid)
    yield
    if _coverage is not None:
        _coverage.switch_context("")


def pytest_unconfigure(config: pytest.Config) -> None:
    global _coverage
    if _coverage is None:
        return
    try:
        _coverage.stop()
        _coverage.save()
    finally:
        _coverage = None
