"""Which Python runs a project's tests, and why: testCommand > the `python` setting (the editor's choice) >
the project's own environment > fixloop's own interpreter. Never a bare `python` from PATH.

The project's own environment, in order: a `.venv/` or `venv/` at the project root or a parent up to the
workspace folder; `$VIRTUAL_ENV`; `$CONDA_PREFIX`; the environment of the tool the project uses when that
tool is on PATH (poetry, pdm, hatch, pipenv; uv's `$UV_PROJECT_ENVIRONMENT`). A `testCommand` whose first
word is a bare `python` runs with the interpreter found that way. Tools are asked once per project and
process; their answers are kept while the interpreter they name exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.errors import ConfigError
from fixloop.platform_support import CURRENT, Platform, signal_tree

PYTEST_ARGS = ("-m", "pytest")
VENV_NAMES = (".venv", "venv")
TOOL_TIMEOUT = 20.0  # seconds a tool (poetry, pdm, hatch, pipenv) may take to name its environment
_BARE_PYTHON = re.compile(r"python(3(\.\d+)?)?(\.exe)?")
_tool_answers: dict[tuple[str, str], Path] = {}


@dataclass(frozen=True)
class TestInterpreter:
    """How one project's tests are run: the command's first words, and why fixloop chose them."""

    __test__ = False  # not a pytest test class

    command: tuple[str, ...]  # e.g. ("/p/.venv/bin/python", "-m", "pytest")
    reason: str  # e.g. "the project's .venv"
    python: Path | None  # the interpreter, when fixloop knows it (not for a custom testCommand)
    install_pytest: str  # the command that installs pytest into it

    def describe(self, base: Path) -> str:
        """One line for the live view, the LSP log and the transcript."""
        what = shown(self.python, base) if self.python is not None else shlex.join(self.command)
        return f"tests run with {what}: {self.reason}"

    def missing_pytest(self, base: Path) -> str:
        """The one-line error when the interpreter has no pytest."""
        what = shown(self.python, base) if self.python is not None else shlex.join(self.command)
        return f"pytest is not installed in {what} ({self.reason}): install it with `{self.install_pytest}`"


def shown(path: Path, base: Path) -> str:
    """`path` relative to `base` when inside it, else absolute with the home folder as ~."""
    with contextlib.suppress(ValueError):
        return path.relative_to(base).as_posix()
    home = Path.home()
    with contextlib.suppress(ValueError):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def venv_python(venv: Path, platform: Platform = CURRENT) -> Path:
    return platform.venv_python(venv)


def is_bare_python(word: str) -> bool:
    return bool(_BARE_PYTHON.fullmatch(word))


async def find_interpreter(
    project: Path,
    workspace: Path | None = None,
    *,
    test_command: Sequence[str] = (),
    python: str = "",
    env: Mapping[str, str] | None = None,
) -> TestInterpreter:
    """The interpreter for `project`'s tests (a folder inside `workspace`); a bad `python` is a ConfigError.

    Looking costs a few stats, and a tool's answer (poetry, …) a subprocess once: run in a thread.
    """
    return await asyncio.to_thread(
        choose_interpreter,
        project,
        workspace,
        test_command=test_command,
        python=python,
        env=os.environ if env is None else env,
    )


def choose_interpreter(
    project: Path,
    workspace: Path | None = None,
    *,
    test_command: Sequence[str] = (),
    python: str = "",
    env: Mapping[str, str] | None = None,
    platform: Platform = CURRENT,
) -> TestInterpreter:
    """`find_interpreter`, synchronously; `platform` says where a venv keeps its python."""
    env = os.environ if env is None else env
    project = project.resolve()
    workspace = workspace.resolve() if workspace is not None else project
    command = tuple(test_command)
    if command[1:] == PYTEST_ARGS and command[0] in ("python", "python3"):
        command = ()  # the old default (and VS Code's default value): the same as no testCommand
    if command and not is_bare_python(command[0]):
        head = _command_head(command[0], project, workspace)
        return TestInterpreter(
            (head, *command[1:]),
            "the testCommand setting",
            None,
            "the install command of the environment testCommand uses",
        )
    rest = command[1:] if command else PYTEST_ARGS
    interpreter, reason = _project_python(project, workspace, python, env, platform)
    if command:
        reason += f" (testCommand's {command[0]!r})"
    hint = _install_hint(interpreter, project, workspace, env)
    return TestInterpreter((str(interpreter), *rest), reason, interpreter, hint)


def _project_python(
    project: Path, workspace: Path, python: str, env: Mapping[str, str], platform: Platform
) -> tuple[Path, str]:
    """The interpreter the tests run with, and why, in order of precedence: the `python` setting, the
    nearest venv, an activated environment, a project tool's (pdm, poetry, hatch, ...), else fixloop's own."""
    chosen = _from_setting(python, workspace, env) if python.strip() else None
    return (
        chosen
        or _nearest_venv(project, workspace, platform)
        or _activated(env, platform)
        or _tool_environment(project, workspace, env)
        or (
            Path(sys.executable),
            "fixloop's own interpreter: no project environment was found "
            "(no .venv, no activated or tool environment); set `python` to choose one",
        )
    )


def _command_head(word: str, project: Path, workspace: Path) -> str:
    """A testCommand's first word; a relative path is taken from the project (the shadow has no venvs)."""
    if os.sep not in word and "/" not in word:
        return word
    path = Path(os.path.expanduser(word))
    if path.is_absolute():
        return str(path)
    for base in (project, workspace):
        if (base / path).exists():
            return str(base / path)
    return str(project / path)


