"""The closed set of events the engine emits; every face (LSP, CLI, transcript, bench) consumes them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fixloop.result import FixStatus

TARGET_KEYS = {
    "read_file": "path",
    "edit_file": "path",
    "write_file": "path",
    "list_files": "path",
    "replace_function": "path",
    "search": "pattern",
    "run_tests": "test_ids",
}


@dataclass(frozen=True)
class ThoughtDelta:
    """A streamed piece of the model's text as it arrives."""

    text: str
    step: int


@dataclass(frozen=True)
class Thought:
    """The model's whole reasoning text for one turn."""

    text: str
    step: int


@dataclass(frozen=True)
class Calling:
    """The model has begun writing a call to `tool` (acting on `target`); its Action follows when complete."""

    tool: str
    target: str
    step: int


@dataclass(frozen=True)
class Reply:
    """The model's whole text for one turn as it came: `unused` arrived after the part kept (the stream
    was closed there; `cut` says why: "call" or "echo"), kept so the transcript holds everything."""

    text: str
    unused: str
    cut: str | None
    step: int


@dataclass(frozen=True)
class Action:
    """A tool call the model made."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    step: int


@dataclass(frozen=True)
class Observation:
    """What a tool returned (errors included), as the model will see it."""

    call_id: str
    tool: str
    text: str
    is_error: bool
    step: int


@dataclass(frozen=True)
class Verdict:
    """The verification gate's answer to a submit."""

    accepted: bool
    reasons: tuple[str, ...]
    attempt: int
    step: int


@dataclass(frozen=True)
class Usage:
    """Token usage of one model turn, with running totals."""

    prompt_tokens: int
    completion_tokens: int
    total_prompt_tokens: int
    total_completion_tokens: int
    step: int
    estimated: bool = False  # counted by fixloop: the server reported none (or the stream was cut)
    unused_tokens: int = 0  # generated after the part kept, before the server stopped sending


@dataclass(frozen=True)
class Notice:
    """Something the engine did or decided (baseline, protocol switch, nudge, budget)."""

    text: str
    step: int = 0
    kind: str = "info"


@dataclass(frozen=True)
class Done:
    """The run is over, and how."""

    status: FixStatus
    summary: str
    step: int
    extra: dict[str, Any] = field(default_factory=dict)


Event = ThoughtDelta | Thought | Calling | Action | Observation | Verdict | Usage | Reply | Notice | Done

EVENT_NAMES: dict[type, str] = {
    ThoughtDelta: "thought_delta",
    Thought: "thought",
    Calling: "calling",
    Action: "action",
    Observation: "observation",
    Verdict: "verdict",
    Usage: "usage",
    Reply: "reply",
    Notice: "notice",
    Done: "done",
}


def event_name(event: Event) -> str:
    return EVENT_NAMES[type(event)]


def call_target(tool: str, arguments: Mapping[str, Any] | str) -> str:
    """What a call acts on, for one-line progress: the path, the search pattern or the test ids."""
    if not isinstance(arguments, Mapping):
        return ""
    value = arguments.get(TARGET_KEYS.get(tool, ""))
    if isinstance(value, list):
        return ", ".join(str(item) for item in value[:3]) + (", …" if len(value) > 3 else "")
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""


def action_line(tool: str, target: str) -> str:
    """`→ edit_file mathutils.py`: a call as the progress shows it (the transcript keeps the arguments)."""
    return f"→ {tool} {target}".rstrip()
