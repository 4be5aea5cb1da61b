"""The WorkspaceEdit builder: documentChanges + annotations, versions, plain changes, files it cannot make."""

from __future__ import annotations

import pytest
from lsprotocol import types

from fixloop.lsp.errors import UnsupportedEdit
from fixloop.lsp.workspace_edit import EditCapabilities, build_workspace_edit
from fixloop.result import FileChange

VSCODE = EditCapabilities(
    apply_edit=True,
    document_changes=True,
    change_annotations=True,
    resource_operations=frozenset({"create", "delete", "rename"}),
)
NEOVIM = EditCapabilities(apply_edit=True, resource_operations=frozenset({"create", "delete", "rename"}))
SOURCE = FileChange("calc.py", "a = 1\n", "a = 2\n")
TEST = FileChange("tests/test_calc.py", "assert x\n", "assert y\n")


def uri_of(rel: str) -> str:
    return f"file:///proj/{rel}"


def test_test_file_changes_need_confirmation() -> None:
    edit = build_workspace_edit([SOURCE, TEST], uri_of, {uri_of("calc.py"): 4}, VSCODE, "fixloop: fix t")
    source, test = edit.document_changes
    assert source.text_document.version == 4 and test.text_document.version is None
    assert edit.change_annotations[source.edits[0].annotation_id].needs_confirmation is False
    assert edit.change_annotations[test.edits[0].annotation_id].needs_confirmation is True


def test_documentchanges_without_annotation_support_are_plain_text_edits() -> None:
    caps = EditCapabilities(apply_edit=True, document_changes=True)
    edit = build_workspace_edit([SOURCE], uri_of, {}, caps, "l")
    (change,) = edit.document_changes
    assert edit.change_annotations is None
    assert all(type(e) is types.TextEdit for e in change.edits)


def test_plain_changes_for_clients_without_documentchanges() -> None:
    edit = build_workspace_edit([SOURCE], uri_of, {uri_of("calc.py"): 4}, NEOVIM, "l")
    assert edit.document_changes is None and list(edit.changes) == [uri_of("calc.py")]


def test_new_files_need_resource_operations() -> None:
    new = FileChange("helpers.py", None, "x = 1\n")
    edit = build_workspace_edit([new], uri_of, {}, VSCODE, "l")
    create, content = edit.document_changes
    assert isinstance(create, types.CreateFile) and content.edits[0].new_text == "x = 1\n"
    with pytest.raises(UnsupportedEdit, match=r"creates helpers\.py"):
        build_workspace_edit([new], uri_of, {}, NEOVIM, "l")
