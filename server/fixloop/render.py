"""The CLI's live view: the engine's events as short lines on stderr, thoughts streamed as they arrive.

A call shows as one line (`→ edit_file mathutils.py`) as soon as the model starts writing it, never its
JSON; the transcript keeps the arguments.
"""

from __future__ import annotations

import re

from rich.console import Console
from rich.markup import escape as escape_markup

from fixloop.events import (
    Action,
    Calling,
    Event,
    Notice,
    Observation,
    Thought,
    ThoughtDelta,
    Verdict,
    action_line,
    call_target,
)
from fixloop.result import FixResult

# What the model or a test prints must not drive the user's terminal: escape sequences and control
# characters are dropped from every line shown (tabs and newlines stay).
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape(text: str) -> str:
    """`text` safe for the terminal and for rich's markup."""
    return escape_markup(_CONTROL.sub("", _ANSI.sub("", text)))


def one_line(text: str, width: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


class LiveView:
    """Renders events to stderr with rich; deltas stream inline, everything else is one line each."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)
        self._streaming_step: int | None = None
        self._streamed: set[int] = set()
        self._announced: list[tuple[int, str]] = []  # (step, line) shown for calls still being written
        self._held = ""  # a streamed thought's trailing line breaks, shown only if more text follows

    def _end_stream(self) -> None:
        if self._streaming_step is not None:
            self.console.print()
            self._streaming_step = None
            self._held = ""

    def _stream(self, delta: ThoughtDelta) -> None:
        """A piece of a streamed thought, on its step's line; trailing newlines are held back until more
        text follows, so a step's line ends where its thought does."""
        if self._streaming_step != delta.step:
            self._end_stream()
            self.console.print(f"[bold cyan]step {delta.step}[/] ", end="")
            self._streaming_step = delta.step
            self._streamed.add(delta.step)
        text = self._held + delta.text
        shown = text.rstrip("\n")
        self._held = text[len(shown) :]
        if shown:
            self.console.print(f"[dim]{escape(shown)}[/]", end="")

    def show(self, event: Event) -> None:
        c = self.console
        if isinstance(event, ThoughtDelta):
            self._stream(event)
            return
        self._end_stream()
        if isinstance(event, Thought):
            if event.step not in self._streamed:
                c.print(f"[bold cyan]step {event.step}[/] [dim]{escape(one_line(event.text, 400))}[/]")
        elif isinstance(event, Calling):
            line = action_line(event.tool, event.target)
            self._announced.append((event.step, line))
            c.print(f"  [yellow]{escape(one_line(line))}[/]")
        elif isinstance(event, Action):
            line = action_line(event.tool, call_target(event.tool, event.arguments))
            if (event.step, line) in self._announced:  # already shown while it was being written
                self._announced.remove((event.step, line))
            else:
                c.print(f"  [yellow]{escape(one_line(line))}[/]")
        elif isinstance(event, Observation):
            style = "red" if event.is_error else "green"
            first = next((line for line in event.text.splitlines() if line.strip()), "(empty)")
            c.print(f"  [{style}]← {escape(one_line(first, 200))}[/]")
        elif isinstance(event, Verdict):
            if event.accepted:
                c.print(f"[bold green]✓ verified (attempt {event.attempt})[/]")
            else:
                c.print(
                    f"[bold red]✗ rejected (attempt {event.attempt}):[/] {escape('; '.join(event.reasons))}"
                )
        elif isinstance(event, Notice):
            c.print(f"[magenta]· {escape(event.text)}[/]")
        # Usage and Done are summed up once by finish()

    def finish(self, result: FixResult) -> None:
        self._end_stream()
        colour = "green" if result.status == "fixed" else "red"
        files = f", {len(result.files)} file(s) changed" if result.files else ""
        self.console.print(
            f"[bold {colour}]{result.status}[/] in {result.steps} step(s){files}, "
            f"{result.prompt_tokens + result.completion_tokens} tokens, {result.seconds:.1f} s — "
            f"{escape(one_line(result.summary, 200))}"
        )
        if result.transcript:
            self.console.print(f"[dim]transcript: {escape(result.transcript)}[/]")
