"""Every handler registered from one place: the LSP methods and the commands the server answers."""

from __future__ import annotations

from fixloop.lsp.handlers import (
    cancel_command,
    code_action,
    code_lens,
    did_change_configuration,
    did_save,
    fix_failing_test_command,
    initialize,
    initialized,
    run_tests_command,
    try_another_fix_command,
)
from fixloop.lsp.server import FixloopServer, RunFactory

METHODS = (initialize, initialized, did_change_configuration, did_save, code_action, code_lens)
COMMANDS = (fix_failing_test_command, run_tests_command, cancel_command, try_another_fix_command)


def create_server(run_factory: RunFactory | None = None) -> FixloopServer:
    """A FixloopServer with every feature registered; `run_factory` replaces the engine's FixRun."""
    server = FixloopServer(run_factory=run_factory)
    for handler in METHODS:
        server.feature(handler.METHOD, getattr(handler, "OPTIONS", None))(handler.handle)
    for command in COMMANDS:
        server.command(command.COMMAND)(command.handle)
    return server
