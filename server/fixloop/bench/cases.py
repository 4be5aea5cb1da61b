"""Bench cases: found in folders (case.json, or a fixture project with fixes/NAME.json), subsets, copies;
a case's hidden checks stay out of every copy until the judge places them."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any

from fixloop.bench.process import last_line, run_process
from fixloop.errors import FixloopError
from fixloop.project import SKIPPED_DIRS

CASE_FILE = "case.json"
DEFAULT_TEST_COMMAND = ("python", "-m", "pytest")
SETUP_TIMEOUT = 900.0
MAX_DEPTH = 4  # how deep below a named folder cases are looked for
HIDDEN_TEST_PATTERN = "test_hidden_*.py"
_COPY_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc")
_CACHES = {"__pycache__", ".pytest_cache"}
_GIT = (
    "-c",
    "user.name=fixloop bench",
    "-c",
    "user.email=bench@fixloop.invalid",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.hooksPath=/dev/null",
)


class CaseError(FixloopError):
    """A case folder, case.json or subset file that cannot be used, or a case that cannot be set up."""


@dataclass(frozen=True)
class Reference:
    """The original text where the bug is (case.json's `reference`), shown beside a plausible verdict."""

    path: str  # a file in the project
    text: str

    def describe(self) -> str:
        """One line: the file and the original text, its lines joined by " / "."""
        lines = [line.strip() for line in self.text.strip().splitlines() if line.strip()]
        return f"{self.path}: {' / '.join(lines)}"[:300]


@dataclass(frozen=True)
class BenchCase:
    """One buggy project and the tests that show the bug (see CONTRACT: the bench case format)."""

    name: str
    folder: Path  # the case folder (holding case.json), or the fixture project itself
    failing_test_ids: tuple[str, ...]
    project: str = "."  # the project folder inside the case
    test_command: tuple[str, ...] = DEFAULT_TEST_COMMAND
    setup: tuple[str, ...] = ()
    bug_files: tuple[str, ...] = ()  # for reporting only, never shown to the model
    kind: str = ""
    git_init: bool = False  # a fixture project: each copy becomes a repository with one commit
    hidden_checks: Path | None = None  # the hidden checks' folder, resolved; it mirrors the project's layout
    hidden_tests: tuple[str, ...] = ()  # its test_hidden_*.py files, as paths in the project
    reference: Reference | None = None  # for reporting only, never shown to the model


# -- finding cases ------------------------------------------------------------------------------------


def find_cases(folders: Sequence[Path]) -> list[BenchCase]:
    """Every case in or under `folders`, in order; raises CaseError for no cases or a broken case.json."""
    if not folders:
        raise CaseError("name the case folders: fixloop bench CASES_DIR…")
    cases: list[BenchCase] = []
    for folder in folders:
        if not folder.is_dir():
            raise CaseError(f"{folder} is not a folder: give folders of bench cases")
        found = _cases_under(folder.resolve(), 0)
        if not found:
            raise CaseError(
                f"no bench cases in {folder}: a case is a folder with a {CASE_FILE} "
                "(see docs/bench.md), or a fixture project with fixes/NAME.json"
            )
        cases.extend(found)
    seen: dict[str, Path] = {}
    for case in cases:
        if case.name in seen and seen[case.name] != case.folder:
            raise CaseError(
                f"two cases are named {case.name!r} ({seen[case.name]} and {case.folder}); "
                "case names must be unique"
            )
        seen[case.name] = case.folder
    return list({case.name: case for case in cases}.values())


def _cases_under(folder: Path, depth: int) -> list[BenchCase]:
    single = _case_at(folder)
    if single is not None:
        return [single]
    if depth >= MAX_DEPTH:
        return []
    found: list[BenchCase] = []
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.name.startswith(".") and child.name not in SKIPPED_DIRS:
            found.extend(_cases_under(child, depth + 1))
    return found


def _case_at(folder: Path) -> BenchCase | None:
    if (folder / CASE_FILE).is_file():
        return read_case(folder)
    fix = folder.parent.parent / "fixes" / f"{folder.name}.json"
    if folder.parent.name == "projects" and fix.is_file():
        return _fixture_case(folder, fix)
    return None


def read_case(folder: Path) -> BenchCase:
    """The case in `folder` from its case.json; every problem is named with the file and field."""
    path = folder / CASE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CaseError(f"{path}: not readable JSON ({error})") from None
    if not isinstance(data, dict):
        raise CaseError(f"{path}: must hold a JSON object")
    ids = _strings(data, "failing_test_ids", path, required=True)
    project = data.get("project", ".")
    if not isinstance(project, str) or Path(project).is_absolute() or ".." in Path(project).parts:
        raise CaseError(f"{path}: project must be a folder inside the case, got {project!r}")
    if not (folder / project).is_dir():
        raise CaseError(f"{path}: project folder {project!r} does not exist")
    command = _strings(data, "test_command", path) or DEFAULT_TEST_COMMAND
    kind = data.get("kind", "")
    hidden, hidden_tests = _hidden_checks(data, path, folder / project)
    return BenchCase(
        folder.name,
        folder,
        ids,
        project,
        command,
        _strings(data, "setup", path),
        _strings(data, "bug_files", path),
        kind if isinstance(kind, str) else "",
        hidden_checks=hidden,
        hidden_tests=hidden_tests,
        reference=_reference(data, path, folder / project),
    )


def _strings(data: dict[str, Any], key: str, path: Path, required: bool = False) -> tuple[str, ...]:
    value = data.get(key)
    if value is None and not required:
        return ()
    if (
        not isinstance(value, list)
        or not all(isinstance(item, str) and item for item in value)
        or (required and not value)
    ):
        need = "a non-empty list" if required else "a list"
        raise CaseError(f"{path}: {key} must be {need} of strings, got {value!r}")
    return tuple(value)


def _hidden_checks(data: dict[str, Any], path: Path, project: Path) -> tuple[Path | None, tuple[str, ...]]:
    """case.json's `hidden_checks`: the folder (relative to the case, outside the project) and its
    test_hidden_*.py files as project paths; none of its files may stand where the project has one."""
    value = data.get("hidden_checks")
    if value is None:
        return None, ()
    if not isinstance(value, str) or not value.strip() or Path(value).is_absolute():
        raise CaseError(f"{path}: hidden_checks must be a folder relative to the case folder, got {value!r}")
    folder, root = (path.parent / value).resolve(), project.resolve()
    if folder.is_relative_to(root) or root.is_relative_to(folder):
        raise CaseError(
            f"{path}: hidden_checks {value!r} must lie outside the project folder "
            "(the fixing run's copy holds the whole project)"
        )
    if not folder.is_dir():
        raise CaseError(f"{path}: hidden_checks folder {value!r} does not exist")
    files = hidden_files(folder)
    clash = next((rel for rel in files if (root / rel).exists()), None)
    if clash is not None:
        raise CaseError(f"{path}: hidden_checks file {clash} would replace the project's own {clash}")
    tests = tuple(rel for rel in files if fnmatch(PurePosixPath(rel).name, HIDDEN_TEST_PATTERN))
    if not tests:
        raise CaseError(f"{path}: hidden_checks folder {value!r} holds no {HIDDEN_TEST_PATTERN} file")
    return folder, tests


def hidden_files(folder: Path) -> list[str]:
    """Every file of a hidden checks folder as a path in the project (bytecode caches left out)."""
    found = []
    for file in folder.rglob("*"):
        rel = file.relative_to(folder)
        if file.is_file() and not _CACHES & set(rel.parts) and file.suffix != ".pyc":
            found.append(rel.as_posix())
    return sorted(found)


def _reference(data: dict[str, Any], path: Path, project: Path) -> Reference | None:
    value = data.get("reference")
    if value is None:
        return None
    fields = ("path", "text")
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str) and value[k] for k in fields):
        raise CaseError(
            f'{path}: reference must be {{"path": a file in the project, "text": the original line(s)}}, '
            f"got {value!r}"
        )
    rel = value["path"]
    if Path(rel).is_absolute() or ".." in Path(rel).parts or not (project / rel).is_file():
        raise CaseError(f"{path}: reference path {rel!r} is not a file in the project")
    return Reference(rel, value["text"])


