"""fixloop.server.cancel: stop one running fix by run id, or all of them."""

from __future__ import annotations

from typing import Any

from fixloop.lsp.commands import CANCEL
from fixloop.lsp.server import FixloopServer

COMMAND = CANCEL


def handle(ls: FixloopServer, *args: Any) -> dict[str, Any]:
    raw = args[0] if args else {}
    run_id = raw.get("runId") if isinstance(raw, dict) else None
    if run_id is not None and not isinstance(run_id, str):
        run_id = str(run_id)
    cancelled = ls.runs.cancel(run_id)
    if run_id is not None and not cancelled:
        return {"status": "error", "cancelled": [], "summary": f"no fix with run id {run_id} is running"}
    return {"status": "ok", "cancelled": cancelled}