def _from_setting(value: str, workspace: Path, env: Mapping[str, str]) -> tuple[Path, str]:
    raw = value.strip()
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        if os.sep not in raw and "/" not in raw:
            found = shutil.which(raw, path=env.get("PATH"))
            if found is None:
                raise ConfigError(
                    f"the python setting names {raw!r}, which is not on PATH: "
                    "set it to the project's interpreter (e.g. .venv/bin/python)"
                )
            return Path(found), f"the python setting ({raw} on PATH)"
        path = workspace / path
    if path.is_dir():
        path = venv_python(path)
    if not path.is_file():
        raise ConfigError(
            f"the python setting points to {path}, which does not exist: set it to the "
            "project's interpreter (e.g. .venv/bin/python) or leave it empty"
        )
    if not os.access(path, os.X_OK):
        raise ConfigError(f"the python setting points to {path}, which is not executable")
    return path.absolute(), "the python setting"


def _nearest_venv(project: Path, workspace: Path, platform: Platform) -> tuple[Path, str] | None:
    folders = [project]
    if project != workspace and workspace in project.parents:
        folders += [up for up in project.parents if up == workspace or workspace in up.parents]
    for folder in folders:
        for name in VENV_NAMES:
            venv = folder / name
            python = venv_python(venv, platform)
            if (venv / "pyvenv.cfg").is_file() and python.exists():
                if folder == project:
                    return python.absolute(), f"the project's {name}"
                where = "the workspace folder" if folder == workspace else shown(folder, workspace) + "/"
                return python.absolute(), f"the {name} of {where}"
    return None


def _activated(env: Mapping[str, str], platform: Platform) -> tuple[Path, str] | None:
    for variable, what in (
        ("VIRTUAL_ENV", "the activated virtual environment"),
        ("CONDA_PREFIX", "the active conda environment"),
    ):
        prefix = env.get(variable)
        if prefix and venv_python(Path(prefix), platform).exists():
            return venv_python(Path(prefix), platform), f"{what} (${variable})"
    return None


