"""The proven change as one WorkspaceEdit, shaped by what the client can take (the one place that decides)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability

from fixloop.errors import FixloopError
from fixloop.project import is_test_path
from fixloop.result import FileChange

SOURCE_ANNOTATION = "fixloop.source"
TEST_ANNOTATION = "fixloop.test"


class UnsupportedEdit(FixloopError):
    """The client cannot take this change (e.g. it creates a file and the client cannot)."""


@dataclass(frozen=True)
class EditCapabilities:
    """What the client declared about workspace edits."""

    apply_edit: bool = False
    document_changes: bool = False
    change_annotations: bool = False
    resource_operations: frozenset[str] = frozenset()
    show_message_actions: bool = True

    @classmethod
    def of(cls, caps: types.ClientCapabilities) -> EditCapabilities:
        ops = get_capability(caps, "workspace.workspace_edit.resource_operations", None) or []
        return cls(
            apply_edit=bool(get_capability(caps, "workspace.apply_edit", False)),
            document_changes=bool(get_capability(caps, "workspace.workspace_edit.document_changes", False)),
            change_annotations=get_capability(
                caps, "workspace.workspace_edit.change_annotation_support", None) is not None,
            resource_operations=frozenset(str(getattr(op, "value", op)) for op in ops),
        )

    @property
    def annotated(self) -> bool:
        """Whether the client can show (and ask to confirm) annotated changes."""
        return self.document_changes and self.change_annotations


def _end_position(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)


def text_edits(old: str, new: str) -> list[types.TextEdit]:
    """Minimal edits from the engine's differ; one whole-text replacement if it is unavailable."""
    try:
        from fixloop.edits import text_edits as minimal
    except ImportError:
        minimal = None
    if minimal is not None:
        return list(minimal(old, new))
    if old == new:
        return []
    start = types.Position(line=0, character=0)
    return [types.TextEdit(range=types.Range(start=start, end=_end_position(old)), new_text=new)]


def build_workspace_edit(
    changes: Sequence[FileChange],
    uri_of: Callable[[str], str],
    versions: Mapping[str, int],
    caps: EditCapabilities,
    label: str,
    is_test: Callable[[str], bool] = is_test_path,
) -> types.WorkspaceEdit:
    """documentChanges (versioned for open buffers, annotated when supported) or plain `changes`."""
    if not caps.document_changes:
        plain: dict[str, list[types.TextEdit]] = {}
        for change in changes:
            if change.old_text is None or change.new_text is None:
                raise UnsupportedEdit(
                    f"the fix {'creates' if change.old_text is None else 'deletes'} {change.path}, "
                    "which this client cannot apply (no documentChanges support)")
            plain[uri_of(change.path)] = text_edits(change.old_text, change.new_text)
        return types.WorkspaceEdit(changes=plain)

    document_changes: list[Any] = []
    used: set[str] = set()

    def edits_for(change: FileChange, old: str, new: str) -> list[Any]:
        edits = text_edits(old, new)
        if not caps.annotated:
            return edits
        annotation = TEST_ANNOTATION if is_test(change.path) else SOURCE_ANNOTATION
        used.add(annotation)
        return [types.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=annotation)
                for e in edits]

    for change in changes:
        uri = uri_of(change.path)
        if change.old_text is None:
            if "create" not in caps.resource_operations:
                raise UnsupportedEdit(f"the fix creates {change.path}, which this client cannot do")
            document_changes.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(
                overwrite=False, ignore_if_exists=True)))
            document_changes.append(types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=edits_for(change, "", change.new_text or "")))
        elif change.new_text is None:
            if "delete" not in caps.resource_operations:
                raise UnsupportedEdit(f"the fix deletes {change.path}, which this client cannot do")
            document_changes.append(types.DeleteFile(uri=uri))
        else:
            document_changes.append(types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=versions.get(uri)),
                edits=edits_for(change, change.old_text, change.new_text)))

    annotations: dict[str, types.ChangeAnnotation] | None = None
    if caps.annotated:
        catalog = {
            SOURCE_ANNOTATION: types.ChangeAnnotation(
                label=label, needs_confirmation=False,
                description="Proven by fixloop: the test passes with it"),
            TEST_ANNOTATION: types.ChangeAnnotation(
                label=f"{label} (changes a test file)", needs_confirmation=True,
                description="This fix changes a test file: review it before applying"),
        }
        annotations = {key: value for key, value in catalog.items() if key in used}
    return types.WorkspaceEdit(document_changes=document_changes, change_annotations=annotations)


def file_uri(root: Path) -> Callable[[str], str]:
    from fixloop.lsp.targets import uri_of

    return lambda rel: uri_of(root, rel)
