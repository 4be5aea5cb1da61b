"""The client's settings: asking for the `fixloop` section of each workspace folder, and telling the user
once about bad values."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lsprotocol import types
from pygls.capabilities import get_capability

from fixloop.config import Settings
from fixloop.lsp.documents import uri_of, workspace_roots
from fixloop.lsp.server import FixloopServer
from fixloop.lsp.settings import CONFIGURATION_WAIT, SECTION, unwrap

log = logging.getLogger(__name__)


async def pull_configuration(ls: FixloopServer, roots: list[Path] | None = None) -> None:
    """Ask for the `fixloop` section of each workspace folder (one item per folder, with its scopeUri)
    when the client declares workspace/configuration; all folders unless `roots` are named."""
    if not get_capability(ls.client_capabilities, "workspace.configuration", False):
        return
    roots = workspace_roots(ls) if roots is None else roots
    items = [types.ConfigurationItem(section=SECTION, scope_uri=uri_of(root, "")) for root in roots]
    ls.settings.asked.update(roots)
    try:
        request = types.ConfigurationParams(items=items or [types.ConfigurationItem(section=SECTION)])
        async with asyncio.timeout(CONFIGURATION_WAIT):
            answer = await asyncio.shield(ls.workspace_configuration_async(request))
    except Exception as error:
        log.warning("workspace/configuration failed: %s", error)
        return
    if not answer:
        return
    if not roots:
        ls.settings.client_config = unwrap(answer[0])
    for root, value in zip(roots, answer, strict=False):
        ls.settings.folder_config[root] = unwrap(value)


async def folder_settings(
    ls: FixloopServer, root: Path, project: Path | None = None
) -> tuple[Settings, list[str]]:
    """The settings of workspace folder `root` (asked of the client the first time a folder added later
    is used), and the errors not shown before."""
    await ls.settings.ready()
    if root not in ls.settings.asked and root in workspace_roots(ls):
        await pull_configuration(ls, [root])
    return ls.settings.resolve(root, project)


def report_settings(ls: FixloopServer) -> None:
    """Show each bad setting once (the default is used in its place)."""
    for root in workspace_roots(ls):
        _, errors = ls.settings.resolve(root)
        for error in errors:
            ls.show(f"fixloop: {error} (using the default)", types.MessageType.Warning)
