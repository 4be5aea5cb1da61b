"""run_tests' arguments as node ids: each file part goes through the resolver to a test file in the project.

Nothing the model writes becomes a pytest option: an id may not start with `-` or `@` (pytest reads
`@file` as a file of arguments), may hold no control character, and its file part (before the first
`::`) must resolve, through `Workspace.resolve`, to a test file inside the project (the project model's
rule). A folder inside the project stands for the test files under it, as the resolver lists them
(so links out of the project are never followed). The runner passes the ids after `--`.
"""

from __future__ import annotations

import re
from pathlib import Path

from fixloop.errors import PathError, TestRunError
from fixloop.project import is_test_path
from fixloop.tools.workspace import Workspace

MAX_IDS = 200
MAX_ID_CHARS = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
EXAMPLE = "e.g. 'tests/test_app.py::test_parse' or 'tests/test_app.py'"


class TestIdError(TestRunError):
    """A run_tests argument that is not a node id of a test inside the project."""

    __test__ = False


def checked_test_ids(workspace: Workspace, raw_ids: list[str], known: tuple[str, ...] = ()) -> list[str]:
    """The ids as pytest will get them (file parts relative to the root), or a TestIdError naming the
    first bad one and what is accepted instead. The file parts of `known` ids (the run's targets) count
    as test files whatever their names (a project may configure other `python_files`)."""
    known_files = frozenset(tid.partition("::")[0] for tid in known)
    ids: list[str] = []
    for raw in raw_ids:
        ids.extend(_checked(workspace, raw, known_files))
    if len(ids) > MAX_IDS:
        raise TestIdError(f"{len(ids)} test ids (at most {MAX_IDS}); run fewer tests or a narrower folder")
    return list(dict.fromkeys(ids))


def check_target_ids(workspace: Workspace, raw_ids: list[str]) -> None:
    """The ids a fix is asked for (by the editor or the command line) must be node ids inside the project
    too: no option, no control character, a file part the resolver accepts (pytest says if it is missing)."""
    for raw in raw_ids:
        _resolved(workspace, raw, must_exist=False)


def _resolved(workspace: Workspace, raw: str, *, must_exist: bool) -> tuple[str, Path, str, str]:
    """(the id's text, its file part resolved, '::' or '', the rest) or a TestIdError."""
    text = raw.strip()
    shown = repr(text) if len(text) <= 80 else repr(text[:80]) + "…"
    if len(text) > MAX_ID_CHARS:
        raise TestIdError(f"test id {shown} is {len(text)} characters long; give a node id, {EXAMPLE}")
    if text.startswith(("-", "@")):
        raise TestIdError(
            f"{shown} is not a test id: only node ids are run, never pytest options or @files; {EXAMPLE}"
        )
    if _CONTROL.search(text):
        raise TestIdError(f"test id {shown} holds a control character (a NUL or a newline); {EXAMPLE}")
    path, sep, rest = text.partition("::")
    try:
        resolved = workspace.resolve(path, must_exist=must_exist)
    except PathError as error:
        raise TestIdError(f"test id {shown}: {error.message}") from None
    return shown, resolved, sep, rest


def _checked(workspace: Workspace, raw: str, known_files: frozenset[str]) -> list[str]:
    shown, resolved, sep, rest = _resolved(workspace, raw, must_exist=True)
    rel = workspace.relative(resolved)
    if resolved.is_dir():
        if sep:
            raise TestIdError(f"test id {shown} names a folder, not a test file; {EXAMPLE}")
        under = "" if rel == "." else rel
        files = [f for f in workspace.list_files(under) if f.endswith(".py") and _collected(f)]
        if not files:
            raise TestIdError(f"no test files under {rel!r}; {EXAMPLE}")
        return files
    if rel not in known_files and (not is_test_path(rel) or not rel.endswith(".py")):
        raise TestIdError(
            f"{rel!r} is not a test file (test_*.py, *_test.py or a .py file under tests/); "
            f"run the tests that cover it, {EXAMPLE}"
        )
    return [rel + sep + rest]


def _collected(rel: str) -> bool:
    """Whether pytest's default rule collects tests from this file (test_*.py or *_test.py)."""
    name = rel.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py")
