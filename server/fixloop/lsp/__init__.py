"""The language server face: `serve()` runs fixloop over LSP on stdio with stdout kept for JSON-RPC."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from fixloop.lsp.server import FixloopServer

__all__ = ["serve"]


def serve(
    stdin: BinaryIO | None = None, stdout: BinaryIO | None = None, server: FixloopServer | None = None
) -> int:
    """Run the language server until the client says exit; returns the process exit code.

    With no `stdout` given, fd 1 is duplicated for the RPC channel and then pointed at stderr, so a
    stray print or a child process that inherits fd 1 cannot corrupt the JSON-RPC stream.
    """
    from fixloop.lsp.features import create_server
    from fixloop.lsp.stdout_guard import guard_stdout

    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("pygls", "httpx", "httpx2", "httpcore", "openai"):  # per-message/per-request INFO lines
        logging.getLogger(noisy).setLevel(logging.WARNING)
    rpc_out = stdout if stdout is not None else guard_stdout()
    rpc_in = stdin if stdin is not None else sys.stdin.buffer
    server = server or create_server()
    server.start_io(rpc_in, rpc_out)
    return 0
