"""The server's commands: their ids (public API) and the fix command as code actions and lenses offer it."""

from __future__ import annotations

from lsprotocol import types

FIX_FAILING_TEST = "fixloop.server.fixFailingTest"
RUN_TESTS = "fixloop.server.runTests"
CANCEL = "fixloop.server.cancel"
TRY_ANOTHER_FIX = "fixloop.server.tryAnotherFix"
ALL = (FIX_FAILING_TEST, RUN_TESTS, CANCEL, TRY_ANOTHER_FIX)


def fix_command(test_id: str, uri: str, title: str | None = None, root: str | None = None) -> types.Command:
    """The fixFailingTest call for one test; `root` (the workspace folder's URI) and the uri pick the folder
    in a multi-root setup."""
    arguments = {"testId": test_id, "uri": uri, **({"root": root} if root else {})}
    return types.Command(
        title=title or f"Fix {test_id} with fixloop", command=FIX_FAILING_TEST, arguments=[arguments]
    )
