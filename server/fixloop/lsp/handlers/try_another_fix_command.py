"""fixloop.server.tryAnotherFix: go on with a run whose proposed fix the user rejected, without that fix."""

from __future__ import annotations

import asyncio
from typing import Any

from fixloop.lsp.commands import TRY_ANOTHER_FIX
from fixloop.lsp.errors import BadArguments, error_result
from fixloop.lsp.fix_session import FixSession
from fixloop.lsp.server import EXECUTE_PARAMS, FixloopServer

COMMAND = TRY_ANOTHER_FIX


async def handle(ls: FixloopServer, *args: Any) -> dict[str, Any]:
    raw = args[0] if args else None
    run_id = raw.get("runId") if isinstance(raw, dict) else None
    reason = raw.get("reason", "") if isinstance(raw, dict) else ""
    try:
        if not isinstance(run_id, str) or not run_id or not isinstance(reason, str | None):
            raise BadArguments('tryAnotherFix takes {"runId": "<the rejected run>", "reason"?: "<why>"}')
        again = ls.kept_runs.get(run_id)
    except BadArguments as error:
        ls.show_result(f"fixloop: {error.message}")
        return error_result(error)
    params = EXECUTE_PARAMS.get()
    session = FixSession(
        ls,
        asyncio.current_task(),
        params.work_done_token if params else None,
        again=again,
        reason=reason or "",
    )
    with ls.requests.track(ls.protocol.msg_id, session.cancel):
        return await session.run(args)
