"""The adversarial suite's set-up: one trap per module, the scripted model, and the table of outcomes."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hostile import LEDGER, Trap, build_trap, kill_marked, ledger_table


@pytest.fixture(scope="module")
def trap(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trap]:
    """The user's project with its secrets and links out; HOME, TMPDIR and the cache point into the trap,
    so anything a run writes outside the project is seen. A module's `TRAP_FILES` adds files to it."""
    built = build_trap(tmp_path_factory.mktemp("trap"), getattr(request.module, "TRAP_FILES", None))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(built.home))
        patch.setenv("TMPDIR", str(built.tmp))
        patch.setenv("XDG_CACHE_HOME", str(built.cache))
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        patch.setattr(tempfile, "tempdir", str(built.tmp))
        yield built
    kill_marked()


@pytest.fixture(autouse=True)
def isolated_cache() -> None:
    """The trap's cache is the isolated one (overrides tests/integration's per-test cache)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    ledger = os.environ.get("FIXLOOP_SECURITY_LEDGER")  # every attempt with its outcome, as JSON lines
    if ledger:
        with open(ledger, "w", encoding="utf-8") as file:
            for attempt in LEDGER:
                row = {
                    "category": attempt.category,
                    "tool": attempt.tool,
                    "label": attempt.label,
                    "outcome": attempt.outcome,
                    "detail": attempt.detail[:2000],
                }
                file.write(json.dumps(row) + "\n")
    lines = ledger_table()
    if lines:
        terminalreporter.write_sep("=", "adversarial attempts and outcomes")
        for line in lines:
            terminalreporter.write_line(line)
