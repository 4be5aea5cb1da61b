"""The demo's own check of the fixed copy (its tests run as a user would run them): the last line of pytest's
output, or, past the limit, a line that says the run was stopped, and no pytest left running."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from fixloop import demo


def project(tmp_path: Path, body: str) -> Path:
    (tmp_path / "test_it.py").write_text(body)
    return tmp_path


def test_the_check_answers_pytests_last_line(tmp_path: Path) -> None:
    root = project(tmp_path, "def test_ok():\n    assert 1 + 1 == 2\n")
    line = asyncio.run(demo._tests_now(root))
    assert line.startswith("1 passed in ")


def test_a_check_past_its_limit_is_stopped_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pid_file = tmp_path / "pytest.pid"
    root = project(
        tmp_path,
        "import os, time\n\ndef test_hangs():\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n    time.sleep(60)\n",
    )
    monkeypatch.setattr(demo, "TESTS_NOW_SECONDS", 8)  # the test has started by then, on a slow machine too
    line = asyncio.run(demo._tests_now(root))
    assert line == "(still running after 8 s: stopped)"
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
