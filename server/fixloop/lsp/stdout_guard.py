"""Keep stdout for JSON-RPC only: everything else that writes to fd 1 lands on stderr."""

from __future__ import annotations

import os
import sys
from typing import BinaryIO


def guard_stdout() -> BinaryIO:
    """Return a private binary stream on the original fd 1 and redirect fd 1 (and sys.stdout) to stderr.

    VS Code's reader drops the connection on any byte that is not JSON-RPC framing; a pytest child
    that inherited fd 1 or a stray print would do exactly that (lsp-facts §0.8).
    """
    sys.stdout.flush()
    rpc_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(rpc_fd, "wb")
