"""The language server's errors and how every command turns one into its result (the one place that decides).

Error policy, the same for every command: a bad request or configuration never becomes a JSON-RPC error.
The command returns its normal result shape with `"status": "error"`, a one-line `summary` and
`error: {kind, message}`, and the user sees the same line via window/showMessage (unless the client declared
`experimental.fixloop.showsResults` and shows the answer itself). JSON-RPC errors are left to the protocol
itself (-32602 for an unknown command, -32800 after $/cancelRequest).
"""

from __future__ import annotations

from typing import Any

from fixloop.errors import FixloopError
from fixloop.result import FixError


class BadArguments(FixloopError):
    """The command's arguments do not have the documented shape."""


class AlreadyRunning(FixloopError):
    """A fix for one of these tests is already running."""


class UnsupportedEdit(FixloopError):
    """The client cannot take this change (e.g. it creates a file and the client cannot)."""


class UnsupportedClient(FixloopError):
    """The client can neither apply a fix nor show it: running one would only waste the user's time."""


def error_detail(error: FixloopError) -> FixError:
    """The `error` of a command result: the exception's kind and its one-line message."""
    return FixError(type(error).__name__, error.message)


def error_result(error: FixloopError) -> dict[str, Any]:
    """A (non-fix) command's whole answer for an error that ends it before it did anything."""
    return {
        "status": "error",
        "summary": error.message,
        "error": {"kind": type(error).__name__, "message": error.message},
    }
