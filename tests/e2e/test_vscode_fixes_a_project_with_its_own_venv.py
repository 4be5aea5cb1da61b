"""VS Code (code-server in headless Chromium, the built .vsix) on a project as a user sets it up: a src
layout with its own `.venv` and an editable install (`python -m venv .venv && .venv/bin/pip install -e .
pytest`, no `pythonpath`, no fixloop setting about the tests), fixloop installed in another environment.
"fixloop: Fix failing test" from the palette lands the fix, tested in the shadow through the editable
install redirected there, and the server says which interpreter ran the tests and why."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from editors_support import CALC_BUGGY, CALC_FIXED, FAILING_TEST, TEST_CALC, E2EEnv, fix_turns
from vscode_support import SYSTEM_PATH, CodeServer, drive, python_without_fixloop, running_code_server

from support import commit_all

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1.0"

[tool.setuptools]
package-dir = {"" = "src"}
py-modules = ["calc"]
"""


@pytest.fixture(scope="module")
def code_server(e2e_env: E2EEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    with running_code_server(e2e_env, tmp_path_factory.mktemp("code-server")) as server:
        yield server


def src_layout_project(root: Path, system_python: str) -> Path:
    """calc.py under src/, installed editable into the project's own .venv with pytest; a git repository."""
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "src" / "calc.py").write_text(CALC_BUGGY)
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    (root / ".gitignore").write_text(".venv/\n*.egg-info/\n__pycache__/\n")
    subprocess.run([system_python, "-m", "venv", str(root / ".venv")], check=True, timeout=180)
    subprocess.run([str(root / ".venv/bin/pip"), "install", "-q", "--disable-pip-version-check", "-e", ".",
                    "pytest"], cwd=root, check=True, timeout=600)  # fmt: skip
    commit_all(root)
    return root


def src_fix_turns(delay: float) -> list[dict[str, Any]]:
    """The editors' calc fix, on src/calc.py."""
    return json.loads(json.dumps(fix_turns(delay)).replace('"calc.py"', '"src/calc.py"'))


def test_a_src_layout_project_with_its_own_venv_is_fixed_from_the_palette(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    system_python = shutil.which("python3", path=SYSTEM_PATH)
    if system_python is None:
        pytest.skip(f"no python3 in {SYSTEM_PATH}")
    project = src_layout_project(tmp_path / "project", system_python)
    assert python_without_fixloop(str(project / ".venv/bin/python"))  # fixloop lives elsewhere
    model = scripted_model_process(src_fix_turns(delay=1.5))
    settings = {  # the server from this checkout's environment; nothing about how the tests run
        "fixloop.serverPython": sys.executable,
        "fixloop.importStrategy": "fromEnvironment",
        "fixloop.baseUrl": model.base_url,
        "fixloop.model": "scripted",
    }
    (project / ".vscode").mkdir()
    (project / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2))
    thought = "add() subtracts instead of adding"
    calc = project / "src" / "calc.py"
    result = drive(code_server, "fix", project, tmp_path, thought=thought, calcPath=str(calc),
                   calcFixed=CALC_FIXED)  # fmt: skip

    assert "fixed test_add" in result["texts"]["result"] and "1 file changed" in result["texts"]["result"]
    assert calc.read_text() == CALC_FIXED
    done = subprocess.run([str(project / ".venv/bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           FAILING_TEST], cwd=project, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stdout
    trace = code_server.trace_file.read_text()
    assert "tests run with .venv/bin/python: the project's .venv" in trace
    assert "imports of your project redirected into the shadow: sys.path src" in trace
