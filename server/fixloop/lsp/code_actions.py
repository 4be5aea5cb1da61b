"""Code actions: a quickfix on fixloop diagnostics and "Fix this test" on the test under the cursor."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from lsprotocol import types

from fixloop.errors import FixloopError
from fixloop.lsp.commands import FIX_FAILING_TEST
from fixloop.lsp.diagnostics import CODE, SOURCE
from fixloop.lsp.server import FixloopServer
from fixloop.lsp.targets import path_of, root_of, test_id_under_cursor

log = logging.getLogger(__name__)

FIX_THIS_TEST = types.CodeActionKind.RefactorRewrite


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP kind matching: `only: ["refactor"]` admits "refactor.rewrite"."""
    if not only:
        return True
    return any(kind == prefix or kind.startswith(prefix + ".") for prefix in map(str, only))


def fix_command(test_id: str, uri: str) -> types.Command:
    """The fixFailingTest call for one test; the uri picks the workspace folder in a multi-root setup."""
    return types.Command(title=f"Fix {test_id} with fixloop", command=FIX_FAILING_TEST,
                         arguments=[{"testId": test_id, "uri": uri}])


def register(server: FixloopServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_THIS_TEST]))
    def code_action(ls: FixloopServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        only = [str(getattr(k, "value", k)) for k in params.context.only] if params.context.only else None
        actions: list[types.CodeAction] = []
        offered: set[str] = set()
        doc = params.text_document.uri
        if wanted(types.CodeActionKind.QuickFix.value, only):
            for diagnostic in params.context.diagnostics:
                data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
                test_id = data.get("testId")
                if diagnostic.source != SOURCE or diagnostic.code != CODE or not isinstance(test_id, str):
                    continue
                if test_id in offered:
                    continue
                offered.add(test_id)
                actions.append(types.CodeAction(
                    title="Fix failing test with fixloop", kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], is_preferred=True, command=fix_command(test_id, doc)))
        if wanted(FIX_THIS_TEST.value, only):
            try:
                path = path_of(doc)
                root = root_of(ls, path)
                test_id = test_id_under_cursor(ls, root, path, doc, params.range.start.line)
            except (FixloopError, ImportError, SyntaxError, ValueError):
                return actions
            if test_id not in offered:
                actions.append(types.CodeAction(
                    title="Fix this test with fixloop", kind=FIX_THIS_TEST,
                    command=fix_command(test_id, doc)))
        return actions
