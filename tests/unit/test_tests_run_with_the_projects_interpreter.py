"""The tests' interpreter is found as the ecosystem finds it: testCommand > the python setting > the project's
environment (.venv/venv up to the workspace folder, $VIRTUAL_ENV, a tool's environment) > fixloop's own;
never a bare `python` from PATH; each choice says why, and a missing pytest says how to install it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from fixloop.errors import ConfigError
from fixloop.interpreter import choose_interpreter


def fake_venv(folder: Path) -> Path:
    """A folder that looks like a virtualenv: pyvenv.cfg and bin/python (the real interpreter, linked)."""
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    python = folder / "bin" / "python"
    python.symlink_to(sys.executable)
    return python


def fake_tool(bin_dir: Path, name: str, prints: str) -> None:
    """An executable `name` on PATH that prints one line, as poetry or pdm would."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    tool = bin_dir / name
    tool.write_text(f"#!/bin/sh\necho '{prints}'\n")
    tool.chmod(0o755)


def choose(project: Path, workspace: Path | None = None, env: dict[str, str] | None = None, **kwargs):
    return choose_interpreter(project, workspace, env={"PATH": "/nonexistent", **(env or {})}, **kwargs)


def test_the_projects_venv_is_used_and_said(tmp_path: Path) -> None:
    python = fake_venv(tmp_path / ".venv")
    fake_venv(tmp_path / "venv")
    chosen = choose(tmp_path)
    assert chosen.command == (str(python), "-m", "pytest")
    assert chosen.describe(tmp_path) == "tests run with .venv/bin/python: the project's .venv"
    assert chosen.missing_pytest(tmp_path) == (
        f"pytest is not installed in .venv/bin/python (the project's .venv): install it with "
        f"`{python} -m pip install pytest`"
    )


def test_a_venv_above_the_project_counts_up_to_the_workspace_folder_only(tmp_path: Path) -> None:
    fake_venv(tmp_path / ".venv")  # above the workspace folder: never looked at
    workspace = tmp_path / "repo"
    python = fake_venv(workspace / ".venv")
    project = workspace / "packages" / "app"
    project.mkdir(parents=True)
    chosen = choose(project, workspace)
    assert (chosen.python, chosen.reason) == (python, "the .venv of the workspace folder")
    assert choose(project).python == Path(sys.executable)  # the project alone is its own workspace


def test_the_python_setting_wins_over_the_projects_venv(tmp_path: Path) -> None:
    fake_venv(tmp_path / ".venv")
    elsewhere = fake_venv(tmp_path / "envs" / "py311")
    for value in (str(elsewhere), "envs/py311/bin/python", "envs/py311"):
        chosen = choose(tmp_path, tmp_path, python=value)
        assert (chosen.python, chosen.reason) == (elsewhere, "the python setting"), value


def test_a_python_setting_that_does_not_exist_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"^the python setting points to .*nope/bin/python, which does not "
        r"exist: set it to the project's interpreter",
    ):
        choose(tmp_path, python="nope/bin/python")
    with pytest.raises(ConfigError, match="not on PATH"):
        choose(tmp_path, python="python-that-is-nowhere")


def test_an_explicit_test_command_is_used_as_it_is(tmp_path: Path) -> None:
    fake_venv(tmp_path / ".venv")
    chosen = choose(tmp_path, test_command=("tox", "-e", "py311", "--"))
    assert chosen.command == ("tox", "-e", "py311", "--") and chosen.reason == "the testCommand setting"
    relative = choose(tmp_path, test_command=(".venv/bin/python", "-m", "pytest"))
    assert relative.command[0] == str(tmp_path / ".venv/bin/python")  # not the shadow's (it has no venvs)


def test_a_bare_python_in_the_test_command_means_the_projects_interpreter(tmp_path: Path) -> None:
    python = fake_venv(tmp_path / ".venv")
    chosen = choose(tmp_path, test_command=("python", "-m", "pytest", "-x"))
    assert chosen.command == (str(python), "-m", "pytest", "-x")
    assert chosen.reason == "the project's .venv (testCommand's 'python')"
    default = choose(tmp_path, test_command=("python", "-m", "pytest"))  # VS Code's default value
    assert (default.command, default.reason) == ((str(python), "-m", "pytest"), "the project's .venv")


def test_an_activated_environment_comes_after_the_projects_own(tmp_path: Path) -> None:
    active = fake_venv(tmp_path / "active")
    project = tmp_path / "project"
    project.mkdir()
    chosen = choose(project, env={"VIRTUAL_ENV": str(tmp_path / "active")})
    assert (chosen.python, chosen.reason) == (active, "the activated virtual environment ($VIRTUAL_ENV)")
    own = fake_venv(project / ".venv")
    assert choose(project, env={"VIRTUAL_ENV": str(tmp_path / "active")}).python == own


def test_poetrys_environment_is_asked_of_poetry_when_the_project_uses_it(tmp_path: Path) -> None:
    python = fake_venv(tmp_path / "cache" / "textstats-py3.11")
    fake_tool(tmp_path / "bin", "poetry", str(tmp_path / "cache" / "textstats-py3.11"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.poetry]\npackages = []\n")
    chosen = choose(project, env={"PATH": str(tmp_path / "bin")})
    assert chosen.python == python
    assert chosen.reason == "poetry's environment for the project (`poetry env info --path`)"
    assert chosen.install_pytest == "poetry add --group dev pytest"
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # not a poetry project: not asked
    assert choose(project, env={"PATH": str(tmp_path / "bin")}).python == Path(sys.executable)


def test_pdms_pinned_interpreter_is_read_from_pdm_python(tmp_path: Path) -> None:
    python = fake_venv(tmp_path / "pdm-env")
    (tmp_path / ".pdm-python").write_text(f"{python}\n")
    assert choose(tmp_path).reason == "pdm's interpreter for the project (.pdm-python)"


def test_without_any_environment_fixloops_own_interpreter_runs_the_tests(tmp_path: Path) -> None:
    chosen = choose(tmp_path)
    assert chosen.command == (sys.executable, "-m", "pytest")  # never "python" from PATH
    assert chosen.reason.startswith("fixloop's own interpreter: no project environment was found")


def test_the_install_hint_follows_the_projects_tool(tmp_path: Path) -> None:
    fake_venv(tmp_path / ".venv")
    (tmp_path / "uv.lock").write_text("")
    assert choose(tmp_path).install_pytest == "uv add --dev pytest"
    os.remove(tmp_path / "uv.lock")
    fake_tool(tmp_path / "bin", "uv", "")
    python = tmp_path / ".venv" / "bin" / "python"
    hint = choose(tmp_path, env={"PATH": str(tmp_path / "bin")}).install_pytest
    assert hint == f"uv pip install --python {python} pytest"  # a venv without pip, uv on PATH
