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
        return _plain_edit(changes, uri_of)
    edits = _DocumentEdits(caps, is_test)
    document_changes = [step for change in changes for step in edits.steps(change, uri_of, versions)]
    annotations = _annotations(label, edits.used) if caps.annotated else None
    return types.WorkspaceEdit(document_changes=document_changes, change_annotations=annotations)


def _plain_edit(changes: Sequence[FileChange], uri_of: Callable[[str], str]) -> types.WorkspaceEdit:
    """`changes` by URI, for a client without documentChanges: it can neither create nor delete a file."""
    plain: dict[str, list[types.TextEdit]] = {}
    for change in changes:
        if change.old_text is None or change.new_text is None:
            raise UnsupportedEdit(
                f"the fix {'creates' if change.old_text is None else 'deletes'} {change.path}, "
                "which this client cannot apply (no documentChanges support)"
            )
        plain[uri_of(change.path)] = text_edits(change.old_text, change.new_text)
    return types.WorkspaceEdit(changes=plain)


DocumentChange = types.TextDocumentEdit | types.CreateFile | types.DeleteFile


class _DocumentEdits:
    """Each file change as documentChanges steps; `used` collects the annotations they carry."""

    def __init__(self, caps: EditCapabilities, is_test: Callable[[str], bool]) -> None:
        self.caps, self.is_test = caps, is_test
        self.used: set[str] = set()

    def steps(
        self, change: FileChange, uri_of: Callable[[str], str], versions: Mapping[str, int]
    ) -> list[DocumentChange]:
        uri, operations = uri_of(change.path), self.caps.resource_operations
        if change.old_text is None:
            if "create" not in operations:
                raise UnsupportedEdit(f"the fix creates {change.path}, which this client cannot do")
            create = types.CreateFile(
                uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)
            )
            return [create, self._edit(change, uri, None, "")]
        if change.new_text is None:
            if "delete" not in operations:
                raise UnsupportedEdit(f"the fix deletes {change.path}, which this client cannot do")
            return [types.DeleteFile(uri=uri)]
        return [self._edit(change, uri, versions.get(uri), change.old_text)]

    def _edit(self, change: FileChange, uri: str, version: int | None, old: str) -> types.TextDocumentEdit:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.TextDocumentEdit(text_document=document, edits=self._text_edits(change, old))

    def _text_edits(self, change: FileChange, old: str) -> list[types.TextEdit | types.AnnotatedTextEdit]:
        edits = text_edits(old, change.new_text or "")
        if not self.caps.annotated:
            return list(edits)
        annotation = TEST_ANNOTATION if self.is_test(change.path) else SOURCE_ANNOTATION
        self.used.add(annotation)
        return [
            types.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=annotation)
            for e in edits
        ]


def _annotations(label: str, used: set[str]) -> dict[str, types.ChangeAnnotation]:
    """The change annotations the edits use: a source change applies at once, a test change asks first."""
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
    return {key: value for key, value in catalog.items() if key in used}


def file_uri(root: Path) -> Callable[[str], str]:
    return lambda rel: uri_of(root, rel)
