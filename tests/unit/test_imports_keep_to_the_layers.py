"""The import layers hold (import-linter contracts in pyproject.toml), and a wrong import breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
    str(REPO / "pyproject.toml"),
    "--no-cache",
]


def lint(package_parent: Path) -> subprocess.CompletedProcess[str]:
    """import-linter with the project's contracts, against the `fixloop` package under `package_parent`."""
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(LINT, cwd=package_parent, env=env, capture_output=True, text=True, timeout=120)


def test_the_code_keeps_every_layer_contract() -> None:
    done = lint(REPO / "server")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 kept, 0 broken" in done.stdout


def test_a_tool_importing_the_language_server_breaks_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(
        REPO / "server" / "fixloop", tmp_path / "fixloop", ignore=shutil.ignore_patterns("__pycache__")
    )
    wrong = tmp_path / "fixloop" / "tools" / "base.py"
    wrong.write_text(wrong.read_text() + "\nimport fixloop.lsp.server  # deliberately wrong\n")
    done = lint(tmp_path)
    assert done.returncode != 0
    assert "5 kept" not in done.stdout
    for contract in (
        "nothing below the engine knows the language server",
        "tools and pytest_runner import nothing above them",
    ):
        assert f"{contract} BROKEN" in done.stdout, done.stdout
    assert "fixloop.tools.base -> fixloop.lsp.server" in done.stdout


def test_the_agent_reaching_into_the_gate_breaks_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(
        REPO / "server" / "fixloop", tmp_path / "fixloop", ignore=shutil.ignore_patterns("__pycache__")
    )
    wrong = tmp_path / "fixloop" / "agent" / "submissions.py"
    wrong.write_text(wrong.read_text() + "\nimport fixloop.verify.gate  # deliberately wrong\n")
    done = lint(tmp_path)
    assert done.returncode != 0
    contract = "the agent reaches the verification gate only through its port (verify/port.py)"
    assert f"{contract} BROKEN" in done.stdout, done.stdout
    assert "fixloop.agent.submissions -> fixloop.verify.gate" in done.stdout
