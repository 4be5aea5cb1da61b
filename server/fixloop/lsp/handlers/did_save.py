"""textDocument/didSave: with runTestsOnSave, re-run a saved test file (debounced) and refresh diagnostics."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from fixloop.errors import FixloopError
from fixloop.lsp.diagnostic_runs import run_and_publish
from fixloop.lsp.documents import path_of, relpath, root_of
from fixloop.lsp.server import FixloopServer
from fixloop.project import is_test_path

METHOD = types.TEXT_DOCUMENT_DID_SAVE
OPTIONS = types.SaveOptions(include_text=False)
SAVE_DEBOUNCE = 0.5  # seconds: a burst of saves (format-on-save, save-all) runs the tests once


def handle(ls: FixloopServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    try:
        path = path_of(uri)
        root = root_of(ls, path)
    except FixloopError:
        return
    rel = relpath(root, path)
    if not is_test_path(rel) or not rel.endswith(".py"):
        return
    settings, _ = ls.settings.resolve(root)
    if not settings.run_tests_on_save:
        return
    if (pending := ls.save_timers.pop(uri, None)) is not None:
        pending.cancel()

    def fire() -> None:
        ls.save_timers.pop(uri, None)
        ls.spawn(run_and_publish(ls, root, [rel], [rel]), name=f"run tests on save {rel}")

    ls.save_timers[uri] = asyncio.get_running_loop().call_later(SAVE_DEBOUNCE, fire)
