"""fixloop.server.fixFailingTest: one FixSession per request, cancellable through $/cancelRequest."""

from __future__ import annotations

import asyncio
from typing import Any

from fixloop.lsp.commands import FIX_FAILING_TEST
from fixloop.lsp.fix_session import FixSession
from fixloop.lsp.server import EXECUTE_PARAMS, FixloopServer

COMMAND = FIX_FAILING_TEST


async def handle(ls: FixloopServer, *args: Any) -> dict[str, Any]:
    params = EXECUTE_PARAMS.get()
    session = FixSession(ls, asyncio.current_task(), params.work_done_token if params else None)
    with ls.requests.track(ls.protocol.msg_id, session.cancel):
        return await session.run(args)
