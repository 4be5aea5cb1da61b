"""FixloopServer: the pygls server holding all per-session state, and the protocol subclass it needs.

Handlers live one per file under `lsp/handlers/` and are registered in one place, `lsp/features.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from fixloop import __version__
from fixloop.config import Settings
from fixloop.events import Event
from fixloop.lsp.diagnostics import FailureStore
from fixloop.lsp.kept_runs import KeptRuns
from fixloop.lsp.runs import RunRegistry
from fixloop.lsp.settings import SettingsState
from fixloop.result import FixResult

if TYPE_CHECKING:  # only for the annotation: the engine loads at server start (initialized.py)
    from fixloop.engine import FixRequest

log = logging.getLogger(__name__)

# The ExecuteCommandParams of the request being handled: pygls passes only the arguments to a command
# handler, so the client's workDoneToken is reachable only through this (lsp-facts §1.6). The command's
# Task copies the context when it is created, so each command sees its own params.
EXECUTE_PARAMS: contextvars.ContextVar[types.ExecuteCommandParams | None] = contextvars.ContextVar(
    "fixloop_execute_params", default=None
)


class FixRunLike(Protocol):
    """What the server needs of `fixloop.engine.FixRun`."""

    run_id: str

    async def execute(self) -> FixResult: ...

    def cancelled_result(self) -> FixResult: ...


RunFactory = Callable[["FixRequest", Settings, Callable[[Event], None]], FixRunLike]


class RequestTasks:
    """JSON-RPC request id -> how to cancel the work serving it, so `$/cancelRequest` really stops it."""

    def __init__(self) -> None:
        self._tasks: dict[Any, Callable[[], None]] = {}
        self._cancelled_early: set[Any] = set()

    @contextlib.contextmanager
    def track(self, msg_id: Any, cancel: Callable[[], None]) -> Iterator[None]:
        if msg_id is None:
            yield
            return
        if msg_id in self._cancelled_early:
            self._cancelled_early.discard(msg_id)
            cancel()
        self._tasks[msg_id] = cancel
        try:
            yield
        finally:
            self._tasks.pop(msg_id, None)

    def cancel(self, msg_id: Any) -> bool:
        cancel = self._tasks.pop(msg_id, None)
        if cancel is None:
            # The cancel can overtake the request's task start (pygls issue #517); remember it briefly.
            self._cancelled_early.add(msg_id)
            if len(self._cancelled_early) > 100:
                self._cancelled_early.pop()
            return False
        cancel()
        return True


class FixloopProtocol(LanguageServerProtocol):
    """Captures ExecuteCommandParams (for workDoneToken) and turns $/cancelRequest into Task.cancel()."""

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(self, params: types.ExecuteCommandParams) -> Any:
        EXECUTE_PARAMS.set(params)
        return (yield from super().lsp_workspace__execute_command(params))

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Any:
        """pygls' shutdown, over a snapshot of the pending requests: cancelling one runs its callback (which
        removes it), and worker threads add and finish requests meanwhile (`dictionary changed size`)."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        server = self._server
        if isinstance(server, FixloopServer):
            server.requests.cancel(msg_id)
        super()._handle_cancel_notification(msg_id)


def shows_results(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether the client declared `experimental: {"fixloop": {"showsResults": true}}`: it shows each
    command's answer (the FixResult, the test summary) itself, so our window/showMessage would repeat it."""
    experimental = capabilities.experimental if capabilities is not None else None
    ours = experimental.get("fixloop") if isinstance(experimental, dict) else None
    return isinstance(ours, dict) and ours.get("showsResults") is True


class FixloopServer(LanguageServer):
    """The fixloop language server; every piece of session state lives on this object."""

    def __init__(self, run_factory: RunFactory | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("protocol_cls", FixloopProtocol)
        kwargs.setdefault("max_workers", 4)
        super().__init__("fixloop", __version__, **kwargs)
        self.run_factory = run_factory
        self.requests = RequestTasks()
        self.runs = RunRegistry()
        self.kept_runs = KeptRuns()  # runs that proposed a fix, for "try another fix"
        self.settings = SettingsState()
        self.failures = FailureStore()
        self.background: set[asyncio.Task[Any]] = set()
        self.save_timers: dict[str, asyncio.TimerHandle] = {}

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run `coro` in the background, keeping a strong reference and logging its failure."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.background.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self.background.discard(finished)
            if not finished.cancelled() and (error := finished.exception()) is not None:
                log.error("%s failed: %s", name, error, exc_info=error)

        task.add_done_callback(done)
        return task

    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def show_result(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """How a command ended, said once: by us, unless the client shows the answers it gets itself."""
        if not shows_results(self.client_capabilities):
            self.show(message, kind)

    def trace(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would pop "Error in server: …" for every notification-handler failure; log it instead
        # and tell the user only about things they can act on.
        log.error("%s: %s", getattr(source, "__name__", source), error)
