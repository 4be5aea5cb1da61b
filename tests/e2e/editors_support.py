"""Helpers for the real-editor tests: the calc project, model scripts, isolated environments, setup checks.

The tests skip when the setup is missing (say why), unless FIXLOOP_E2E_REQUIRED=1, where they fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
E2E_DIR = Path(__file__).resolve().parent

# The project the editors fix: one bug in calc.py, one failing test, one passing test.
CALC_BUGGY = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return 2 * x\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return 2 * x\n"
TEST_CALC = (
    "from calc import add, double\n"
    "\n"
    "\n"
    "def test_double():\n"
    "    assert double(4) == 8\n"
    "\n"
    "\n"
    "def test_add():\n"
    "    assert add(2, 3) == 5\n"
)
FAILING_TEST = "tests/test_calc.py::test_add"
FAILING_TEST_LINE = 7  # 0-based line of `def test_add`


def setup_hint() -> str:
    return "run `bash scripts/setup-e2e.sh` (Neovim, Chromium, Node 24, code-server, playwright-core)"


def missing(reason: str) -> None:
    """Skip with the reason, or fail when the e2e setup is required (CI)."""
    if os.environ.get("FIXLOOP_E2E_REQUIRED") == "1":
        pytest.fail(f"e2e setup required but {reason}; {setup_hint()}")
    pytest.skip(f"{reason}; {setup_hint()}")


@dataclass(frozen=True)
class E2EEnv:
    node: Path
    code_server_entry: Path
    playwright_core: Path
    chromium: Path
    nvim_07: Path
    nvim_011: Path
    vsix: Path


def require(path: Path, what: str) -> Path:
    if not path.exists():
        missing(f"{what} not found at {path}")
    return path


def write_project(root: Path) -> Path:
    """The calc project: calc.py with a bug, tests/test_calc.py with test_add failing."""
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n')
    (root / "calc.py").write_text(CALC_BUGGY)
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    return root


def fix_turns(delay: float = 0.0) -> list[dict[str, Any]]:
    """Model turns that fix calc.py the way a model would: read, edit, run the test, submit.

    `delay` holds every turn after the first back that many seconds, so an editor's progress UI
    has time to show each thought.
    """
    turns: list[dict[str, Any]] = [
        {
            "content": "The failure is in add(); let me read calc.py.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
        },
        {
            "content": "add() subtracts instead of adding; fixing the operator.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"},
                }
            ],
        },
        {
            "content": "Now let me run the failing test.",
            "tool_calls": [{"name": "run_tests", "arguments": {"test_ids": [FAILING_TEST]}}],
        },
        {
            "content": "The test passes.",
            "tool_calls": [{"name": "submit", "arguments": {"summary": "add() used - instead of +"}}],
        },
    ]
    if delay:
        for turn in turns[1:]:
            turn["delay"] = delay
    return turns


TEST_CALC_STRENGTHENED = TEST_CALC.replace(
    "    assert add(2, 3) == 5\n", "    assert add(2, 3) == 5\n    assert add(-1, 1) == 0\n"
)


def fix_and_test_turns(delay: float = 0.0) -> list[dict[str, Any]]:
    """Fix calc.py and add a regression assertion to the test file (needs allowTestEdits)."""
    turns = fix_turns(delay)
    turns.insert(
        2,
        {
            "content": "Adding a regression assertion for negative numbers to the test.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "tests/test_calc.py",
                        "old_text": "    assert add(2, 3) == 5\n",
                        "new_text": "    assert add(2, 3) == 5\n    assert add(-1, 1) == 0\n",
                    },
                }
            ],
        },
    )
    if delay:
        turns[2]["delay"] = delay
    return turns


def stalled_turns(seconds: float = 60.0) -> list[dict[str, Any]]:
    """A model that thinks for a long time before its first answer (for cancelling mid-run)."""
    return [{"delay": seconds, **turn} for turn in fix_turns()[:1]] + fix_turns()[1:]


@dataclass
class ScriptedModel:
    base_url: str
    process: subprocess.Popen[str]

    def env(self) -> dict[str, str]:
        return {
            "FIXLOOP_BASE_URL": self.base_url,
            "FIXLOOP_MODEL": "scripted",
            "FIXLOOP_MUTANTS": "off",
            "FIXLOOP_POOL_SHARE": "0",
            "FIXLOOP_API_KEY": "none",
        }


def pytest_passes(root: Path, test_id: str) -> bool:
    """Run the real pytest on the files on disk."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_id],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode == 0


def isolated_env(tmp: Path, **extra: str) -> dict[str, str]:
    """Environment with HOME and the XDG dirs inside `tmp`, so editors write nothing outside it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
    for name in ("home", "config", "data", "state", "cache"):
        (tmp / name).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(tmp / "home"),
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        XDG_STATE_HOME=str(tmp / "state"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        # the projects need no third-party pytest plugin; loading this venv's (xdist, pytest-lsp…) would
        # cost each of the editor's fixloop pytest runs about a second of CPU
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    env.update(extra)
    return env
