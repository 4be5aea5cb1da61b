"""The client's settings: asking for the `fixloop` section, and telling the user once about bad values."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.capabilities import get_capability

from fixloop.lsp.documents import workspace_roots
from fixloop.lsp.server import FixloopServer
from fixloop.lsp.settings import SECTION, unwrap

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
    """Show each bad setting once (the default is used in its place)."""
    for root in workspace_roots(ls)[:1]:
        _, errors = ls.settings.resolve(root)
        for error in errors:
            ls.show(f"fixloop: {error} (using the default)", types.MessageType.Warning)
