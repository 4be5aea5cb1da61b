"""The closed set of events the engine emits; every face (LSP, CLI, transcript, bench) consumes them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fixloop.result import FixStatus


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


Event = ThoughtDelta | Thought | Action | Observation | Verdict | Usage | Notice | Done

EVENT_NAMES: dict[type, str] = {
    ThoughtDelta: "thought_delta",
    Thought: "thought",
    Action: "action",
    Observation: "observation",
    Verdict: "verdict",
    Usage: "usage",
    Notice: "notice",
    Done: "done",
}


def event_name(event: Event) -> str:
    return EVENT_NAMES[type(event)]
