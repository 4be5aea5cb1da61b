"""textDocument/codeAction: a quickfix on fixloop diagnostics; "Fix this test" on the test at the cursor."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from fixloop.errors import FixloopError
from fixloop.lsp.commands import fix_command
from fixloop.lsp.diagnostics import CODE, SOURCE
from fixloop.lsp.documents import path_of, root_of, uri_of
from fixloop.lsp.fix_target import test_id_under_cursor
from fixloop.lsp.server import FixloopServer

FIX_THIS_TEST = types.CodeActionKind.RefactorRewrite
METHOD = types.TEXT_DOCUMENT_CODE_ACTION
OPTIONS = types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_THIS_TEST])


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP kind matching: `only: ["refactor"]` admits "refactor.rewrite"."""
    if not only:
        return True
    return any(kind == prefix or kind.startswith(prefix + ".") for prefix in map(str, only))


def handle(ls: FixloopServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    only = [str(getattr(k, "value", k)) for k in params.context.only] if params.context.only else None
    actions: list[types.CodeAction] = []
    if wanted(types.CodeActionKind.QuickFix.value, only):
        actions += _quickfixes(ls, params)
    if wanted(FIX_THIS_TEST.value, only):
        offered = {action.command.arguments[0]["testId"] for action in actions if action.command}
        actions += _fix_this_test(ls, params, offered)
    return actions


def _folder_uri(ls: FixloopServer, doc: str) -> str | None:
    try:
        return uri_of(root_of(ls, path_of(doc)), "")
    except FixloopError:
        return None


def _quickfixes(ls: FixloopServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    actions: list[types.CodeAction] = []
    offered: set[str] = set()
    root = _folder_uri(ls, params.text_document.uri)
    for diagnostic in params.context.diagnostics:
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        test_id = data.get("testId")
        if diagnostic.source != SOURCE or diagnostic.code != CODE or not isinstance(test_id, str):
            continue
        if test_id in offered:
            continue
        offered.add(test_id)
        actions.append(
            types.CodeAction(
                title="Fix failing test with fixloop",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=True,
                command=fix_command(test_id, params.text_document.uri, root=root),
            )
        )
    return actions


def _fix_this_test(
    ls: FixloopServer, params: types.CodeActionParams, offered: set[str]
) -> list[types.CodeAction]:
    doc = params.text_document.uri
    try:
        path = path_of(doc)
        root = root_of(ls, path)
        test_id = test_id_under_cursor(ls, root, path, doc, params.range.start.line)
    except (FixloopError, ImportError, SyntaxError, ValueError):
        return []
    if test_id in offered:
        return []
    return [
        types.CodeAction(
            title="Fix this test with fixloop",
            kind=FIX_THIS_TEST,
            command=fix_command(test_id, doc, root=uri_of(root, "")),
        )
    ]
