"""What goes into the proposal: the changes minus new files the fix does not need (scratch scripts, notes)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from fixloop.project import is_test_config, module_names, python_files
from fixloop.result import FileChange
from fixloop.verify.imports import imported, imports_of

_ALWAYS_KEPT = frozenset({"setup.py"})  # besides test configuration, which is always judged


def _project_sources(root: Path) -> list[tuple[str, str]]:
    sources = []
    for rel in python_files(root):
        try:
            sources.append((rel, (root / rel).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return sources


class _Known:
    """What the kept changes (and, with a root, the project's importers) import and name."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.paths: set[str] = set()
        self.texts: list[str] = []

    def learn(self, path: str, text: str | None) -> None:
        if text is None:
            return
        self.texts.append(text)
        if path.endswith(".py"):
            more_names, more_paths = imports_of(path, text)
            self.names.update(more_names)
            self.paths.update(more_paths)


def proposal_changes(changes: list[FileChange], *, root: Path | None = None) -> list[FileChange]:
    """The changes minus new files the fix does not need (debug scripts, scratch tests, notes).

    A new file stays when a kept change imports it (Python files) or names it (other files), when it
    is an `__init__.py` of a folder holding a kept file, or when it is test configuration (so the tamper
    guard judges it). With `root`
    (the shadow), existing files' imports count too: a fix may create a module that code already imports.
    """
    kept = [change for change in changes if change.old_text is not None]
    pending = [change for change in changes if change.old_text is None]
    known = _Known()
    for change in kept:
        known.learn(change.path, change.new_text)
    if root is not None and pending:
        new_paths = {change.path for change in changes}
        wanted = {name.rsplit(".", 1)[-1] for change in pending for name in module_names(change.path)}
        for rel, text in _project_sources(root):
            if rel not in new_paths and any(word in text for word in wanted):
                known.learn(rel, text)
    progress = True
    while pending and progress:  # a kept new file may import or name another
        progress = False
        for change in list(pending):
            if _needed(change, known, kept):
                kept.append(change)
                pending.remove(change)
                known.learn(change.path, change.new_text)
                progress = True
    return sorted(kept, key=lambda change: change.path)


def _needed(change: FileChange, known: _Known, kept: list[FileChange]) -> bool:
    """Whether the new file `change` is part of the fix, by what is known so far."""
    name = PurePosixPath(change.path).name
    folder = PurePosixPath(change.path).parent
    python = change.path.endswith(".py")
    return (
        name in _ALWAYS_KEPT
        or is_test_config(change.path)
        or (python and imported(change, known.names, known.paths))
        or (not python and any(name in text for text in known.texts))
        or (name == "__init__.py" and any(PurePosixPath(other.path).is_relative_to(folder) for other in kept))
    )
