"""The project model: what is a test file, which folders are skipped, how to walk it, module → file.

One rule per concept; the gate, the tools, the shadow copy, the warm start and the editor face all ask here.

- **Test file** (the gate's rule, which `allowTestEdits`, the tamper guard and the edit annotation rely on):
  `conftest.py`, a Python file named `test_*.py` or `*_test.py`, or any file under a folder named `tests/`
  or `test/`. A folder named `testing/` is not a test folder (it is often product code: `numpy.testing`),
  and a non-Python file is a test file only under `tests/` or `test/` (`pkg/test_data.txt` is data).
- **Test configuration** (the tamper guard's rule; with `allowTestEdits` off the edit tools refuse the
  whole-file kinds up front): every pytest configuration file of the pytest versions we support —
  `pytest.toml`, `.pytest.toml`, `pytest.ini`, `.pytest.ini` (wholly), `pyproject.toml`, `tox.ini` and
  `setup.cfg` (their pytest sections) — `conftest.py` anywhere, and the interpreter's start-up hooks
  `sitecustomize.py`, `usercustomize.py` and `*.pth`, which run before any test.
- **Skipped folders** (never copied, listed, searched or walked): version control, tool caches and
  environments (`SKIPPED_DIRS`), and any folder holding a `pyvenv.cfg` (a virtualenv, whatever its name).
- **Source folders**: walks over the project's *code* (the warm start's code index, the gate's related test
  modules, traceback frames) also leave out hidden folders and build outputs (`build/`, `dist/`), which
  hold copies of the sources, never the sources themselves.
- **Module → file**: a file can be imported under every suffix of its dotted path (`src/pkg/m.py` is
  `pkg.m` and `m`); the file nearest the root wins a name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath

VCS_DIRS = frozenset({".git", ".hg", ".svn"})
CACHE_DIRS = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".eggs"}
)
ENVIRONMENT_DIRS = frozenset({".venv", "venv", "node_modules", "site-packages", "dist-packages"})
SKIPPED_DIRS = VCS_DIRS | CACHE_DIRS | ENVIRONMENT_DIRS
BUILD_DIRS = frozenset({"build", "dist"})
TEST_DIRS = frozenset({"tests", "test"})
CONFTEST = "conftest.py"
# pytest configuration read whole (pytest 9 reads the .toml ones; the dotted names are hidden variants).
PYTEST_CONFIG_FILES = frozenset({"pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"})
# Files holding a pytest section among others: file name -> the section header's pattern.
PYTEST_SECTIONS = {
    "pyproject.toml": r"tool\.pytest(\..*)?",  # [tool.pytest.ini_options] and pytest 9's [tool.pytest]
    "setup.cfg": r"tool:pytest",
    "tox.ini": r"pytest",
}
STARTUP_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})  # and any *.pth

Prune = Callable[[str, bool], bool]  # (path relative to the top, is a folder) -> leave it out


def is_test_path(rel: str) -> bool:
    """Whether `rel` (relative to the project root) is test code; see the module docstring for the rule."""
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    if not parts:
        return False
    name = parts[-1]
    if name == CONFTEST:
        return True
    if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
        return True
    return any(part in TEST_DIRS for part in parts[:-1])


def is_startup_hook(rel: str) -> bool:
    """Whether `rel` is an interpreter start-up hook (sitecustomize, usercustomize, a .pth file)."""
    name = PurePosixPath(rel.replace("\\", "/")).name
    return name in STARTUP_FILES or name.endswith(".pth")


def is_test_config(rel: str) -> bool:
    """Whether `rel` configures the test run: a pytest configuration file (for pyproject.toml, tox.ini and
    setup.cfg, their pytest sections), a conftest.py or a start-up hook; see the module docstring."""
    name = PurePosixPath(rel.replace("\\", "/")).name
    return name in PYTEST_CONFIG_FILES or name in PYTEST_SECTIONS or name == CONFTEST or is_startup_hook(rel)


def is_whole_test_config(rel: str) -> bool:
    """Whether every line of `rel` is test configuration (all of `is_test_config` but the files that only
    hold a pytest section among other settings)."""
    return is_test_config(rel) and PurePosixPath(rel.replace("\\", "/")).name not in PYTEST_SECTIONS


def is_environment(folder: Path) -> bool:
    """Whether `folder` is a virtualenv (it holds a pyvenv.cfg), whatever it is called."""
    return (folder / "pyvenv.cfg").is_file()


def is_cache_path(rel: str) -> bool:
    """Whether `rel` is something tools regenerate: bytecode or a file inside a cache folder."""
    return rel.endswith((".pyc", ".pyo")) or any(part in CACHE_DIRS for part in rel.split("/")[:-1])


def in_skipped_dir(rel: str) -> bool:
    """Whether a folder on the way to `rel` is skipped by name (no look at the disk)."""
    return any(part in SKIPPED_DIRS for part in rel.split("/")[:-1])


def is_source_dir(name: str) -> bool:
    """Whether a folder called `name` can hold project sources (not skipped, hidden or a build output)."""
    return name not in SKIPPED_DIRS and name not in BUILD_DIRS and not name.startswith(".")


def outside_sources(rel: str) -> bool:
    """Whether `rel` lies where no project source lives: skipped, hidden or build folders (by name)."""
    return not all(is_source_dir(part) for part in rel.split("/")[:-1])


def walk(top: Path, *, sources_only: bool = False, prune: Prune | None = None) -> Iterator[tuple[str, Path]]:
    """(path relative to `top`, full path) of every file under `top`, in sorted order.

    Skipped and environment folders are not entered, nor are symlinked folders: those are yielded as
    entries of their own (a caller copies or drops them; it never walks into another tree through one).
    `sources_only` also leaves out hidden and build folders; `prune` can leave out more (gitignored
    paths, say).
    """
    top = Path(top)
    for dirpath, dirnames, filenames in os.walk(top):
        current = Path(dirpath)
        rel_dir = current.relative_to(top).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        kept: list[str] = []
        for name in sorted(dirnames):
            folder = current / name
            if name in SKIPPED_DIRS or (sources_only and not is_source_dir(name)):
                continue
            if folder.is_symlink():
                if prune is None or not prune(prefix + name, False):
                    yield prefix + name, folder
                continue
            if is_environment(folder) or (prune is not None and prune(prefix + name, True)):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if prune is None or not prune(prefix + name, False):
                yield prefix + name, current / name


def python_files(root: Path, *, limit: int | None = None) -> list[str]:
    """The project's Python source files (tests included), relative with '/', sorted; at most `limit`."""
    found: list[str] = []
    for rel, _ in walk(root, sources_only=True):
        if rel.endswith(".py"):
            found.append(rel)
            if limit is not None and len(found) >= limit:
                break
    return found


def module_names(rel: str) -> set[str]:
    """Dotted names a file could be imported as: every suffix of its path ('src/pkg/m.py' -> pkg.m, m...)."""
    parts = list(PurePosixPath(rel).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[index:]) for index in range(len(parts))}


def module_map(files: Iterable[str]) -> dict[str, str]:
    """Dotted module name -> the file it names; the file nearest the root wins a name."""
    by_name: dict[str, str] = {}
    for rel in sorted(files, key=lambda rel: (rel.count("/"), rel)):
        for name in module_names(rel):
            by_name.setdefault(name, rel)
    return by_name
