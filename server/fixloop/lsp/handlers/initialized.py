"""initialized: ask for the client's settings, then tell the user once about any bad value."""

from __future__ import annotations

from lsprotocol import types

from fixloop.lsp.client_settings import pull_configuration, report_settings
from fixloop.lsp.server import FixloopServer

METHOD = types.INITIALIZED


async def handle(ls: FixloopServer, params: types.InitializedParams) -> None:
    try:
        await pull_configuration(ls)
    finally:
        ls.settings.client_settings_loaded()
    report_settings(ls)
