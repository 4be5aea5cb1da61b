"""The server's commands (ids are public API) and how errors become their results.

Error policy, the same for every command: a bad request or configuration never becomes a JSON-RPC
error. The command returns its normal result shape with `"status": "error"`, a one-line `summary`
and `error: {kind, message}`, and the user sees the same line via window/showMessage. JSON-RPC errors
are left to the protocol itself (-32602 for an unknown command, -32800 after $/cancelRequest).
"""

from __future__ import annotations

from typing import Any

from fixloop.errors import FixloopError
from fixloop.lsp.server import FixloopServer

FIX_FAILING_TEST = "fixloop.server.fixFailingTest"
RUN_TESTS = "fixloop.server.runTests"
CANCEL = "fixloop.server.cancel"


def error_json(error: FixloopError) -> dict[str, Any]:
    return {"status": "error", "summary": error.message,
            "error": {"kind": type(error).__name__, "message": error.message}}


def register(server: FixloopServer) -> None:
    from fixloop.lsp import fix_command

    @server.command(FIX_FAILING_TEST)
    async def fix_failing_test(ls: FixloopServer, *args: Any) -> dict[str, Any]:
        return await fix_command.fix_failing_test(ls, args)

    @server.command(CANCEL)
    def cancel(ls: FixloopServer, *args: Any) -> dict[str, Any]:
        raw = args[0] if args else {}
        run_id = raw.get("runId") if isinstance(raw, dict) else None
        if run_id is not None and not isinstance(run_id, str):
            run_id = str(run_id)
        cancelled = ls.runs.cancel(run_id)
        if run_id is not None and not cancelled:
            return {"status": "error", "cancelled": [], "summary": f"no fix with run id {run_id} is running"}
        return {"status": "ok", "cancelled": cancelled}
