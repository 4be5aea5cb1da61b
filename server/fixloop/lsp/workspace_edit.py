"""The proven change as one WorkspaceEdit, shaped by what the client can take (the one place that decides)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.capabilities import get_capability

from fixloop.edits import text_edits
from fixloop.lsp.documents import uri_of
from fixloop.lsp.errors import UnsupportedEdit
from fixloop.project import is_test_path
from fixloop.result import FileChange

SOURCE_ANNOTATION = "fixloop.source"
TEST_ANNOTATION = "fixloop.test"


@dataclass(frozen=True)
class EditCapabilities:
    """What the client declared about workspace edits."""

    apply_edit: bool = False
    document_changes: bool = False
    change_annotations: bool = False
    resource_operations: frozenset[str] = frozenset()
    window: bool = False  # declares any window capability: it shows the server's messages

    @classmethod
    def of(cls, caps: types.ClientCapabilities) -> EditCapabilities:
        ops = get_capability(caps, "workspace.workspace_edit.resource_operations", None) or []
        return cls(
            apply_edit=bool(get_capability(caps, "workspace.apply_edit", False)),
            document_changes=bool(get_capability(caps, "workspace.workspace_edit.document_changes", False)),
            change_annotations=get_capability(
                caps, "workspace.workspace_edit.change_annotation_support", None
            )
            is not None,
            resource_operations=frozenset(str(getattr(op, "value", op)) for op in ops),
            window=caps.window is not None,
        )

    @property
    def can_take_a_fix(self) -> bool:
        """Whether a fix can reach the user: applied as an edit, or shown as a diff in a message.

        A client that declares neither `workspace.applyEdit` nor any `window` capability (showMessage,
        showDocument, workDoneProgress) has no way to do either: a fix is refused before the run starts.
        """
        return self.apply_edit or self.window

    @property
    def annotated(self) -> bool:
        """Whether the client can show (and ask to confirm) annotated changes."""
        return self.document_changes and self.change_annotations


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
                    "which this client cannot apply (no documentChanges support)"
                )
            plain[uri_of(change.path)] = text_edits(change.old_text, change.new_text)
        return types.WorkspaceEdit(changes=plain)

    document_changes: list[types.TextDocumentEdit | types.CreateFile | types.DeleteFile] = []
    used: set[str] = set()

    def edits_for(change: FileChange, old: str, new: str) -> list[types.TextEdit | types.AnnotatedTextEdit]:
        edits = text_edits(old, new)
        if not caps.annotated:
            return edits
        annotation = TEST_ANNOTATION if is_test(change.path) else SOURCE_ANNOTATION
        used.add(annotation)
        return [
            types.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=annotation)
            for e in edits
        ]

    for change in changes:
        uri = uri_of(change.path)
        if change.old_text is None:
            if "create" not in caps.resource_operations:
                raise UnsupportedEdit(f"the fix creates {change.path}, which this client cannot do")
            document_changes.append(
                types.CreateFile(
                    uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
                )
            )
            document_changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                    edits=edits_for(change, "", change.new_text or ""),
                )
            )
        elif change.new_text is None:
            if "delete" not in caps.resource_operations:
                raise UnsupportedEdit(f"the fix deletes {change.path}, which this client cannot do")
            document_changes.append(types.DeleteFile(uri=uri))
        else:
            document_changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=versions.get(uri)
                    ),
                    edits=edits_for(change, change.old_text, change.new_text),
                )
            )

    annotations: dict[str, types.ChangeAnnotation] | None = None
    if caps.annotated:
        catalog = {
            SOURCE_ANNOTATION: types.ChangeAnnotation(
                label=label,
                needs_confirmation=False,
                description="Proven by fixloop: the test passes with it",
            ),
            TEST_ANNOTATION: types.ChangeAnnotation(
                label=f"{label} (changes a test file)",
                needs_confirmation=True,
                description="This fix changes a test file: review it before applying",
            ),
        }
        annotations = {key: value for key, value in catalog.items() if key in used}
    return types.WorkspaceEdit(document_changes=document_changes, change_annotations=annotations)


def file_uri(root: Path) -> Callable[[str], str]:
    return lambda rel: uri_of(root, rel)
