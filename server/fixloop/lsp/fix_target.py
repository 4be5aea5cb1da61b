"""Which project and which tests a fix request means: `resolve_target()`, from arguments to a typed target."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pygls.lsp.server import LanguageServer

from fixloop.errors import PathError, TestRunError
from fixloop.lsp.documents import default_root, document_text, folder_of, inside, path_of, relpath, root_of
from fixloop.lsp.errors import BadArguments
from fixloop.pytest_runner import locate

USAGE = (
    'fixFailingTest takes one object: {"testId": "tests/test_x.py::test_y", "root"?: "file:///folder"} '
    'or {"uri": "file:///…", "position": {"line": 0, "character": 0}}'
)


@dataclass(frozen=True)
class FixArgs:
    """fixFailingTest's argument object: a test id, or a file uri with an optional cursor position."""

    test_id: str | None = None
    uri: str | None = None
    line: int | None = None  # 0-based, as LSP sends it
    character: int = 0
    root: str | None = None  # the workspace folder's URI (CONTRACT: `root`); else the first folder

    @classmethod
    def parse(cls, args: tuple[Any, ...]) -> FixArgs:
        if len(args) != 1 or not isinstance(args[0], Mapping):
            raise BadArguments(USAGE)
        raw = args[0]
        test_id, uri, position = raw.get("testId"), raw.get("uri"), raw.get("position")
        if test_id is not None and (not isinstance(test_id, str) or "::" not in test_id):
            raise BadArguments(f"testId must be a pytest node id like tests/t.py::test_y, got {test_id!r}")
        if uri is not None and not isinstance(uri, str):
            raise BadArguments(f"uri must be a string, got {uri!r}")
        root = raw.get("root")
        if root is not None and not isinstance(root, str):
            raise BadArguments(f"root must be a workspace folder's URI, got {root!r}")
        if test_id is None and uri is None:
            raise BadArguments("fixFailingTest needs a testId or a uri")
        line: int | None = None
        character = 0
        if position is not None:
            if (
                not isinstance(position, Mapping)
                or not isinstance(position.get("line"), int)
                or position["line"] < 0
            ):
                raise BadArguments(f"position must be {{line, character}} with line >= 0, got {position!r}")
            line = position["line"]
            character = position.get("character") if isinstance(position.get("character"), int) else 0
        return cls(test_id=test_id, uri=uri, line=line, character=character, root=root)


@dataclass(frozen=True)
class FixTarget:
    """What to fix: the workspace folder, the test ids (none yet: the first failing test of `file`)."""

    root: Path
    test_ids: tuple[str, ...]
    file: Path | None = None  # the document the request named, if any

    @property
    def label(self) -> str:
        """How progress and the edit are labelled: `fixloop: fix <test or file>`."""
        what = self.test_ids[0] if self.test_ids else relpath(self.root, self.file or self.root)
        return f"fixloop: fix {what}"


def resolve_target(ls: LanguageServer, args: tuple[Any, ...]) -> FixTarget:
    """The request's target; every bad argument, unknown file or position outside a test is an error here."""
    fix = FixArgs.parse(args)
    folder = folder_of(ls, fix.root) if fix.root is not None else None
    if fix.uri is not None:
        path: Path | None = path_of(fix.uri)
        root = root_of(ls, path) if folder is None else inside(folder, path)
    else:
        path, root = None, folder or default_root(ls)
    test_ids: tuple[str, ...] = ()
    if fix.test_id is not None:
        test_ids = (fix.test_id,)
    elif path is not None and fix.line is not None:
        test_ids = (test_id_under_cursor(ls, root, path, fix.uri or "", fix.line),)
    if test_ids:
        check_test_id(root, test_ids[0])
    return FixTarget(root, test_ids, path)


def test_id_under_cursor(ls: LanguageServer, root: Path, path: Path, uri: str, line: int) -> str:
    """The test (parametrized ids included) whose function holds 0-based `line`, else an error."""
    test_id = locate.test_id_at(root, path, line + 1, document_text(ls, uri))
    if test_id is None:
        raise TestRunError(f"line {line + 1} of {relpath(root, path)} is not inside a test function")
    return test_id


test_id_under_cursor.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def check_test_id(root: Path, test_id: str) -> None:
    """Refuse quickly an id whose file is missing; the engine checks the rest when it collects."""
    file_part = test_id.split("::", 1)[0]
    target = (root / file_part).resolve()
    if root not in target.parents:
        raise PathError(f"{file_part} is outside the workspace")
    if not target.is_file():
        raise TestRunError(f"unknown test id {test_id}: {file_part} does not exist")
