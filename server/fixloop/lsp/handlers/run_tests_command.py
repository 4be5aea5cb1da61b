"""fixloop.server.runTests: pytest in the real project (no writes), then diagnostics; returns a summary."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from fixloop.errors import FixloopError
from fixloop.lsp.commands import RUN_TESTS
from fixloop.lsp.diagnostic_runs import parse_scope, run_and_publish
from fixloop.lsp.errors import error_result
from fixloop.lsp.server import FixloopServer

COMMAND = RUN_TESTS


async def handle(ls: FixloopServer, *args: Any) -> dict[str, Any]:
    try:
        root, test_ids, scope = parse_scope(ls, args)
        return await run_and_publish(ls, root, test_ids, scope)
    except FixloopError as error:
        ls.show_result(f"fixloop: {error.message}", types.MessageType.Error)
        return error_result(error)
