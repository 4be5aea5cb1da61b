"""initialize: keep the client's initializationOptions; commands wait briefly for its configuration."""

from __future__ import annotations

from lsprotocol import types

from fixloop.lsp.server import FixloopServer
from fixloop.lsp.settings import unwrap

METHOD = types.INITIALIZE


def handle(ls: FixloopServer, params: types.InitializeParams) -> None:
    ls.settings.init_options = unwrap(params.initialization_options)
    ls.settings.expect_client_settings()
