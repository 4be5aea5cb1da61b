"""Documents and URIs: workspace folders, uri <-> path, and the client's open buffers (text and versions)."""

from __future__ import annotations

from pathlib import Path

from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from fixloop.errors import PathError


def workspace_roots(ls: LanguageServer) -> list[Path]:
    roots = [Path(p) for f in ls.workspace.folders.values() if (p := to_fs_path(f.uri))]
    if not roots and ls.workspace.root_path:
        roots.append(Path(ls.workspace.root_path))
    return [root.resolve() for root in roots]


def default_root(ls: LanguageServer) -> Path:
    roots = workspace_roots(ls)
    if not roots:
        raise PathError("no workspace folder is open: open the project folder first")
    return roots[0]


def path_of(uri: str) -> Path:
    path = to_fs_path(uri)
    if not path:
        raise PathError(f"{uri} is not a file on disk")
    return Path(path).resolve()


def root_of(ls: LanguageServer, path: Path) -> Path:
    """The innermost workspace folder holding `path`; a file elsewhere is an error."""
    holding = [root for root in workspace_roots(ls) if path == root or root in path.parents]
    if not holding:
        raise PathError(f"{path} is outside the workspace; fixloop only works on files in an open folder")
    return max(holding, key=lambda root: len(root.parts))


def folder_of(ls: LanguageServer, uri: str) -> Path:
    """The workspace folder a command's `root` names; anything else is an error."""
    path = path_of(uri)
    if path not in workspace_roots(ls):
        raise PathError(f"root {uri} is not a workspace folder: send one of the open folders' URIs")
    return path


def inside(root: Path, path: Path) -> Path:
    """`root`, when `path` lies in it; a file of another folder is an error."""
    if path != root and root not in path.parents:
        raise PathError(f"{path} is not in the workspace folder {root}")
    return root


def relpath(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def uri_of(root: Path, rel: str) -> str:
    return from_fs_path(str(root / rel)) or (root / rel).as_uri()


def document_text(ls: LanguageServer, uri: str) -> str | None:
    """The open buffer's text (unsaved edits included), else the file on disk, else None."""
    try:
        return ls.workspace.get_text_document(uri).source
    except (OSError, UnicodeDecodeError):
        return None


def open_versions(ls: LanguageServer) -> dict[str, int]:
    """uri -> version of every document the client has open."""
    return {uri: doc.version for uri, doc in ls.workspace.text_documents.items() if doc.version is not None}


def unsaved_buffers(ls: LanguageServer, root: Path) -> dict[str, str]:
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