def _pyproject(folder: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _uses(tool: str, folder: Path, pyproject: Mapping[str, Any]) -> bool:
    tables = pyproject.get("tool", {}) if isinstance(pyproject.get("tool"), dict) else {}
    backend = str(pyproject.get("build-system", {}).get("build-backend", ""))
    if tool == "poetry":
        return "poetry" in tables or (folder / "poetry.lock").is_file() or backend.startswith("poetry")
    if tool == "pdm":
        return "pdm" in tables or (folder / "pdm.lock").is_file()
    if tool == "hatch":
        hatch = tables.get("hatch", {})
        return (isinstance(hatch, dict) and "envs" in hatch) or (folder / "hatch.toml").is_file()
    if tool == "pipenv":
        return (folder / "Pipfile").is_file()
    if tool == "uv":
        return (folder / "uv.lock").is_file() or "uv" in tables
    return False


_TOOL_QUERIES: dict[str, tuple[tuple[str, ...], str, bool]] = {
    # tool -> (arguments, reason, whether the answer is an environment folder rather than an interpreter)
    "poetry": (("env", "info", "--path"), "poetry's environment for the project", True),
    "pdm": (("info", "--python"), "pdm's interpreter for the project", False),
    "hatch": (("env", "find", "default"), "hatch's default environment", True),
    "pipenv": (("--venv",), "pipenv's environment for the project", True),
}


def _tool_environment(project: Path, workspace: Path, env: Mapping[str, str]) -> tuple[Path, str] | None:
    folders = [project] + ([workspace] if workspace != project else [])
    for folder in folders:
        pyproject = _pyproject(folder)
        pinned = folder / ".pdm-python"
        if pinned.is_file():
            with contextlib.suppress(OSError):
                python = Path(pinned.read_text(encoding="utf-8").strip())
                if python.is_file():
                    return python, "pdm's interpreter for the project (.pdm-python)"
        uv_env = env.get("UV_PROJECT_ENVIRONMENT")
        if uv_env and _uses("uv", folder, pyproject):
            python = venv_python(Path(uv_env) if Path(uv_env).is_absolute() else folder / uv_env)
            if python.exists():
                return python, "uv's project environment ($UV_PROJECT_ENVIRONMENT)"
        for tool, (arguments, reason, is_folder) in _TOOL_QUERIES.items():
            executable = shutil.which(tool, path=env.get("PATH"))
            if executable is None or not _uses(tool, folder, pyproject):
                continue
            key = (tool, str(folder))
            python = _tool_answers.get(key)
            if python is None or not python.exists():
                answer = _ask(executable, arguments, folder, env)
                if answer is None:
                    continue
                python = venv_python(Path(answer)) if is_folder else Path(answer)
                if not python.exists():
                    continue
                _tool_answers[key] = python
            return python, f"{reason} (`{tool} {' '.join(arguments)}`)"
    return None


def _ask(executable: str, arguments: Sequence[str], cwd: Path, env: Mapping[str, str]) -> str | None:
    """The last line a tool prints, or None when it fails or takes longer than TOOL_TIMEOUT."""
    try:
        proc = subprocess.Popen(
            [executable, *arguments],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            **CURRENT.new_group(),
        )
    except OSError:
        return None
    try:
        out, _ = proc.communicate(timeout=TOOL_TIMEOUT)
    except subprocess.TimeoutExpired:
        signal_tree(proc.pid, "SIGKILL")
        proc.communicate()
        return None
    lines = out.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].strip() if proc.returncode == 0 and lines else None


def _install_hint(python: Path, project: Path, workspace: Path, env: Mapping[str, str]) -> str:
    for folder in dict.fromkeys((project, workspace)):
        pyproject = _pyproject(folder)
        if _uses("uv", folder, pyproject):
            return "uv add --dev pytest"
        if _uses("poetry", folder, pyproject):
            return "poetry add --group dev pytest"
        if _uses("pdm", folder, pyproject):
            return "pdm add -dG test pytest"
    quoted = shlex.quote(str(python))
    prefix = python.parent.parent
    if (
        (prefix / "pyvenv.cfg").is_file()
        and not any(prefix.glob("lib/python3*/site-packages/pip"))
        and shutil.which("uv", path=env.get("PATH"))
    ):
        return f"uv pip install --python {quoted} pytest"
    return f"{quoted} -m pip install pytest"
