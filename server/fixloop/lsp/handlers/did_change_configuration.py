"""workspace/didChangeConfiguration: take pushed settings, or pull them when the client only signals."""

from __future__ import annotations

from lsprotocol import types

from fixloop.lsp.client_settings import pull_configuration, report_settings
from fixloop.lsp.server import FixloopServer
from fixloop.lsp.settings import SECTION, unwrap

METHOD = types.WORKSPACE_DID_CHANGE_CONFIGURATION


async def handle(ls: FixloopServer, params: types.DidChangeConfigurationParams) -> None:
    pushed = params.settings
    if isinstance(pushed, dict) and SECTION in pushed:
        ls.settings.client_config = unwrap(pushed)
        ls.settings.folder_config.clear()  # asked again per folder when next used
        ls.settings.asked.clear()
    else:
        await pull_configuration(ls)
    report_settings(ls)
