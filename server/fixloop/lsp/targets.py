"""Which project and which tests a request means: workspace roots, uri -> path, cursor -> test id."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import from_fs_path, to_fs_path

from fixloop.errors import FixloopError, PathError, TestRunError

if TYPE_CHECKING:
    from fixloop.lsp.server import FixloopServer


class BadArguments(FixloopError):
    """The command's arguments do not have the documented shape."""


@dataclass(frozen=True)
class FixArgs:
    """fixFailingTest's argument object: a test id, or a file uri with an optional cursor position."""

    test_id: str | None = None
    uri: str | None = None
    line: int | None = None  # 0-based, as LSP sends it
    character: int = 0

    @classmethod
    def parse(cls, args: tuple[Any, ...]) -> FixArgs:
        if len(args) != 1 or not isinstance(args[0], Mapping):
            raise BadArguments(
                'fixFailingTest takes one object: {"testId": "tests/test_x.py::test_y"} '
                'or {"uri": "file:///…", "position": {"line": 0, "character": 0}}'
            )
        raw = args[0]
        test_id, uri, position = raw.get("testId"), raw.get("uri"), raw.get("position")
        if test_id is not None and (not isinstance(test_id, str) or "::" not in test_id):
            raise BadArguments(f"testId must be a pytest node id like tests/t.py::test_y, got {test_id!r}")
        if uri is not None and not isinstance(uri, str):
            raise BadArguments(f"uri must be a string, got {uri!r}")
        if test_id is None and uri is None:
            raise BadArguments("fixFailingTest needs a testId or a uri")
        line: int | None = None
        character = 0
        if position is not None:
            if (not isinstance(position, Mapping) or not isinstance(position.get("line"), int)
                    or position["line"] < 0):
                raise BadArguments(f"position must be {{line, character}} with line >= 0, got {position!r}")
            line = position["line"]
            character = position.get("character") if isinstance(position.get("character"), int) else 0
        return cls(test_id=test_id, uri=uri, line=line, character=character)


def workspace_roots(ls: FixloopServer) -> list[Path]:
    roots = [Path(p) for f in ls.workspace.folders.values() if (p := to_fs_path(f.uri))]
    if not roots and ls.workspace.root_path:
        roots.append(Path(ls.workspace.root_path))
    return [root.resolve() for root in roots]


def default_root(ls: FixloopServer) -> Path:
    roots = workspace_roots(ls)
    if not roots:
        raise PathError("no workspace folder is open: open the project folder first")
    return roots[0]


def path_of(uri: str) -> Path:
    path = to_fs_path(uri)
    if not path:
        raise PathError(f"{uri} is not a file on disk")
    return Path(path).resolve()


def root_of(ls: FixloopServer, path: Path) -> Path:
    """The innermost workspace folder holding `path`; a file elsewhere is an error."""
    holding = [root for root in workspace_roots(ls) if path == root or root in path.parents]
    if not holding:
        raise PathError(f"{path} is outside the workspace; fixloop only works on files in an open folder")
    return max(holding, key=lambda root: len(root.parts))


def relpath(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def uri_of(root: Path, rel: str) -> str:
    return from_fs_path(str(root / rel)) or (root / rel).as_uri()


def document_text(ls: FixloopServer, uri: str) -> str | None:
    """The open buffer's text (unsaved edits included), else the file on disk, else None."""
    try:
        return ls.workspace.get_text_document(uri).source
    except (OSError, UnicodeDecodeError):
        return None


def open_versions(ls: FixloopServer) -> dict[str, int]:
    """uri -> version of every document the client has open."""
    return {uri: doc.version for uri, doc in ls.workspace.text_documents.items() if doc.version is not None}


def unsaved_buffers(ls: FixloopServer, root: Path) -> dict[str, str]:
    """relpath -> text of every open buffer under `root` whose text differs from the file on disk."""
    overlays: dict[str, str] = {}
    for uri, doc in ls.workspace.text_documents.items():
        fs = to_fs_path(uri)
        if not fs:
            continue
        path = Path(fs).resolve()
        if root not in path.parents:
            continue
        try:
            on_disk: str | None = path.read_bytes().decode("utf-8")  # CRLF kept, as in the buffer
        except (OSError, UnicodeDecodeError):
            on_disk = None
        if doc.source != on_disk:
            overlays[relpath(root, path)] = doc.source
    return overlays


def test_id_under_cursor(ls: FixloopServer, root: Path, path: Path, uri: str, line: int) -> str:
    """The test (parametrized ids included) whose function holds 0-based `line`, else an error."""
    from fixloop.pytest_runner import locate

    source = document_text(ls, uri)
    test_id = locate.test_id_at(root, path, line + 1, source)
    if test_id is None:
        raise TestRunError(f"line {line + 1} of {relpath(root, path)} is not inside a test function")
    return test_id


def check_test_id(root: Path, test_id: str) -> None:
    """Refuse quickly an id whose file is missing; the engine checks the rest when it collects."""
    file_part = test_id.split("::", 1)[0]
    target = (root / file_part).resolve()
    if root not in target.parents:
        raise PathError(f"{file_part} is outside the workspace")
    if not target.is_file():
        raise TestRunError(f"unknown test id {test_id}: {file_part} does not exist")