def _fixture_case(folder: Path, fix_path: Path) -> BenchCase:
    try:
        fix = json.loads(fix_path.read_text(encoding="utf-8"))
        ids = tuple(fix["test_ids"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CaseError(f"{fix_path}: needs test_ids, a list of node ids ({error})") from None
    files = tuple(dict.fromkeys(edit.get("path", "") for edit in fix.get("edits", [])))
    return BenchCase(folder.name, folder, ids, bug_files=files, git_init=bool(fix.get("git", True)))


def select(cases: list[BenchCase], subset: Path | None) -> list[BenchCase]:
    """The cases named in the subset file (one name a line, # comments), in the file's order."""
    if subset is None:
        return cases
    try:
        lines = subset.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise CaseError(f"cannot read the subset file {subset}: {error}") from None
    names = [name for name in dict.fromkeys(line.split("#", 1)[0].strip() for line in lines) if name]
    by_name = {case.name: case for case in cases}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise CaseError(f"{subset}: no case named {', '.join(unknown[:5])}{more} in the folders given")
    if not names:
        raise CaseError(f"{subset} names no cases: one case name a line")
    return [by_name[name] for name in names]


def pick(cases: list[BenchCase], names: Sequence[str]) -> list[BenchCase]:
    """The cases of these names (--case), in the order given; all cases when no name is given."""
    if not names:
        return cases
    by_name = {case.name: case for case in cases}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        known = ", ".join(sorted(by_name)[:8]) + (", …" if len(by_name) > 8 else "")
        raise CaseError(f"no case named {', '.join(unknown[:5])}; the cases found are {known}")
    return [by_name[name] for name in dict.fromkeys(names)]


# -- fresh copies -------------------------------------------------------------------------------------


class CaseCopy:
    """`async with CaseCopy(case) as root:` a fresh copy of the case (setup done), removed afterwards."""

    def __init__(self, case: BenchCase, *, setup: bool = True) -> None:
        self.case = case
        self.run_setup = setup
        self.container: Path | None = None

    async def __aenter__(self) -> Path:
        self.container = Path(tempfile.mkdtemp(prefix="fixloop-bench-"))
        try:
            root = await asyncio.to_thread(copy_case, self.case, self.container / self.case.name)
            if self.run_setup:
                await run_setup(self.case, root)
        except BaseException:
            await asyncio.to_thread(shutil.rmtree, self.container, True)
            raise
        return root

    async def __aexit__(self, *exc_info: object) -> None:
        if self.container is not None:
            await asyncio.to_thread(shutil.rmtree, self.container, True)


def copy_case(case: BenchCase, dest: Path) -> Path:
    """Copy the case to `dest` (case.json and the hidden checks left out) and return the project root
    inside the copy."""
    hidden = case.hidden_checks

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = set(_COPY_IGNORE(directory, names))
        if Path(directory) == case.folder and CASE_FILE in names:
            skipped.add(CASE_FILE)
        if hidden is not None and hidden.name in names and Path(directory).resolve() == hidden.parent:
            skipped.add(hidden.name)
        return skipped

    shutil.copytree(case.folder, dest, ignore=ignore, symlinks=True)
    if case.git_init:
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
            done = subprocess.run(["git", *_GIT, *args], cwd=dest, capture_output=True, text=True)
            if done.returncode != 0:
                raise CaseError(f"git {args[0]} in the copy of {case.name} failed: {last_line(done.stderr)}")
    return dest / case.project


def place_hidden_checks(case: BenchCase, root: Path) -> None:
    """The judge's step after the visible suite passed: the hidden checks' files put in the copy's project."""
    if case.hidden_checks is not None:
        shutil.copytree(case.hidden_checks, root, ignore=_COPY_IGNORE, dirs_exist_ok=True)


def copy_top(case: BenchCase, root: Path) -> Path:
    """The top of a copy, given the project root inside it."""
    depth = len(Path(case.project).parts) if case.project not in ("", ".") else 0
    return root.parents[depth - 1] if depth else root


PYTHON_ENV = "FIXLOOP_BENCH_PYTHON"  # the interpreter `python` means in the cases, when not the bench's own


def bench_python() -> str:
    """The interpreter `python` means in a case without a venv of its own: $FIXLOOP_BENCH_PYTHON (one with
    pytest and nothing else a case does not ask for, say), else the one running the bench."""
    chosen = os.environ.get(PYTHON_ENV, "").strip()
    if chosen and not Path(chosen).is_file():
        raise CaseError(f"{PYTHON_ENV}={chosen} is not an interpreter: name a python executable or unset it")
    return chosen or sys.executable


def bench_env(root: Path) -> dict[str, str]:
    """The environment of setup commands and the judge: `python` is the bench's interpreter."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(bench_python()).parent), env.get("PATH", "")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_CURRENT_TEST", None)
    env["FIXLOOP_BENCH_PROJECT"] = str(root)
    return env


async def run_setup(case: BenchCase, root: Path) -> None:
    """Run the case's setup commands in the copy, in order; a failure is a CaseError naming the command."""
    for command in case.setup:
        try:
            done = await run_process(command, cwd=root, env=bench_env(root), limit=SETUP_TIMEOUT)
        except OSError as error:
            raise CaseError(f"setup command `{command}` could not start: {error}") from None
        if done.timed_out:
            raise CaseError(f"setup command `{command}` took over {SETUP_TIMEOUT:g}s")
        if done.exit_code != 0:
            raise CaseError(
                f"setup command `{command}` failed (exit {done.exit_code}): {last_line(done.output)}"
            )


def resolve_test_command(case: BenchCase, root: Path) -> tuple[str, ...]:
    """The case's test command with `python` made concrete: the copy's own virtualenv when setup made one
    (.venv or venv), else the bench's interpreter (`bench_python`); the judge and fixloop's runs get the same
    one."""
    head, *rest = case.test_command
    if head in ("python", "python3"):
        for venv in (".venv", "venv"):
            for candidate in (root / venv / "bin" / "python", root / venv / "Scripts" / "python.exe"):
                if candidate.is_file():
                    return (str(candidate), *rest)
        return (bench_python(), *rest)
    if "/" in head and not Path(head).is_absolute():
        return (str(root / head), *rest)
    return (head, *rest)
