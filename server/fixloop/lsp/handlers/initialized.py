"""initialized: ask for the client's settings, tell the user once about any bad value, and get a local
model ready (started and its prompt cache warm) while the user is still reading code."""

from __future__ import annotations

from lsprotocol import types

from fixloop.engine import prepare_model
from fixloop.lsp.client_settings import pull_configuration, report_settings
from fixloop.lsp.documents import workspace_roots
from fixloop.lsp.server import FixloopServer

METHOD = types.INITIALIZED


async def handle(ls: FixloopServer, params: types.InitializedParams) -> None:
    try:
        await pull_configuration(ls)
    finally:
        ls.settings.client_settings_loaded()
    report_settings(ls)
    for root in workspace_roots(ls)[:1]:
        settings, _ = ls.settings.resolve(root)
        ls.spawn(prepare_model(settings), "preparing the model")
