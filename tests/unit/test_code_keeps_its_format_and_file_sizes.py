"""The code stays as `ruff format` writes it and lint-clean, and no source file grows past 400 lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 400


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ruff", *args, "--no-cache", "."]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)


def test_every_python_file_is_formatted() -> None:
    done = ruff("format", "--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_linter_finds_nothing() -> None:
    done = ruff("check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_source_file_is_over_400_lines() -> None:
    sources = [*(REPO / "server" / "fixloop").rglob("*.py"), *(REPO / "client-vscode" / "src").rglob("*.ts")]
    long = {
        str(p.relative_to(REPO)): n for p in sources if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert len(sources) > 100 and long == {}
