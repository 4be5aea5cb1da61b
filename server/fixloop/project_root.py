"""The project a test belongs to: the nearest pytest root above its file, inside the workspace folder.

pytest's rootdir and configfile rules, bounded by the workspace folder: going up from the test file's
folder, the first folder holding a pytest configuration file is the project (`pytest.ini`, `.pytest.ini`,
`pytest.toml`, `.pytest.toml`, a `pyproject.toml` with `[tool.pytest.ini_options]` or `[tool.pytest]`, a
`tox.ini` with `[pytest]`, a `setup.cfg` with `[tool:pytest]`). When no folder has one, the nearest folder
with a `pyproject.toml`, `setup.cfg`, `setup.py` or `tox.ini` is; when none has those either, the workspace
folder is. Settings, node ids, the shadow and the interpreter follow the project; what the user sees (test
ids, diffs, edits) stays relative to the workspace folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fixloop.errors import PathError
from fixloop.project import is_test_path, python_files

ALWAYS_CONFIG = ("pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml")
PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini")
_SECTIONS = {
    "pyproject.toml": re.compile(r"^\[tool\.pytest(\.ini_options)?\]", re.MULTILINE),
    "tox.ini": re.compile(r"^\[pytest\]", re.MULTILINE),
    "setup.cfg": re.compile(r"^\[tool:pytest\]", re.MULTILINE),
}


@dataclass(frozen=True)
class ProjectTarget:
    """Tests to fix and the project they belong to; `test_ids` are relative to `root`."""

    workspace: Path
    root: Path
    test_ids: tuple[str, ...]

    @property
    def prefix(self) -> str:
        """The project's folder relative to the workspace folder, '' or 'packages/app/'."""
        rel = self.root.relative_to(self.workspace).as_posix()
        return "" if rel == "." else rel + "/"

    def to_workspace(self, rel: str) -> str:
        """A path (or node id) relative to the project, made relative to the workspace folder."""
        return self.prefix + rel

    def to_project(self, rel: str) -> str | None:
        """A path relative to the workspace folder, relative to the project; None when outside it."""
        if not self.prefix:
            return rel
        return rel[len(self.prefix) :] if rel.startswith(self.prefix) else None


def has_pytest_config(folder: Path) -> bool:
    """Whether `folder` holds a file pytest takes as its configuration (see the module docstring)."""
    if any((folder / name).is_file() for name in ALWAYS_CONFIG):
        return True
    for name, section in _SECTIONS.items():
        path = folder / name
        if path.is_file():
            try:
                if section.search(path.read_text(encoding="utf-8", errors="replace")):
                    return True
            except OSError:
                continue
    return False


def project_root(workspace: Path, path: Path) -> Path:
    """The project of the file or folder `path` inside `workspace` (both resolved)."""
    start = path if path.is_dir() else path.parent
    folders = [start, *(up for up in start.parents if workspace in up.parents or up == workspace)]
    if workspace not in folders:
        return workspace  # outside the workspace folder: the caller's confinement reports it
    for folder in folders:
        if has_pytest_config(folder):
            return folder
    for folder in folders:
        if any((folder / name).is_file() for name in PROJECT_FILES):
            return folder
    return workspace


def locate(workspace: Path, test_ids: Sequence[str]) -> ProjectTarget:
    """The project the tests (node ids relative to `workspace`) belong to; one project per run."""
    workspace = workspace.resolve()
    roots: dict[Path, list[str]] = {}
    for test_id in test_ids:
        file_part, sep, rest = test_id.partition("::")
        root = project_root(workspace, (workspace / file_part).resolve())
        prefix = root.relative_to(workspace).as_posix()
        relative = file_part if prefix == "." else PurePosixPath(file_part).relative_to(prefix).as_posix()
        roots.setdefault(root, []).append(relative + sep + rest)
    if len(roots) > 1:
        names = ", ".join(sorted(root.relative_to(workspace).as_posix() for root in roots))
        raise PathError(f"the tests belong to different projects ({names}): fix one project at a time")
    if not roots:
        return ProjectTarget(workspace, workspace, ())
    ((root, ids),) = roots.items()
    return ProjectTarget(workspace, root, tuple(ids))


def top_level_modules(root: Path) -> dict[str, str]:
    """name -> file of the project's importable top-level modules and packages (a module or package
    whose folder is not itself a package: `src/pkg/__init__.py` -> pkg), tests left out."""
    files = python_files(root)
    present = set(files)
    found: dict[str, str] = {}
    for rel in files:
        path = PurePosixPath(rel)
        if is_test_path(rel) or path.name in ("setup.py", "noxfile.py"):
            continue
        if path.name == "__init__.py":
            package = path.parent
            if package.parts and (package.parent / "__init__.py").as_posix() not in present:
                found.setdefault(package.name, package.as_posix())
        elif (path.parent / "__init__.py").as_posix() not in present:
            found.setdefault(path.stem, rel)
    return found


def installed_copies(installed: dict[str, str], root: Path) -> list[tuple[str, str, str]]:
    """(name, installed path, project path) of each project package the tests loaded from an installed
    copy (a `pip install .` without -e): a fix to the project's files never reaches those tests."""
    if not installed:
        return []
    ours = top_level_modules(root)
    return [(name, path, ours[name]) for name, path in sorted(installed.items()) if name in ours]
