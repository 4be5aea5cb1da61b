"""Watching one reply stream: prose to show, a line per call as it starts, and where to close the stream.

The stream is closed once the model has written its calls and moved on (`CallScanner`), when a native
call is followed by more text, or when the prose before any call starts echoing the prompt's context.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping

from fixloop.agent.echo import EchoIndex
from fixloop.agent.text_calls.loose_json import JsonScan
from fixloop.agent.text_calls.stream import CallScanner
from fixloop.events import call_target
from fixloop.model.replies import StreamCut

TARGETS = {
    "read_file": "path",
    "edit_file": "path",
    "write_file": "path",
    "search": "pattern",
    "replace_function": "path",
}
_STRING = r"""\s*:\s*(?:"((?:[^"\\\n]|\\.)*)"|'([^'\\\n]*)')"""


class ReplyWatch:
    """A `model.client.StreamWatch` for one turn.

    `on_prose(text)` gets the reply's prose as it becomes certain it is not part of a call;
    `on_calling(tool, target)` once for each call, as soon as its tool (and target) can be read.
    With `read_text` false (native calls only) calls written into the text are neither looked for
    nor hidden. With `echo` set, prose that repeats the indexed context ends the stream ("echo").
    """

    def __init__(
        self,
        tool_names: Collection[str],
        *,
        on_prose: Callable[[str], None],
        on_calling: Callable[[str, str], None],
        single_arg: Mapping[str, str] | None = None,
        read_text: bool = True,
        echo: EchoIndex | None = None,
    ) -> None:
        self.scanner = CallScanner(tool_names, single_arg) if read_text else None
        self.on_prose = on_prose
        self.on_calling = on_calling
        self.echo = echo.reader() if echo is not None else None
        self.text = ""
        self.shown = 0
        self._announced: dict[int, int] = {}  # call start -> calls announced there
        self._native: dict[int, tuple[str, JsonScan]] = {}  # index -> (tool, its arguments' reading)
        self._native_announced: set[int] = set()

    # ---- StreamWatch ----------------------------------------------------------------------------

    def on_text(self, delta: str) -> StreamCut | None:
        before = len(self.text)
        self.text += delta
        if self._native_done() and delta.strip():
            return StreamCut(before, "call")
        if self.scanner is None:
            return self._show(len(self.text))
        moved_on = self.scanner.feed(delta)
        cut = self._show(self.scanner.prose_end())
        if cut is not None and not self.scanner.spans:
            return cut
        self._announce()
        return StreamCut(self.scanner.keep, "call") if moved_on else None

    def on_call(self, index: int, name: str, arguments: str) -> StreamCut | None:
        _, scan = self._native.get(index) or ("", JsonScan(len(arguments) - len(arguments.lstrip())))
        self._native[index] = (name, scan)
        closed = (scan.advance(arguments) or 0) > 0
        if name and index not in self._native_announced:
            target = _text_target(name, arguments)
            if closed or target is not None:
                self._native_announced.add(index)
                self.on_calling(name, target or "")
        return None

    # ---- helpers --------------------------------------------------------------------------------

    def _native_done(self) -> bool:
        calls = self._native.values()
        return bool(calls) and all(name and (scan.end or 0) > 0 for name, scan in calls)

    def _show(self, upto: int) -> StreamCut | None:
        """Pass on the prose up to `upto`; an echo found in it ends the stream where the echo began."""
        if upto <= self.shown:
            return None
        prose = self.text[self.shown : upto]
        self.shown = upto
        if self.echo is not None:
            at = self.echo.feed(prose)
            if at is not None:
                return StreamCut(at, "echo")
        self.on_prose(prose)
        return None

    def _announce(self) -> None:
        scanner = self.scanner
        assert scanner is not None
        for span in scanner.spans:
            done = self._announced.get(span.start, 0)
            for call in span.calls[done:]:
                self.on_calling(call.name, call_target(call.name, call.arguments))
            self._announced[span.start] = len(span.calls)
        opening = scanner.open_call()
        if opening is None or scanner.open_start in self._announced:
            return
        tool, written = opening
        target = _text_target(tool, written)
        if target is not None:
            assert scanner.open_start is not None
            self._announced[scanner.open_start] = 1
            self.on_calling(tool, target)


def _text_target(tool: str, written: str) -> str | None:
    """The target of a call still being written, once it can be read ("" for tools without one)."""
    key = TARGETS.get(tool)
    if key is None:
        return None  # optional targets (run_tests, list_files) are known only when the call is complete
    m = re.search(rf"""["']{key}["']{_STRING}""", written[:2000])  # a target comes early, if at all
    if m is None:
        return None
    return (m.group(1) if m.group(1) is not None else m.group(2)).replace("\\\\", "\\")
