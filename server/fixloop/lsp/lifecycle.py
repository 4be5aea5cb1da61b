"""Session lifecycle: initialize, initialized, configuration changes; settings errors shown once."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.capabilities import get_capability

from fixloop.lsp.server import FixloopServer
from fixloop.lsp.settings import SECTION, unwrap
from fixloop.lsp.targets import workspace_roots

log = logging.getLogger(__name__)


async def pull_configuration(ls: FixloopServer) -> None:
    """Ask for the `fixloop` section when the client declares workspace/configuration."""
    if not get_capability(ls.client_capabilities, "workspace.configuration", False):
        return
    roots = workspace_roots(ls)
    item = types.ConfigurationItem(section=SECTION, scope_uri=roots[0].as_uri() if roots else None)
    try:
        request = types.ConfigurationParams(items=[item])
        answer = await asyncio.shield(ls.workspace_configuration_async(request))
    except Exception as error:
        log.warning("workspace/configuration failed: %s", error)
        return
    if answer:
        ls.settings.client_config = unwrap(answer[0])


def report_settings(ls: FixloopServer) -> None:
    for root in workspace_roots(ls)[:1]:
        _, errors = ls.settings.resolve(root)
        for error in errors:
            ls.show(f"fixloop: {error} (using the default)", types.MessageType.Warning)


def register(server: FixloopServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: FixloopServer, params: types.InitializeParams) -> None:
        ls.settings.init_options = unwrap(params.initialization_options)
        ls.settings.expect_client_settings()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: FixloopServer, params: types.InitializedParams) -> None:
        try:
            await pull_configuration(ls)
        finally:
            ls.settings.client_settings_loaded()
        report_settings(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: FixloopServer, params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings
        if isinstance(pushed, dict) and SECTION in pushed:
            ls.settings.client_config = unwrap(pushed)
        else:
            await pull_configuration(ls)
        report_settings(ls)
