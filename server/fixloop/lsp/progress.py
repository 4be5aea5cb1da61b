"""Work-done progress for one fix: token lifecycle, cancel hook, and engine events as short lines."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from fixloop.events import (
    Action,
    Calling,
    Done,
    Event,
    Notice,
    Observation,
    Reply,
    Thought,
    ThoughtDelta,
    Usage,
    Verdict,
    action_line,
    call_target,
)

log = logging.getLogger(__name__)

LINE = 100  # characters in one progress message; VS Code's status bar and Neovim's statusline are narrow


def one_line(text: str, limit: int = LINE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def short_line(event: Event) -> str | None:
    """The one-line progress message for an event, or None for events not worth a report."""
    match event:
        case Thought(text=text):
            return one_line(text) if text.strip() else None
        case Calling(tool=tool, target=target):
            return one_line(action_line(tool, target))
        case Action(tool=tool, arguments=arguments):
            return one_line(action_line(tool, call_target(tool, arguments)))
        case Observation(tool=tool, text=text, is_error=is_error):
            first = next((line for line in text.splitlines() if line.strip()), "(empty)")
            return one_line(f"{'✗' if is_error else '←'} {tool}: {first}")
        case Verdict(accepted=True):
            return "✓ verified: the target passes and nothing else broke"
        case Verdict(accepted=False, reasons=reasons):
            return one_line(f"✗ rejected: {'; '.join(reasons) or 'verification failed'}")
        case Notice(text=text):
            return one_line(text)
    return None


def trace_line(event: Event) -> str | None:
    """The full trace line for window/logMessage (deltas and usage are folded into their turn)."""
    match event:
        case ThoughtDelta() | Calling() | Usage() | Reply():
            return None
        case Thought(text=text, step=step):
            return f"[step {step}] thought: {text.strip()}"
        case Action(tool=tool, arguments=arguments, step=step):
            return f"[step {step}] action: {tool} {json.dumps(arguments, ensure_ascii=False)}"
        case Observation(tool=tool, text=text, is_error=is_error, step=step):
            return f"[step {step}] observation{' (error)' if is_error else ''} from {tool}:\n{text}"
        case Verdict(accepted=accepted, reasons=reasons, attempt=attempt, step=step):
            verdict = "accepted" if accepted else "rejected: " + "; ".join(reasons)
            return f"[step {step}] verdict (attempt {attempt}): {verdict}"
        case Notice(text=text, step=step, kind=kind):
            return f"[step {step}] {kind}: {text}"
        case Done(status=status, summary=summary, step=step):
            return f"[step {step}] done: {status}. {summary}"
    return None


class FixProgress:
    """One work-done progress: the client's token or a server-created one, or nothing when unsupported."""

    def __init__(self, ls: LanguageServer, token: types.ProgressToken | None, max_steps: int) -> None:
        self.ls = ls
        self.token = token
        self.max_steps = max(1, max_steps)
        self.percentage = 0
        self.ended = False

    @classmethod
    async def open(
        cls,
        ls: LanguageServer,
        client_token: types.ProgressToken | None,
        title: str,
        message: str,
        max_steps: int,
    ) -> FixProgress:
        token = client_token
        if token is None and get_capability(ls.client_capabilities, "window.work_done_progress", False):
            token = f"fixloop-{uuid.uuid4().hex[:12]}"
            try:
                # Shielded: cancelling this task while it awaits a client reply breaks pygls 2.1.1 (#621).
                await asyncio.shield(ls.work_done_progress.create_async(token))
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the client refused; carry on without progress
                log.warning("window/workDoneProgress/create failed: %s", error)
                token = None
        progress = cls(ls, token, max_steps)
        if token is not None:
            ls.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(title=title, cancellable=True, message=message, percentage=0),
            )
        return progress

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the event loop when the client sends window/workDoneProgress/cancel."""
        if self.token is None:
            return
        future = self.ls.work_done_progress.tokens.get(self.token)
        if future is None:
            return
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda f: loop.call_soon_threadsafe(callback) if f.cancelled() else None)

    def report(self, message: str, step: int | None = None) -> None:
        if self.token is None or self.ended:
            return
        if step is not None:
            # Monotonic and below 100 until the end: VS Code ignores reports without a percentage
            # once begin had one (lsp-facts §1.6), so every report carries one.
            self.percentage = max(self.percentage, min(99, step * 100 // self.max_steps))
        self.ls.work_done_progress.report(
            self.token,
            types.WorkDoneProgressReport(message=message, percentage=self.percentage, cancellable=True),
        )

    def end(self, message: str) -> None:
        if self.token is None or self.ended:
            return
        self.ended = True
        self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=one_line(message, 200)))
        self.ls.work_done_progress.tokens.pop(self.token, None)
